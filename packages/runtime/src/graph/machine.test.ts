import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { JsonValue } from "../parser/json.js";
import { applyStepOutcome, createGraphState, nextActions, resumeGraph } from "./machine.js";
import type { GraphState } from "./machine.js";
import { drive, echo, graph, script, statuses, wrapped } from "./test-support/drive.js";

const sequential = graph({
  name: "sequential-echo",
  owner: "runx",
  steps: [
    { id: "first", skill: "../../skills/json-output", inputs: { message: "hello from graph" } },
    { id: "second", skill: "../../skills/echo", context: { message: "first.result.data.message" } },
  ],
});

const wrapFirst = script({
  first: (a) => ({ status: "success", output: wrapped("result", a.resolvedInputs) }),
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error.code;
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

describe("sequential graphs", () => {
  it("runs two steps in order and feeds the first step's output to the second through context", () => {
    const run = drive(sequential, createGraphState(sequential, {}), wrapFirst);
    expect(run.executed).toEqual(["first#1", "second#1"]);
    expect(run.stop).toEqual({ kind: "complete", result: { message: "hello from graph" } });
    expect(run.state.status).toBe("completed");
    expect(statuses(run.state)).toEqual(["first:succeeded", "second:succeeded"]);
  });

  it("plans one step at a time, starting with the first", () => {
    const state = createGraphState(sequential, {}, { graphId: "gx_fixture" });
    expect(state.status).toBe("pending");
    expect(nextActions(sequential, state)).toMatchObject([
      {
        kind: "execute_step",
        stepId: "first",
        attempt: 1,
        retry: { rule_fired: "initial_attempt" },
      },
    ]);
  });

  it("passes graph inputs ambiently to skill steps but not to tool steps", () => {
    const doc = graph({
      name: "ambient",
      steps: [
        { id: "skill-step", skill: "./echo" },
        {
          id: "tool-step",
          tool: "data.compare",
          inputs: { actual: "$input.message", expected: "x" },
        },
      ],
    });
    const run = drive(doc, createGraphState(doc, { message: "hi" }), echo);
    expect(run.state.steps[0]?.output).toEqual({ message: "hi" });
    expect(run.state.steps[1]?.output).toEqual({ actual: "hi", expected: "x" });
  });

  it("fails with GRAPH_REFERENCE_MISSING naming the step when a context path is absent", () => {
    const run = drive(sequential, createGraphState(sequential, {}), echo);
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "GRAPH_REFERENCE_MISSING",
      stepId: "second",
    });
  });

  it("fails the graph when a single-attempt step fails", () => {
    const run = drive(
      sequential,
      createGraphState(sequential, {}),
      script({ first: () => ({ status: "failure", reason: "exit 1" }) }),
    );
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "STEP_FAILED",
      stepId: "first",
      disposition: "failed",
    });
    expect(run.executed).toEqual(["first#1"]);
  });

  it("skips a step whose when condition is false and keeps going", () => {
    const doc = graph({
      name: "branching",
      result_from: ["fast", "slow"],
      steps: [
        { id: "choose", tool: "data.compare", inputs: { equal: true } },
        {
          id: "fast",
          when: { field: "choose.equal", equals: true },
          run: { type: "javascript", module: "f.mjs", outputs: { lane: "string" } },
          inputs: { lane: "fast" },
        },
        {
          id: "slow",
          when: { field: "choose.equal", equals: false },
          run: { type: "javascript", module: "s.mjs", outputs: { lane: "string" } },
          inputs: { lane: "slow" },
        },
      ],
    });
    const run = drive(doc, createGraphState(doc, {}), echo);
    expect(statuses(run.state)).toEqual(["choose:succeeded", "fast:succeeded", "slow:skipped"]);
    expect(run.stop).toEqual({ kind: "complete", result: { lane: "fast" } });
  });

  it("blocks a guarded step whose policy guard does not hold", () => {
    const doc = graph({
      name: "guarded",
      policy: { transitions: [{ to: "publish", field: "review.verdict", equals: "ok" }] },
      steps: [
        { id: "review", tool: "data.compare", inputs: { verdict: "no" } },
        { id: "publish", tool: "data.compare" },
      ],
    });
    const run = drive(doc, createGraphState(doc, {}), echo);
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "GUARD_BLOCKED",
      disposition: "blocked",
      stepId: "publish",
    });
    expect(run.executed).toEqual(["review#1"]);
  });

  it("blocks a guarded step whose guard field names no step", () => {
    const doc = graph({
      name: "guarded-unresolved",
      policy: { guards: [{ step: "publish", field: "status", equals: "ok" }] },
      steps: [
        { id: "review", tool: "data.compare", inputs: { status: "ok" } },
        { id: "publish", tool: "data.compare" },
      ],
    });
    const run = drive(doc, createGraphState(doc, {}), echo);
    expect(run.stop).toMatchObject({ kind: "fail", code: "GUARD_BLOCKED", stepId: "publish" });
    expect(run.executed).toEqual(["review#1"]);
  });

  it("refuses an outcome for a step that is not awaiting execution", () => {
    const state = createGraphState(sequential, {});
    expect(codeOf(() => applyStepOutcome(sequential, state, "second", { status: "success" }))).toBe(
      "GRAPH_STATE_INVALID",
    );
  });
});

