import { describe, expect, it } from "vitest";
import type { JsonObject } from "../parser/json.js";
import { createGraphState, nextActions, resumeGraph } from "./machine.js";
import type { StepOutcome } from "./machine.js";
import { drive, graph, script, statuses, wrapped } from "./test-support/drive.js";

const jsonOutput = (a: { resolvedInputs: JsonObject; stepId: string }): StepOutcome => ({
  status: "success",
  output: wrapped("result", a.resolvedInputs),
  receiptId: `rx_${a.stepId}`,
});
const failing = (): StepOutcome => ({
  status: "failure",
  reason: "exit 1",
  receiptId: "rx_failed",
});

/** The advisors graph of upstream fixtures/graphs/fanout/*.yaml, parameterised by policy. */
function advisors(group: JsonObject, financeInputs: JsonObject = { budget: "approved" }) {
  return graph({
    name: "fanout-advisors",
    owner: "runx",
    fanout: { groups: { advisors: group } },
    steps: [
      {
        id: "market",
        mode: "fanout",
        fanout_group: "advisors",
        skill: "./json-output",
        inputs: { recommendation: "go", confidence: 0.9 },
      },
      {
        id: "risk",
        mode: "fanout",
        fanout_group: "advisors",
        skill: "./json-output",
        inputs: { recommendation: "go", risk_score: 0.4 },
      },
      {
        id: "finance",
        mode: "fanout",
        fanout_group: "advisors",
        skill: "./json-output",
        inputs: financeInputs,
      },
      {
        id: "synthesize",
        skill: "./echo",
        context: { message: "market.result.data.recommendation" },
      },
    ],
  });
}

describe("fanout groups", () => {
  it("plans every branch of a group together, before the step after it", () => {
    const doc = advisors({ strategy: "all", on_branch_failure: "halt" });
    const actions = nextActions(doc, createGraphState(doc, {}));
    expect(actions.map((a) => a.kind === "execute_step" && `${a.stepId}:${a.groupId}`)).toEqual([
      "market:advisors",
      "risk:advisors",
      "finance:advisors",
    ]);
  });

  it("proceeds when every branch of an all group succeeds and records the sync point", () => {
    const doc = advisors({ strategy: "all", on_branch_failure: "halt" });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ market: jsonOutput, risk: jsonOutput, finance: jsonOutput }),
    );
    expect(run.stop).toEqual({ kind: "complete", result: { message: "go" } });
    expect(run.state.sync).toEqual([
      {
        group_id: "advisors",
        strategy: "all",
        decision: "proceed",
        rule_fired: "all.min_success",
        reason: "3/3 branches succeeded; required 3",
        branch_count: 3,
        success_count: 3,
        failure_count: 0,
        required_successes: 3,
        branch_receipts: [
          { step_id: "market", status: "succeeded", receipt_id: "rx_market" },
          { step_id: "risk", status: "succeeded", receipt_id: "rx_risk" },
          { step_id: "finance", status: "succeeded", receipt_id: "rx_finance" },
        ],
      },
    ]);
  });

  it("seals a quorum group with one failing branch when on_branch_failure is continue", () => {
    const doc = advisors({ strategy: "quorum", min_success: 2, on_branch_failure: "continue" });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ market: jsonOutput, risk: jsonOutput, finance: failing }),
    );
    expect(run.stop).toEqual({ kind: "complete", result: { message: "go" } });
    expect(run.state.sync[0]).toMatchObject({
      decision: "proceed",
      rule_fired: "quorum.min_success",
      success_count: 2,
      failure_count: 1,
    });
    expect(statuses(run.state)).toContain("finance:failed");
  });

  it("halts an all group with a failing branch and never runs the next step", () => {
    const doc = advisors({ strategy: "all", on_branch_failure: "halt" });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ market: jsonOutput, risk: jsonOutput, finance: failing }),
    );
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "FANOUT_HALTED",
      groupId: "advisors",
      disposition: "failed",
    });
    expect(run.state.sync[0]).toMatchObject({
      decision: "halt",
      rule_fired: "branch_failure.halt",
      reason: "1/3 branches failed and on_branch_failure is halt",
    });
    expect(run.executed).not.toContain("synthesize#1");
  });

  it("halts a quorum group below min_success", () => {
    const doc = advisors({ strategy: "quorum", min_success: 2, on_branch_failure: "continue" });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ market: jsonOutput, risk: failing, finance: failing }),
    );
    expect(run.stop).toMatchObject({ kind: "fail", code: "FANOUT_HALTED" });
    expect(run.state.sync[0]).toMatchObject({
      decision: "halt",
      rule_fired: "quorum.min_success",
      required_successes: 2,
    });
  });

  it("retries a failing branch within its budget before the group is evaluated", () => {
    const doc = graph({
      name: "retrying-branch",
      fanout: { groups: { g: { strategy: "all" } } },
      steps: [
        { id: "a", fanout_group: "g", tool: "http.read" },
        { id: "b", fanout_group: "g", tool: "http.read", retry: { max_attempts: 2 } },
      ],
    });
    let calls = 0;
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ b: () => (++calls === 1 ? failing() : { status: "success", output: {} }) }),
    );
    expect(run.executed).toEqual(["a#1", "b#1", "b#2"]);
    expect(run.state.sync[0]).toMatchObject({ decision: "proceed", success_count: 2 });
  });
});

