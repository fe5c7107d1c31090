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

function caller(operator: Operator | null, cookies: Array<unknown> = []) {
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator,
    ...requestContext(),
    setSession: (s) => cookies.push(s),
  });
}

async function as(role: Operator["role"], username: string = role) {
  return fx.runtime.console.operators.add({ username, role, password: PASSWORD });
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return (error as TRPCError).code;
  }
  return "OK";
}

const RUN = "run_console_0000000000000000";

/** Every procedure with a valid-shaped input and the least role it needs. */
const PROCEDURES: Array<{
  name: string;
  role: Operator["role"];
  call: (c: ReturnType<typeof caller>) => Promise<unknown>;
}> = [
  { name: "auth.me", role: "viewer", call: (c) => c.auth.me() },
  { name: "auth.createToken", role: "viewer", call: (c) => c.auth.createToken({ name: "ci" }) },
  { name: "auth.listTokens", role: "viewer", call: (c) => c.auth.listTokens({}) },
  {
    name: "auth.revokeToken",
    role: "viewer",
    call: (c) => c.auth.revokeToken({ tokenId: "tok_0000000000000000" }),
  },
  {
    name: "auth.addOperator",
    role: "admin",
    call: (c) => c.auth.addOperator({ username: "new", role: "viewer", password: PASSWORD }),
  },
  { name: "auth.listOperators", role: "admin", call: (c) => c.auth.listOperators() },
  {
    name: "auth.setOperatorDisabled",
    role: "admin",
    call: (c) => c.auth.setOperatorDisabled({ username: "viewer", disabled: false }),
  },
  {
    name: "auth.setOperatorRole",
    role: "admin",
    call: (c) => c.auth.setOperatorRole({ username: "viewer", role: "viewer" }),
  },
  { name: "runs.list", role: "viewer", call: (c) => c.runs.list({}) },
  {
    name: "runs.list (outcome, skill search, waiting for me)",
    role: "viewer",
    call: (c) => c.runs.list({ outcome: "declined", skillSearch: "gated", waitingForMe: true }),
  },
  { name: "runs.get", role: "viewer", call: (c) => c.runs.get({ runId: RUN }) },
  { name: "runs.timeline", role: "viewer", call: (c) => c.runs.timeline({ runId: RUN }) },
  {
    name: "runs.start",
    role: "approver",
    call: (c) => c.runs.start({ skill: "skills/echo", inputs: { message: "hi" } }),
  },
  {
    name: "runs.answer",
    role: "approver",
    call: (c) => c.runs.answer({ runId: RUN, answers: { x: {} } }),
  },
  { name: "approvals.pending", role: "viewer", call: (c) => c.approvals.pending() },
  {
    name: "approvals.decide",
    role: "approver",
    call: (c) => c.approvals.decide({ runId: RUN, gateId: "g", decision: "approve", reason: "ok" }),
  },
  {
    name: "approvals.setPolicy",
    role: "admin",
    call: (c) =>
      c.approvals.setPolicy({
        skill: "*",
        gateId: "*",
        requiredApprovals: 1,
        forbidInitiator: true,
      }),
  },
  { name: "receipts.dag", role: "viewer", call: (c) => c.receipts.dag({ runId: RUN }) },
  { name: "receipts.bundle", role: "viewer", call: (c) => c.receipts.bundle({ runId: RUN }) },
  {
    name: "receipts.get",
    role: "viewer",
    call: (c) => c.receipts.get({ receiptId: `sha256:${"0".repeat(64)}` }),
  },
  {
    name: "receipts.verify",
    role: "viewer",
    call: (c) => c.receipts.verify({ receiptId: `sha256:${"0".repeat(64)}` }),
  },
  { name: "skills.search", role: "viewer", call: (c) => c.skills.search({}) },
  { name: "data.status", role: "viewer", call: (c) => c.data.status() },
  { name: "runs.resume", role: "approver", call: (c) => c.runs.resume({ runId: RUN }) },
  { name: "skills.get", role: "viewer", call: (c) => c.skills.get({ skill: "skills/echo" }) },
  { name: "data.sources", role: "viewer", call: (c) => c.data.sources() },
  {
    name: "data.tail",
    role: "viewer",
    call: (c) => c.data.tail({ source: "local://api-test", resource: "orders", aggregateId: "o1" }),
  },
  { name: "adapters.attempts", role: "viewer", call: (c) => c.adapters.attempts({ runId: RUN }) },
  { name: "adapters.cancel", role: "approver", call: (c) => c.adapters.cancel({ runId: RUN }) },
];

