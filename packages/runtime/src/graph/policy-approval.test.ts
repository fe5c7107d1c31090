import { describe, expect, it } from "vitest";
import { createGraphState, resumeGraph } from "./machine.js";
import { drive, graph, script } from "./test-support/drive.js";
import type { JsonValue } from "../parser/json.js";

const post = {
  id: "post",
  tool: "http.execute",
  mutation: true,
  inputs: { requests: [], allowed_hosts: ["hooks.example"] },
};
const approve = {
  id: "approve",
  run: { type: "approval" },
  inputs: { gate_id: "hook", reason: "Posts to the hook." },
};
const guard = { step: "post", field: "approve.approval_decision.data.approved", equals: true };

function run(doc: JsonValue, approved?: boolean) {
  const parsed = graph(doc);
  let state = createGraphState(parsed, {});
  if (approved !== undefined) {
    const paused = drive(parsed, state, script({})).state;
    state = resumeGraph(parsed, paused, { approvals: { hook: { approved, actor: "human" } } });
  }
  return drive(parsed, state, script({}));
}

describe("policy approval of http.execute steps", () => {
  it("runs the step behind an approved run: approval guard", () => {
    const result = run({ name: "g", steps: [approve, post], policy: { guards: [guard] } }, true);
    expect(result.executed).toContain("post#1");
    expect(result.stop.kind).toBe("complete");
  });

  it("refuses the step without a guard, even after an approval step ran", () => {
    const result = run({ name: "g", steps: [approve, post] }, true);
    expect(result.executed).not.toContain("post#1");
    expect(result.stop).toMatchObject({
      kind: "fail",
      code: "POLICY_APPROVAL_REQUIRED",
      stepId: "post",
    });
  });

  it("refuses a guard that does not point at an approval step's decision", () => {
    const notApproval = { id: "approve", run: { type: "javascript", module: "x.mjs" } };
    const doc = { name: "g", steps: [notApproval, post], policy: { guards: [guard] } };
    const result = drive(
      graph(doc),
      createGraphState(graph(doc), {}),
      script({
        approve: () => ({
          status: "success",
          output: { approval_decision: { data: { approved: true } } },
        }),
      }),
    );
    expect(result.stop).toMatchObject({ kind: "fail", code: "POLICY_APPROVAL_REQUIRED" });
  });

  it("refuses an http.execute step not declared mutation: true", () => {
    const result = run(
      { name: "g", steps: [approve, { ...post, mutation: false }], policy: { guards: [guard] } },
      true,
    );
    expect(result.stop).toMatchObject({ kind: "fail", code: "POLICY_APPROVAL_REQUIRED" });
    expect(result.stop.kind === "fail" && result.stop.reason).toContain("mutation: true");
  });

  it("admits a nested graph's step with the approval its enclosing step inherited", () => {
    const doc = graph({ name: "nested", steps: [post] });
    const inherited = drive(
      doc,
      createGraphState(doc, {}, { inheritedPolicyApproval: ["approve"] }),
      script({}),
    );
    expect(inherited.executed).toContain("post#1");
    const bare = drive(doc, createGraphState(doc, {}), script({}));
    expect(bare.stop).toMatchObject({ kind: "fail", code: "POLICY_APPROVAL_REQUIRED" });
  });

  it("hands the approving gates to a guarded mutating step (what a nested graph inherits)", () => {
    const apply = { id: "apply", skill: "./child", mutation: true };
    const doc = graph({
      name: "g",
      steps: [approve, apply],
      policy: { guards: [{ ...guard, step: "apply" }] },
    });
    const seen: string[][] = [];
    const paused = drive(doc, createGraphState(doc, {}), script({})).state;
    const resumed = resumeGraph(doc, paused, {
      approvals: { hook: { approved: true, actor: "human" } },
    });
    drive(
      doc,
      resumed,
      script({
        apply: (action) => {
          seen.push(action.policyApproval ?? []);
          return { status: "success", output: {} };
        },
      }),
    );
    expect(seen).toEqual([["approve"]]);
  });
});

describe("policy approval of command.execute steps", () => {
  const exec = {
    id: "post",
    tool: "command.execute",
    mutation: true,
    scopes: ["process.exec"],
    inputs: { command: "/bin/true" },
  };

  it("refuses an arbitrary command without an approved gate", () => {
    const result = run({ name: "g", steps: [exec] });
    expect(result.executed).not.toContain("post#1");
    expect(result.stop).toMatchObject({
      kind: "fail",
      code: "POLICY_APPROVAL_REQUIRED",
      stepId: "post",
    });
  });

  it("refuses one not declared mutating, even behind an approved gate", () => {
    const { mutation: _, ...readOnly } = exec;
    const result = run(
      { name: "g", steps: [approve, readOnly], policy: { guards: [guard] } },
      true,
    );
    expect(result.stop).toMatchObject({ kind: "fail", code: "POLICY_APPROVAL_REQUIRED" });
  });

  it("runs it behind an approved run: approval guard", () => {
    const result = run({ name: "g", steps: [approve, exec], policy: { guards: [guard] } }, true);
    expect(result.executed).toContain("post#1");
    expect(result.stop.kind).toBe("complete");
  });

  it("leaves fs.write to workspace containment (no policy approval)", () => {
    const write = { id: "post", tool: "fs.write", inputs: { path: "a.txt", contents: "a" } };
    const result = run({ name: "g", steps: [write] });
    expect(result.executed).toContain("post#1");
  });
});
