import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";

let fx: ConsoleFixture;
beforeEach(() => {
  fx = consoleFixture();
});
afterEach(() => fx.cleanup());

const PASSWORD = "correct horse battery";

async function refusal(fn: () => Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await fn();
  } catch (error) {
    if (isRuntimeError(error)) return { code: error.code, message: error.located };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("operator roles", () => {
  it("changes a role; the operator's open session carries the new role from its next use", async () => {
    const ops = fx.runtime.console.operators;
    await ops.add({ username: "ada", role: "admin", password: PASSWORD });
    const grace = await ops.add({ username: "grace", role: "viewer", password: PASSWORD });
    const session = await ops.openSession(grace.id, 3600);
    const token = (await ops.createToken(grace.id, "ci")).token;
    expect((await ops.sessionOperator(session.id, grace.id)).role).toBe("viewer");

    expect(await ops.setRole("grace", "approver")).toMatchObject({
      username: "grace",
      role: "approver",
    });
    // Not ended: the same session and token now answer with the new role.
    expect((await ops.sessionOperator(session.id, grace.id)).role).toBe("approver");
    expect((await ops.authenticateToken(token)).role).toBe("approver");
    expect((await ops.list()).find((o) => o.username === "grace")?.role).toBe("approver");
  });

  it("refuses to demote the last enabled admin, and allows it once another admin exists", async () => {
    const ops = fx.runtime.console.operators;
    await ops.add({ username: "ada", role: "admin", password: PASSWORD });
    expect(await refusal(() => ops.setRole("ada", "approver"))).toEqual({
      code: "LAST_ADMIN",
      message:
        "ada is the last enabled admin and keeps the admin role; add or enable another admin first",
    });
    // Re-stating admin is no demotion.
    expect((await ops.setRole("ada", "admin")).role).toBe("admin");
    await ops.add({ username: "bob", role: "admin", password: PASSWORD });
    // A disabled admin does not count as the other admin.
    await ops.setDisabled("bob", true);
    expect((await refusal(() => ops.setRole("ada", "viewer"))).code).toBe("LAST_ADMIN");
    await ops.setDisabled("bob", false);
    expect((await ops.setRole("ada", "viewer")).role).toBe("viewer");
    expect((await refusal(() => ops.setRole("bob", "approver"))).code).toBe("LAST_ADMIN");
    expect((await refusal(() => ops.setDisabled("bob", true))).code).toBe("LAST_ADMIN");
  });

  it("names an unknown operator once, in words", async () => {
    expect(await refusal(() => fx.runtime.console.operators.setRole("nobody", "viewer"))).toEqual({
      code: "OPERATOR_NOT_FOUND",
      message: "there is no operator named nobody",
    });
  });
});

describe("operator listing", () => {
  it("shows each operator's latest sign-in, and none for one who never signed in", async () => {
    const ops = fx.runtime.console.operators;
    const ada = await ops.add({ username: "ada", role: "admin", password: PASSWORD });
    await ops.add({ username: "victor", role: "viewer", password: PASSWORD });
    const first = await ops.openSession(ada.id, 3600);
    await ops.closeSession(first.id);
    await ops.openSession(ada.id, 3600);
    const listed = await ops.list();
    expect(listed.map((o) => [o.username, o.role, o.disabled])).toEqual([
      ["ada", "admin", false],
      ["victor", "viewer", false],
    ]);
    const at = listed[0]!.lastSignInAt;
    expect(at).toEqual(expect.any(String));
    expect(Date.parse(at!)).toBeLessThanOrEqual(Date.now());
    expect(listed[1]!.lastSignInAt).toBeNull();
    expect(JSON.stringify(listed)).not.toMatch(/password|hash|salt/i);
  });
});