const BELOW: Record<Operator["role"], Operator["role"] | null> = {
  viewer: null,
  approver: "viewer",
  admin: "approver",
};

describe("authorization", () => {
  it.each(PROCEDURES)("$name refuses an unauthenticated caller with UNAUTHORIZED", async (p) => {
    expect(await code(p.call(caller(null)))).toBe("UNAUTHORIZED");
  });

  it.each(PROCEDURES.filter((p) => BELOW[p.role] !== null))(
    "$name refuses a role below $role with FORBIDDEN",
    async (p) => {
      const op = await as(BELOW[p.role]!, "lower");
      expect(await code(p.call(caller(op)))).toBe("FORBIDDEN");
    },
  );

  it.each(PROCEDURES)("$name passes authorization for its role", async (p) => {
    await as("viewer");
    const op = await as(p.role, `${p.role}-caller`);
    expect(["OK", "NOT_FOUND"]).toContain(await code(p.call(caller(op))));
  });

  it("lets a viewer see the inbox but not approve", async () => {
    const viewer = await as("viewer");
    expect(await caller(viewer).approvals.pending()).toEqual([]);
    expect(
      await code(
        caller(viewer).approvals.decide({
          runId: RUN,
          gateId: "g",
          decision: "approve",
          reason: "x",
        }),
      ),
    ).toBe("FORBIDDEN");
  });
});

describe("input validation through the runtime's JSON Schemas", () => {
  it.each([
    ["auth.login", (c: ReturnType<typeof caller>) => c.auth.login({ username: "a" } as never)],
    ["runs.list", (c: ReturnType<typeof caller>) => c.runs.list({ limit: 0 })],
    ["runs.list", (c: ReturnType<typeof caller>) => c.runs.list({ bogus: 1 } as never)],
    ["runs.list", (c: ReturnType<typeof caller>) => c.runs.list({ outcome: "sealed" as never })],
    ["runs.list", (c: ReturnType<typeof caller>) => c.runs.list({ skillSearch: "" })],
    ["runs.get", (c: ReturnType<typeof caller>) => c.runs.get({ runId: "../etc" })],
    ["runs.timeline", (c: ReturnType<typeof caller>) => c.runs.timeline({ runId: "../etc" })],
    [
      "runs.answer",
      (c: ReturnType<typeof caller>) => c.runs.answer({ runId: RUN, answers: { x: {} }, note: "" }),
    ],
    [
      "approvals.decide",
      (c: ReturnType<typeof caller>) =>
        c.approvals.decide({ runId: RUN, gateId: "g", decision: "approve", reason: "  " }),
    ],
    [
      "auth.addOperator",
      (c: ReturnType<typeof caller>) =>
        c.auth.addOperator({ username: "x", role: "root" as never, password: PASSWORD }),
    ],
    ["receipts.get", (c: ReturnType<typeof caller>) => c.receipts.get({ receiptId: "nope" })],
    [
      "receipts.verify",
      (c: ReturnType<typeof caller>) => c.receipts.verify({ receiptId: "sha256:../x" }),
    ],
    ["runs.resume", (c: ReturnType<typeof caller>) => c.runs.resume({ runId: "nope" })],
    [
      "adapters.attempts",
      (c: ReturnType<typeof caller>) => c.adapters.attempts({ runId: "run_../../etc" }),
    ],
    [
      "adapters.attempts",
      (c: ReturnType<typeof caller>) => c.adapters.attempts({ runId: RUN, extra: 1 } as never),
    ],
    ["adapters.cancel", (c: ReturnType<typeof caller>) => c.adapters.cancel({} as never)],
    ["adapters.cancel", (c: ReturnType<typeof caller>) => c.adapters.cancel({ runId: "nope" })],
    ["skills.get", (c: ReturnType<typeof caller>) => c.skills.get({ skill: "" })],
    ["skills.search", (c: ReturnType<typeof caller>) => c.skills.search({ limit: 0 })],
    [
      "data.tail",
      (c: ReturnType<typeof caller>) =>
        c.data.tail({ source: "local://x", resource: "r", aggregateId: "a", limit: 501 }),
    ],
    [
      "data.tail",
      (c: ReturnType<typeof caller>) =>
        c.data.tail({ source: "local://x", resource: "r" } as never),
    ],
  ])("%s refuses a malformed input with BAD_REQUEST", async (_name, call) => {
    const admin = await as("admin");
    expect(await code(call(caller(admin)))).toBe("BAD_REQUEST");
  });
});

