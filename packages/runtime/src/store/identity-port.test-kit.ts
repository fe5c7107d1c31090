/**
 * The contract suite of the identity port (./identity-port.ts): the SQLite and PostgreSQL
 * adapters run these same behaviours.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { OperatorRecord, OperatorRole } from "./console-store.js";
import type { AsyncIdentityStore } from "./identity-port.js";

/** Opens a fresh, empty store; `other` is a second handle on the same database. */
export type IdentitySubjectFactory = () => Promise<{
  store: AsyncIdentityStore;
  other: () => Promise<AsyncIdentityStore>;
  destroy(): Promise<void>;
}>;

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

const operator = (id: string, username: string, role: OperatorRole): OperatorRecord => ({
  id,
  username,
  role,
  passwordHash: "hash",
  passwordSalt: "salt",
  passwordParams: "{}",
  disabled: false,
  createdAt: "2026-01-01T00:00:00.000Z",
});

/** Registers the contract suite for one adapter. */
export function identityStoreContract(name: string, factory: IdentitySubjectFactory): void {
  describe(`identity port: ${name}`, () => {
    let subject: Awaited<ReturnType<IdentitySubjectFactory>>;
    let store: AsyncIdentityStore;
    beforeEach(async () => {
      subject = await factory();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.destroy();
    });

    it("creates, finds and lists operators in byte order; a taken username is OPERATOR_EXISTS", async () => {
      expect(await store.countOperators()).toBe(0);
      await store.insertOperator(operator("op_b", "bob", "viewer"));
      await store.insertOperator(operator("op_a", "Zed", "admin"));
      await store.insertOperator(operator("op_c", "alice", "approver"));
      expect(await store.countOperators()).toBe(3);
      // Byte order: upper case sorts before lower case.
      expect((await store.listOperators()).map((o) => o.username)).toEqual(["Zed", "alice", "bob"]);
      expect(await store.findOperatorByName("bob")).toEqual(operator("op_b", "bob", "viewer"));
      expect(await store.getOperator("op_c")).toMatchObject({ username: "alice", disabled: false });
      expect(await store.getOperator("op_missing")).toBeUndefined();
      const taken = await refusal(store.insertOperator(operator("op_d", "bob", "admin")));
      expect(taken.code).toBe("OPERATOR_EXISTS");
    });

    it("disabling revokes sessions and tokens; the last enabled admin can be neither disabled nor demoted", async () => {
      await store.insertOperator(operator("op_a", "ann", "admin"));
      await store.insertOperator(operator("op_v", "vic", "viewer"));
      await store.insertSession({
        id: "ses_1",
        operatorId: "op_v",
        createdAt: "2026-01-01T00:00:00.000Z",
        lastSeenAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2999-01-01T00:00:00.000Z",
        revokedAt: null,
      });
      await store.insertApiToken({
        id: "tok_1",
        operatorId: "op_v",
        name: "ci",
        tokenHash: "sha256:1",
        createdAt: "2026-01-01T00:00:00.000Z",
        revokedAt: null,
      });
      const disabled = await store.setOperatorDisabled("op_v", true, "2026-01-02T00:00:00.000Z");
      expect(disabled?.disabled).toBe(true);
      expect((await store.getSession("ses_1"))?.revokedAt).toBe("2026-01-02T00:00:00.000Z");
      expect(await store.findApiToken("sha256:1")).toBeUndefined();
      expect((await store.setOperatorDisabled("op_v", false, "x"))?.disabled).toBe(false);
      expect(await store.setOperatorDisabled("op_missing", true, "x")).toBeUndefined();

      expect((await refusal(store.setOperatorDisabled("op_a", true, "x"))).code).toBe("LAST_ADMIN");
      expect((await refusal(store.setOperatorRole("op_a", "viewer"))).code).toBe("LAST_ADMIN");
      expect((await store.setOperatorRole("op_v", "admin"))?.role).toBe("admin");
      expect((await store.setOperatorRole("op_a", "approver"))?.role).toBe("approver");
    });

    it("two admins disabling each other at once through two handles: exactly one succeeds", async () => {
      await store.insertOperator(operator("op_a", "ann", "admin"));
      await store.insertOperator(operator("op_b", "ben", "admin"));
      const other = await subject.other();
      const results = await Promise.allSettled([
        store.setOperatorDisabled("op_b", true, "x"),
        other.setOperatorDisabled("op_a", true, "x"),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const refused = results.find((r) => r.status === "rejected");
      expect((refused?.reason as RuntimeError).code).toBe("LAST_ADMIN");
      const enabled = (await store.listOperators()).filter((o) => !o.disabled);
      expect(enabled).toHaveLength(1);
    });

    it("API tokens: found only unrevoked, listed oldest first, revoked once", async () => {
      await store.insertOperator(operator("op_a", "ann", "admin"));
      await store.insertOperator(operator("op_b", "ben", "viewer"));
      const token = (id: string, operatorId: string, createdAt: string) => ({
        id,
        operatorId,
        name: id,
        tokenHash: `sha256:${id}`,
        createdAt,
        revokedAt: null,
      });
      await store.insertApiToken(token("tok_2", "op_a", "2026-01-02T00:00:00.000Z"));
      await store.insertApiToken(token("tok_1", "op_a", "2026-01-01T00:00:00.000Z"));
      await store.insertApiToken(token("tok_3", "op_b", "2026-01-03T00:00:00.000Z"));
      expect((await store.listApiTokens("op_a")).map((t) => t.id)).toEqual(["tok_1", "tok_2"]);
      expect((await store.listApiTokens()).map((t) => t.id)).toEqual(["tok_1", "tok_2", "tok_3"]);
      expect((await store.findApiToken("sha256:tok_2"))?.id).toBe("tok_2");
      expect((await store.revokeApiToken("tok_2", "2026-02-01T00:00:00.000Z"))?.revokedAt).toBe(
        "2026-02-01T00:00:00.000Z",
      );
      // A second revocation keeps the first time.
      expect((await store.revokeApiToken("tok_2", "2026-03-01T00:00:00.000Z"))?.revokedAt).toBe(
        "2026-02-01T00:00:00.000Z",
      );
      expect(await store.findApiToken("sha256:tok_2")).toBeUndefined();
      expect((await store.getApiToken("tok_2"))?.revokedAt).toBe("2026-02-01T00:00:00.000Z");
      expect(await store.revokeApiToken("tok_missing", "x")).toBeUndefined();
    });

    it("sessions: a new one prunes the expired, touches and revocations stick, sign-ins are per operator", async () => {
      await store.insertOperator(operator("op_a", "ann", "admin"));
      const session = (id: string, createdAt: string, expiresAt: string) => ({
        id,
        operatorId: "op_a",
        createdAt,
        lastSeenAt: createdAt,
        expiresAt,
        revokedAt: null,
      });
      await store.insertSession(
        session("ses_old", "2026-01-01T00:00:00.000Z", "2026-01-02T00:00:00.000Z"),
      );
      await store.insertSession(
        session("ses_new", "2026-01-03T00:00:00.000Z", "2026-01-04T00:00:00.000Z"),
      );
      expect(await store.getSession("ses_old")).toBeUndefined();
      await store.touchSession("ses_new", "2026-01-03T01:00:00.000Z");
      expect((await store.getSession("ses_new"))?.lastSeenAt).toBe("2026-01-03T01:00:00.000Z");
      expect((await store.lastSignIns()).get("op_a")).toBe("2026-01-03T00:00:00.000Z");
      await store.revokeSession("ses_new", "2026-01-03T02:00:00.000Z");
      await store.revokeSession("ses_new", "2026-01-03T03:00:00.000Z");
      expect((await store.getSession("ses_new"))?.revokedAt).toBe("2026-01-03T02:00:00.000Z");
    });

    it("writes through one handle are read through the other (one database)", async () => {
      const other = await subject.other();
      await store.insertOperator(operator("op_a", "ann", "admin"));
      expect((await other.findOperatorByName("ann"))?.id).toBe("op_a");
      await other.insertSession({
        id: "ses_x",
        operatorId: "op_a",
        createdAt: "2026-01-01T00:00:00.000Z",
        lastSeenAt: "2026-01-01T00:00:00.000Z",
        expiresAt: "2999-01-01T00:00:00.000Z",
        revokedAt: null,
      });
      expect((await store.getSession("ses_x"))?.operatorId).toBe("op_a");
    });
  });
}
