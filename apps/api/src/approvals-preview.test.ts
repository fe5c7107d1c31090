/**
 * approvals.pending carries the runtime-built preview of what each gate releases, for every
 * role that may read the inbox; approvals.decide refuses an approval that is stale or whose
 * effect cannot be checked against the gate, and returns the sealed run once it is released.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
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

const PAY_YAML = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      recipient: {type: string, required: true}",
  "    graph:",
  "      name: pay",
  "      result_from: [pay]",
  "      steps:",
  "        - id: pay",
  "          tool: provider.mutate",
  "          inputs:",
  "            expected_provider: fixture",
  "            operation: payout.create",
  "            target: payouts",
  "            idempotency_key: pay-api",
  "            amount: {units: 1250, unit: usd_cents}",
  "            input:",
  "              recipient: $input.recipient",
  "              note: June invoice",
  "            approval:",
  "              reason: Pay the recipient.",
  "",
].join("\n");

let fx: ApiFixture;
let events: ApiEvents;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  fx.ws.write("skills/pay/SKILL.md", "---\nname: pay\n---\nPay after approval.\n");
  fx.ws.write("skills/pay/X.yaml", PAY_YAML);
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

/** The tRPC code and runtime code a call fails with ("OK" when it does not). */
async function failure(promise: Promise<unknown>): Promise<{ code: string; runtime?: string }> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    const cause = (error as TRPCError).cause as { code?: string } | undefined;
    return { code: (error as TRPCError).code, ...(cause?.code ? { runtime: cause.code } : {}) };
  }
  return { code: "OK" };
}

/** A payment started in the console by `initiator`, paused at its gate. */
async function startPayment(initiator: Operator) {
  const started = await caller(initiator).runs.start({
    skill: "skills/pay",
    inputs: { recipient: "acct_ada" },
  });
  expect(started).toMatchObject({ state: "settled", envelope: { status: "needs_approval" } });
  const [pending] = await caller(initiator).approvals.pending();
  return { runId: started.runId, gateId: pending!.gateId };
}

describe("approvals.pending previews", () => {
  it("gives every role that reads the inbox the checked payload and formatted amount, and nobody signed out", async () => {
    const ada = await add("ada", "admin");
    const grace = await add("grace", "approver");
    const victor = await add("victor", "viewer");
    const { runId } = await startPayment(ada);
    for (const who of [victor, grace, ada]) {
      const [pending] = await caller(who).approvals.pending();
      expect(pending).toMatchObject({
        runId,
        initiator: "ada",
        previewUnavailable: null,
        approversAvailable: 1,
        preview: {
          kind: "provider_effect",
          headline: "payout.create of $12.50 to payouts",
          amount: { units: 1250, unit: "usd_cents", text: "$12.50" },
          fields: [
            { path: "recipient", label: "Recipient", value: "acct_ada" },
            { path: "note", label: "Note", value: "June invoice" },
          ],
        },
      });
    }
    expect(await failure(caller(null).approvals.pending())).toEqual({ code: "UNAUTHORIZED" });
  });

  it("tells a lone admin's inbox that nobody else can approve the run they started", async () => {
    const ada = await add("ada", "admin");
    await add("victor", "viewer");
    await startPayment(ada);
    const [pending] = await caller(ada).approvals.pending();
    expect(pending).toMatchObject({
      approversAvailable: 0,
      policy: { requiredApprovals: 1, forbidInitiator: true },
    });
  });
});

describe("approvals.decide refusals", () => {
  it("refuses approving a stale gate for every role that may decide, and the run stays paused", async () => {
    const ada = await add("ada", "admin");
    const grace = await add("grace", "approver");
    const bob = await add("bob", "admin");
    const victor = await add("victor", "viewer");
    const gate = await startPayment(ada);
    fx.ws.write("skills/pay/X.yaml", PAY_YAML.replace("June invoice", "July invoice"));
    const [pending] = await caller(grace).approvals.pending();
    expect(pending).toMatchObject({ stale: true, preview: null });
    const approve = { ...gate, decision: "approve" as const, reason: "looks fine" };
    for (const who of [grace, bob]) {
      expect(await failure(caller(who).approvals.decide(approve))).toEqual({
        code: "CONFLICT",
        runtime: "APPROVAL_STALE",
      });
    }
    expect(await failure(caller(victor).approvals.decide(approve))).toEqual({
      code: "FORBIDDEN",
    });
    expect(await failure(caller(null).approvals.decide(approve))).toEqual({
      code: "UNAUTHORIZED",
    });
    expect((await caller(victor).runs.get({ runId: gate.runId })).run.status).toBe(
      "needs_approval",
    );
  });

  it("refuses approving a gate whose payload does not match its digest, and lets it be denied", async () => {
    const ada = await add("ada", "admin");
    const grace = await add("grace", "approver");
    const gate = await startPayment(ada);
    const db = new Database(join(fx.ws.root, ".runx", "state.sqlite"));
    const row = db.prepare("SELECT requests_json FROM runs WHERE id = ?").get(gate.runId) as {
      requests_json: string;
    };
    db.prepare("UPDATE runs SET requests_json = ? WHERE id = ?").run(
      row.requests_json.replace(
        /"payload_digest":"sha256:[0-9a-f]{64}"/,
        `"payload_digest":"sha256:${"1".repeat(64)}"`,
      ),
      gate.runId,
    );
    db.close();
    const [pending] = await caller(grace).approvals.pending();
    expect(pending!.preview).toBeNull();
    expect(pending!.previewUnavailable).toMatch(/digest/);
    expect(
      await failure(
        caller(grace).approvals.decide({ ...gate, decision: "approve", reason: "blind" }),
      ),
    ).toEqual({ code: "CONFLICT", runtime: "APPROVAL_UNVERIFIED" });
    const denied = await caller(grace).approvals.decide({
      ...gate,
      decision: "deny",
      reason: "cannot read what it sends",
    });
    expect(denied.run).toMatchObject({
      state: "settled",
      envelope: { status: "sealed", closure: { disposition: "declined" } },
    });
  });

  it("returns the sealed run with its outcome when an approval releases the payment", async () => {
    const ada = await add("ada", "admin");
    const grace = await add("grace", "approver");
    const gate = await startPayment(ada);
    const decided = await caller(grace).approvals.decide({
      ...gate,
      decision: "approve",
      reason: "invoice checked",
    });
    expect(decided).toMatchObject({
      approvals: 1,
      required: 1,
      releasable: true,
      run: { state: "settled", envelope: { status: "sealed", outcome: "completed" } },
    });
  });
});
