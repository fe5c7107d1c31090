/**
 * Operator management through the router (the console's /operators page): listing, adding,
 * disabling and changing roles, for every role, and refusals in plain words.
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
import { createCallerFactory } from "./trpc.js";

let fx: ApiFixture;
let events: ApiEvents;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  events = new ApiEvents();
});
afterEach(() => fx.cleanup());

function caller(operator: Operator | null) {
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator,
    ...requestContext(),
    setSession: () => undefined,
  });
}

const add = (username: string, role: Operator["role"]) =>
  fx.runtime.console.operators.add({ username, role, password: PASSWORD });

/** The refusal of a call: tRPC code, message, and the runtime code and path it carries. */
async function refusal(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    const e = error as TRPCError;
    const cause = e.cause as { code?: string; details?: { path?: string } } | undefined;
    return {
      code: e.code,
      message: e.message,
      runtimeCode: cause?.code,
      path: cause?.details?.path,
    };
  }
  throw new Error("expected a refusal");
}

describe("auth.setOperatorRole", () => {
  it("refuses the signed-out with UNAUTHORIZED and viewers and approvers with FORBIDDEN", async () => {
    await add("ada", "admin");
    const target = await add("grace", "viewer");
    expect(
      (await refusal(caller(null).auth.setOperatorRole({ username: "grace", role: "admin" }))).code,
    ).toBe("UNAUTHORIZED");
    for (const role of ["viewer", "approver"] as const) {
      const op = await add(`a-${role}`, role);
      const refused = await refusal(
        caller(op).auth.setOperatorRole({ username: "grace", role: "admin" }),
      );
      expect(refused).toMatchObject({
        code: "FORBIDDEN",
        message: `this needs the admin role (you are ${role})`,
      });
      // Not even their own role.
      expect(
        (await refusal(caller(op).auth.setOperatorRole({ username: op.username, role: "admin" })))
          .code,
      ).toBe("FORBIDDEN");
    }
    expect((await fx.runtime.console.operators.list()).find((o) => o.id === target.id)?.role).toBe(
      "viewer",
    );
  });

  it("lets an admin change a role, effective on the operator's next request", async () => {
    const ada = await add("ada", "admin");
    const grace = await add("grace", "viewer");
    const changed = await caller(ada).auth.setOperatorRole({ username: "grace", role: "approver" });
    expect(changed).toMatchObject({ username: "grace", role: "approver", disabled: false });
    // Her open session resolves to the new role: she may now start runs.
    const session = await fx.runtime.console.operators.openSession(grace.id, 60);
    const now = await fx.runtime.console.operators.sessionOperator(session.id, grace.id);
    expect(now.role).toBe("approver");
    const started = await caller(now).runs.start({
      skill: "skills/echo",
      inputs: { message: "hi" },
    });
    expect(started).toMatchObject({ state: "settled" });
    await caller(ada).auth.setOperatorRole({ username: "grace", role: "viewer" });
    const demoted = await fx.runtime.console.operators.sessionOperator(session.id, grace.id);
    expect(
      (
        await refusal(
          caller(demoted).runs.start({ skill: "skills/echo", inputs: { message: "x" } }),
        )
      ).code,
    ).toBe("FORBIDDEN");
  });

  it("refuses to demote the last enabled admin, in words", async () => {
    const ada = await add("ada", "admin");
    expect(
      await refusal(caller(ada).auth.setOperatorRole({ username: "ada", role: "approver" })),
    ).toMatchObject({
      code: "CONFLICT",
      runtimeCode: "LAST_ADMIN",
      message:
        "ada is the last enabled admin and keeps the admin role; add or enable another admin first",
    });
    expect((await fx.runtime.console.operators.list())[0]?.role).toBe("admin");
  });

  it("names an unknown operator and a role that does not exist, once each", async () => {
    const ada = await add("ada", "admin");
    expect(
      await refusal(caller(ada).auth.setOperatorRole({ username: "nobody", role: "viewer" })),
    ).toMatchObject({
      code: "NOT_FOUND",
      message: "there is no operator named nobody",
      path: "username",
    });
    expect(
      await refusal(caller(ada).auth.setOperatorRole({ username: "ada", role: "owner" as never })),
    ).toMatchObject({
      code: "BAD_REQUEST",
      runtimeCode: "INPUT_INVALID",
      message: "role must be one of viewer, approver, admin",
      path: "role",
    });
  });
});

describe("operator management", () => {
  it("lists operators with role, state and latest sign-in for admins only", async () => {
    const ada = await add("ada", "admin");
    const victor = await add("victor", "viewer");
    await caller(null).auth.login({ username: "ada", password: PASSWORD });
    const listed = await caller(ada).auth.listOperators();
    expect(listed).toEqual([
      expect.objectContaining({
        username: "ada",
        role: "admin",
        disabled: false,
        lastSignInAt: expect.any(String),
      }),
      expect.objectContaining({ username: "victor", role: "viewer", lastSignInAt: null }),
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/hash|salt/i);
    expect((await refusal(caller(victor).auth.listOperators())).code).toBe("FORBIDDEN");
    expect((await refusal(caller(null).auth.listOperators())).code).toBe("UNAUTHORIZED");
  });

  it("refuses a weak password and an unknown field in plain words, naming the field once", async () => {
    const ada = await add("ada", "admin");
    const short = await refusal(
      caller(ada).auth.addOperator({ username: "grace", role: "approver", password: "short" }),
    );
    expect(short).toEqual({
      code: "BAD_REQUEST",
      runtimeCode: "INPUT_INVALID",
      message: "password must be at least 12 characters",
      path: "password",
    });
    expect(short.message).not.toContain("short");
    const unknown = await refusal(
      caller(ada).auth.addOperator({
        username: "grace",
        role: "approver",
        password: PASSWORD,
        admin: true,
      } as never),
    );
    expect(unknown.message).toBe(
      "admin is not a field this accepts (it accepts username, role, password)",
    );
    expect((await fx.runtime.console.operators.list()).map((o) => o.username)).toEqual(["ada"]);
  });
});