describe("fanout threshold gates", () => {
  const gated = () =>
    advisors(
      {
        strategy: "quorum",
        min_success: 2,
        on_branch_failure: "continue",
        threshold_gates: [
          { step: "risk", field: "result.data.risk_score", above: 0.8, action: "pause" },
        ],
      },
      { budget: "approved" },
    );
  const risky = script({
    market: jsonOutput,
    risk: (a) => jsonOutput({ ...a, resolvedInputs: { ...a.resolvedInputs, risk_score: 0.91 } }),
    finance: jsonOutput,
  });
  const gateId = "fanout.advisors.threshold.risk.result.data.risk_score.above";

  it("pauses for an approval gate when a branch value exceeds the threshold", () => {
    const doc = gated();
    const run = drive(doc, createGraphState(doc, {}), risky);
    expect(run.stop).toEqual({
      kind: "pause",
      requests: [
        {
          id: gateId,
          kind: "approval",
          gate: {
            id: gateId,
            reason: "risk.result.data.risk_score=0.91 exceeded 0.8",
            type: "fanout-gate",
          },
        },
      ],
    });
    expect(run.state.sync[0]).toMatchObject({
      decision: "pause",
      gate: { type: "threshold", step_id: "risk", value: 0.91, compared_to: 0.8, action: "pause" },
    });
  });

  it("proceeds after the gate is approved and records a second sync point", () => {
    const doc = gated();
    const paused = drive(doc, createGraphState(doc, {}), risky);
    const resumed = resumeGraph(doc, paused.state, {
      approvals: { [gateId]: { approved: true, actor: "human" } },
    });
    const run = drive(doc, resumed, risky);
    expect(run.executed).toEqual(["synthesize#1"]);
    expect(run.stop).toEqual({ kind: "complete", result: { message: "go" } });
    expect(run.state.sync.map((s) => s.decision)).toEqual(["pause", "proceed"]);
    expect(run.state.resolvedGates).toEqual([
      "advisors:threshold.risk.result.data.risk_score.above",
    ]);
  });

  it("declines the graph when the gate is denied", () => {
    const doc = gated();
    const paused = drive(doc, createGraphState(doc, {}), risky);
    const resumed = resumeGraph(doc, paused.state, {
      approvals: { [gateId]: { approved: false, actor: "human" } },
    });
    expect(nextActions(doc, resumed)).toMatchObject([
      { kind: "fail", code: "APPROVAL_DENIED", disposition: "declined", groupId: "advisors" },
    ]);
    expect(resumed.status).toBe("failed");
  });

  it("pauses a threshold-strategy group below its required successes instead of failing", () => {
    const doc = advisors({ strategy: "threshold", min_success: 3 });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({ market: jsonOutput, risk: jsonOutput, finance: failing }),
    );
    expect(run.stop).toMatchObject({
      kind: "pause",
      requests: [{ id: "fanout.advisors.threshold.min_success" }],
    });
    const approved = resumeGraph(doc, run.state, {
      approvals: { "fanout.advisors.threshold.min_success": { approved: true, actor: "human" } },
    });
    expect(drive(doc, approved, jsonOutput).stop.kind).toBe("complete");
    const denied = resumeGraph(doc, run.state, {
      approvals: { "fanout.advisors.threshold.min_success": { approved: false, actor: "human" } },
    });
    expect(nextActions(doc, denied)).toMatchObject([{ kind: "fail", disposition: "declined" }]);
  });

  it("escalates on conflicting branch values", () => {
    const doc = advisors({
      strategy: "all",
      conflict_gates: [
        { field: "result.data.recommendation", steps: ["market", "risk"], action: "escalate" },
      ],
    });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({
        market: jsonOutput,
        risk: (a) => jsonOutput({ ...a, resolvedInputs: { recommendation: "stop" } }),
        finance: jsonOutput,
      }),
    );
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "FANOUT_ESCALATED",
      disposition: "blocked",
    });
    expect(run.state.sync[0]).toMatchObject({
      decision: "escalate",
      rule_fired: "conflict.result.data.recommendation",
    });
  });
});