describe("error mapping", () => {
  it("maps unknown runs to NOT_FOUND, a wrong password to UNAUTHORIZED, a bad cursor to BAD_REQUEST", async () => {
    const admin = await as("admin");
    const c = caller(admin);
    expect(await code(c.runs.get({ runId: RUN }))).toBe("NOT_FOUND");
    expect(await code(c.receipts.dag({ runId: RUN }))).toBe("NOT_FOUND");
    expect(await code(c.runs.list({ cursor: "garbage" }))).toBe("BAD_REQUEST");
    expect(await code(caller(null).auth.login({ username: "admin", password: "wrong" }))).toBe(
      "UNAUTHORIZED",
    );
    expect(
      await code(c.auth.addOperator({ username: "admin", role: "viewer", password: PASSWORD })),
    ).toBe("CONFLICT");
    expect(await code(c.runs.start({ skill: "skills/missing", inputs: {} }))).toBe("NOT_FOUND");
    expect(await code(c.adapters.cancel({ runId: RUN }))).toBe("NOT_FOUND");
  });

  it("signs in, runs an approval-gated skill, refuses self-approval, and seals another approver's decision", async () => {
    const cookies: unknown[] = [];
    const alice = await as("approver", "alice");
    const bob = await as("approver", "bob");
    const login = await caller(null, cookies).auth.login({ username: "alice", password: PASSWORD });
    expect(login.operator.username).toBe("alice");
    expect(cookies).toHaveLength(1);

    const started = await caller(alice).runs.start({
      skill: "skills/gated-echo",
      inputs: { message: "hi" },
    });
    expect(started).toMatchObject({ state: "settled", envelope: { status: "needs_approval" } });
    const [pending] = await caller(bob).approvals.pending();
    expect(pending).toMatchObject({ runId: started.runId, initiator: "alice", stale: false });
    const gate = { runId: started.runId, gateId: pending!.gateId };

    // Approval gates cannot be answered as agent work.
    expect(
      await code(
        caller(alice).runs.answer({ runId: started.runId, answers: { [gate.gateId]: {} } }),
      ),
    ).toBe("BAD_REQUEST");
    expect(
      await code(caller(alice).approvals.decide({ ...gate, decision: "approve", reason: "mine" })),
    ).toBe("FORBIDDEN");
    const decided = await caller(bob).approvals.decide({
      ...gate,
      decision: "approve",
      reason: "checked",
    });
    expect(decided.run).toMatchObject({ state: "settled", envelope: { status: "sealed" } });
    const dag = await caller(bob).receipts.dag({ runId: started.runId });
    expect(dag.nodes.flatMap((n) => n.approvals)).toContainEqual(
      expect.objectContaining({ approver: "bob" }),
    );
    expect(
      await code(caller(bob).approvals.decide({ ...gate, decision: "approve", reason: "again" })),
    ).toBe("NOT_FOUND");
  });
});

describe("runs.list", () => {
  it("shows a denied run as declined to every role and what waits for each signed-in operator", async () => {
    const alice = await as("approver", "alice");
    const bob = await as("approver", "bob");
    const admin = await as("admin", "ada");
    const viewer = await as("viewer", "vic");
    const waiting = await caller(alice).runs.start({
      skill: "skills/gated-echo",
      inputs: { message: "wait" },
    });
    const denied = await caller(alice).runs.start({
      skill: "skills/gated-echo",
      inputs: { message: "no" },
    });
    const [gate] = (await caller(bob).runs.get({ runId: denied.runId })).pendingApprovals;
    await caller(bob).approvals.decide({
      runId: denied.runId,
      gateId: gate!.id,
      decision: "deny",
      reason: "not this one",
    });

    for (const who of [viewer, alice, bob, admin]) {
      const page = await caller(who).runs.list({ outcome: "declined" });
      expect(page).toMatchObject({ total: 1, items: [{ id: denied.runId, initiator: "alice" }] });
    }
    const mine = async (who: Operator) =>
      (await caller(who).runs.list({ waitingForMe: true })).items.map((r) => r.id);
    // The initiator may not decide their own gate (default policy); a viewer decides nothing.
    expect(await mine(alice)).toEqual([]);
    expect(await mine(bob)).toEqual([waiting.runId]);
    expect(await mine(admin)).toEqual([waiting.runId]);
    expect(await caller(viewer).runs.list({ waitingForMe: true })).toMatchObject({
      items: [],
      total: 0,
    });
    expect(await code(caller(null).runs.list({ waitingForMe: true }))).toBe("UNAUTHORIZED");
  });
});