const approvalGraph = graph({
  name: "mcp-approval-graph",
  result_from: ["approve"],
  steps: [
    {
      id: "approve",
      run: { type: "approval" },
      inputs: { gate_id: "mcp-approval", reason: "Approve the MCP graph run." },
      artifacts: { wrap_as: "approval" },
    },
    { id: "apply", tool: "data.compare", mutation: true, inputs: { go: true } },
  ],
  policy: {
    guards: [{ step: "apply", field: "approve.approval_decision.data.approved", equals: true }],
  },
});

describe("approval steps", () => {
  it("pauses with an approval request named by the gate id", () => {
    const state = createGraphState(approvalGraph, {});
    expect(nextActions(approvalGraph, state)).toEqual([
      {
        kind: "pause",
        requests: [
          {
            id: "mcp-approval",
            kind: "approval",
            gate: { id: "mcp-approval", reason: "Approve the MCP graph run." },
          },
        ],
      },
    ]);
    expect(state.status).toBe("paused");
  });

  it("runs the gated steps after a human approves on resume", () => {
    const paused = createGraphState(approvalGraph, {});
    const resumed = resumeGraph(approvalGraph, paused, {
      approvals: { "mcp-approval": { approved: true, actor: "human" } },
    });
    const run = drive(approvalGraph, resumed, script({}));
    expect(run.executed).toEqual(["approve#1", "apply#1"]);
    expect(run.state.steps[0]?.output).toEqual({
      approval_decision: {
        data: {
          schema: "runx.approval.decision.v1",
          gate_id: "mcp-approval",
          approved: true,
          status: "approved",
          actor: "human",
        },
      },
    });
    expect(run.stop.kind).toBe("complete");
  });

  it("declines the graph when the human denies", () => {
    const paused = createGraphState(approvalGraph, {});
    const resumed = resumeGraph(approvalGraph, paused, {
      approvals: { "mcp-approval": { approved: false, actor: "human" } },
    });
    const run = drive(approvalGraph, resumed, script({}));
    expect(run.stop).toMatchObject({
      kind: "fail",
      code: "APPROVAL_DENIED",
      disposition: "declined",
    });
    expect(run.executed).toEqual(["approve#1"]);
  });

  it("accepts only human decisions and only for pending gates", () => {
    const paused = createGraphState(approvalGraph, {});
    expect(
      codeOf(() =>
        resumeGraph(approvalGraph, paused, {
          approvals: { "mcp-approval": { approved: true, actor: "agent" } },
        }),
      ),
    ).toBe("APPROVAL_NOT_ANSWERABLE");
    expect(
      codeOf(() =>
        resumeGraph(approvalGraph, paused, {
          approvals: { other: { approved: true, actor: "human" } },
        }),
      ),
    ).toBe("ANSWERS_INVALID");
  });

  it("refuses to resume a run that is not paused", () => {
    const state = createGraphState(sequential, {});
    expect(codeOf(() => resumeGraph(sequential, state, {}))).toBe("RESUME_REFUSED");
  });
});

describe("agent pauses", () => {
  const doc = graph({
    name: "agent",
    steps: [
      {
        id: "review",
        run: { type: "agent-task", agent: "codex", task: "review", outputs: { verdict: "string" } },
      },
    ],
  });

  it("pauses with the step's requests and re-runs the same attempt after resume", () => {
    let answered = false;
    const executor = script({
      review: () =>
        answered
          ? { status: "success", output: { verdict: "ok" } }
          : {
              status: "needs_agent",
              requests: [{ id: "agent_task.review.output", kind: "agent_act", invocation: {} }],
            },
    });
    const first = drive(doc, createGraphState(doc, {}), executor);
    expect(first.stop).toMatchObject({
      kind: "pause",
      requests: [{ id: "agent_task.review.output" }],
    });
    answered = true;
    const second = drive(doc, resumeGraph(doc, first.state), executor);
    expect(second.executed).toEqual(["review#1"]);
    expect(second.stop).toEqual({ kind: "complete", result: { verdict: "ok" } });
    expect(second.state.steps[0]?.history.map((h) => h.status)).toEqual(["needs_agent", "success"]);
  });
});

describe("checkpointing", () => {
  it("continues identically from a JSON round trip of the state taken mid-run", () => {
    const direct = drive(sequential, createGraphState(sequential, {}), wrapFirst);
    const start = createGraphState(sequential, {});
    const planned = nextActions(sequential, start)[0];
    if (planned?.kind !== "execute_step") throw new Error("expected an execution");
    const afterFirst = applyStepOutcome(sequential, start, "first", wrapFirst(planned, start));
    const restored = JSON.parse(JSON.stringify(afterFirst)) as GraphState;
    expect(restored).toEqual(afterFirst);
    const resumed = drive(sequential, restored, wrapFirst);
    expect(resumed.stop).toEqual(direct.stop);
    expect(resumed.state).toEqual(direct.state);
  });

  it("keeps a paused approval run resumable after a JSON round trip", () => {
    const paused = JSON.parse(JSON.stringify(createGraphState(approvalGraph, {}))) as GraphState;
    const resumed = resumeGraph(approvalGraph, paused, {
      approvals: { "mcp-approval": { approved: true, actor: "human" } },
    });
    const roundTripped = JSON.parse(JSON.stringify(resumed)) as GraphState;
    expect(drive(approvalGraph, roundTripped, script({})).stop.kind).toBe("complete");
  });

  it("holds only JSON values", () => {
    const run = drive(sequential, createGraphState(sequential, { n: 1 }), wrapFirst);
    const json = JSON.parse(JSON.stringify(run.state)) as JsonValue;
    expect(json).toEqual(run.state);
  });
});
