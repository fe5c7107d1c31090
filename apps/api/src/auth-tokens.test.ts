/**
 * The auth procedures' server-side state through the router: sessions end on logout and on
 * disable, API tokens are listed and revoked per role, the last enabled admin stays, and
 * bootstrap guessing is throttled.
 */
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import type { Operator } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiEvents } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import { appRouter } from "./router.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD, requestContext } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { authThrottle } from "./throttle.js";
import { createCallerFactory } from "./trpc.js";

let fx: ApiFixture;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
});
afterEach(() => fx.cleanup());

function caller(operator: Operator | null, extra: Partial<ReturnType<typeof requestContext>> = {}) {
  const events = new ApiEvents();
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator,
    ...requestContext(),
    ...extra,
    setSession: () => undefined,
  });
}

const add = (username: string, role: Operator["role"]) =>
  fx.runtime.console.operators.add({ username, role, password: PASSWORD });

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return (error as TRPCError).code;
  }
  return "OK";
}

describe("sessions", () => {
  it("logout revokes the request's session; disabling revokes all of the operator's", async () => {
    const ops = fx.runtime.console.operators;
    const eve = await add("eve", "viewer");
    await add("root", "admin");
    const a = await ops.openSession(eve.id, 60);
    const b = await ops.openSession(eve.id, 60);
    expect((await ops.sessionOperator(a.id, eve.id)).username).toBe("eve");
    await caller(eve, { sessionId: a.id }).auth.logout();
    await expect(ops.sessionOperator(a.id, eve.id)).rejects.toThrow(/ended/);
    expect((await ops.sessionOperator(b.id, eve.id)).username).toBe("eve");
    await ops.setDisabled("eve", true);
    await ops.setDisabled("eve", false);
    await expect(ops.sessionOperator(b.id, eve.id)).rejects.toThrow(/ended/);
    // A session id is bound to its operator.
    const c = await ops.openSession(eve.id, 60);
    const other = await add("mallory", "viewer");
    await expect(ops.sessionOperator(c.id, other.id)).rejects.toThrow(/ended/);
  });
});

describe("API tokens per role", () => {
  it.each(["viewer", "approver"] as const)(
    "a %s lists and revokes only their own tokens",
    async (role) => {
      const me = await add("me", role);
      const them = await add("them", "viewer");
      const mine = await fx.runtime.console.operators.createToken(me.id, "mine");
      const theirs = await fx.runtime.console.operators.createToken(them.id, "theirs");
      expect((await caller(me).auth.listTokens({})).map((t) => t.id)).toEqual([mine.id]);
      expect(await code(caller(me).auth.listTokens({ username: "them" }))).toBe("FORBIDDEN");
      expect(await code(caller(me).auth.revokeToken({ tokenId: theirs.id }))).toBe("NOT_FOUND");
      await expect(
        fx.runtime.console.operators.authenticateToken(theirs.token),
      ).resolves.toBeDefined();
      const revoked = await caller(me).auth.revokeToken({ tokenId: mine.id });
      expect(revoked.revokedAt).not.toBeNull();
      await expect(fx.runtime.console.operators.authenticateToken(mine.token)).rejects.toThrow();
    },
  );

  it("an admin lists and revokes anyone's; anonymous callers are refused", async () => {
    const admin = await add("root", "admin");
    const them = await add("them", "viewer");
    const theirs = await fx.runtime.console.operators.createToken(them.id, "theirs");
    const listed = await caller(admin).auth.listTokens({ username: "them" });
    expect(listed).toEqual([
      expect.objectContaining({ id: theirs.id, name: "theirs", username: "them", revokedAt: null }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(theirs.token);
    expect(await code(caller(admin).auth.listTokens({ username: "nobody" }))).toBe("NOT_FOUND");
    await caller(admin).auth.revokeToken({ tokenId: theirs.id });
    await expect(fx.runtime.console.operators.authenticateToken(theirs.token)).rejects.toThrow();
    expect(await code(caller(null).auth.listTokens({}))).toBe("UNAUTHORIZED");
    expect(await code(caller(null).auth.revokeToken({ tokenId: theirs.id }))).toBe("UNAUTHORIZED");
    expect(await code(caller(admin).auth.revokeToken({ tokenId: "bad id" }))).toBe("BAD_REQUEST");
  });
});

describe("the last enabled admin", () => {
  it("cannot be disabled; with a second admin it can, and not then the second", async () => {
    const a = await add("a", "admin");
    expect(await code(caller(a).auth.setOperatorDisabled({ username: "a", disabled: true }))).toBe(
      "CONFLICT",
    );
    const b = await add("b", "admin");
    await caller(a).auth.setOperatorDisabled({ username: "a", disabled: true });
    expect(await code(caller(b).auth.setOperatorDisabled({ username: "b", disabled: true }))).toBe(
      "CONFLICT",
    );
    // A disabled admin does not count, and re-enabling is always allowed.
    await caller(b).auth.setOperatorDisabled({ username: "a", disabled: false });
    await caller(b).auth.setOperatorDisabled({ username: "b", disabled: true });
    expect(
      (await fx.runtime.console.operators.list()).filter((o) => o.role === "admin" && !o.disabled),
    ).toHaveLength(1);
  });
});

describe("bootstrap guessing", () => {
  it("is throttled per address: TOO_MANY_REQUESTS, then nothing is checked", async () => {
    const throttle = authThrottle(() => undefined);
    const c = caller(null, { throttle });
    await fx.runtime.console.operators.bootstrapToken();
    const codes: string[] = [];
    for (let i = 0; i < 22; i++) {
      codes.push(
        await code(
          c.auth.bootstrap({
            token: `guess-${String(i).padStart(16, "0")}`,
            username: "first",
            password: PASSWORD,
          }),
        ),
      );
    }
    expect(codes.slice(0, 20).every((x) => x === "UNAUTHORIZED")).toBe(true);
    expect(codes).toContain("TOO_MANY_REQUESTS");
  });
});
