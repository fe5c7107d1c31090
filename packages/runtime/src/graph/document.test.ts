import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { normalizeGraph } from "./document.js";

function refusal(
  value: JsonValue,
  options: Parameters<typeof normalizeGraph>[1] = {},
): RuntimeError {
  try {
    normalizeGraph(value, options);
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected GRAPH_INVALID");
}

const step = (id: string, extra: JsonObject = {}): JsonObject => ({
  id,
  tool: "data.compare",
  ...extra,
});
const doc = (steps: JsonObject[], extra: JsonObject = {}): JsonObject => ({
  name: "g",
  steps,
  ...extra,
});

describe("normalizeGraph", () => {
  it("reads the TS-era standalone dialect with context edges and an implicit result", () => {
    const graph = normalizeGraph({
      name: "sequential-echo",
      owner: "runx",
      steps: [
        { id: "first", skill: "../../skills/json-output", inputs: { message: "hello" } },
        {
          id: "second",
          skill: "../../skills/echo",
          context: { message: "first.result.data.message" },
        },
      ],
    });
    expect(graph.result_from).toEqual(["second"]);
    expect(graph.result_from_defaulted).toBe(true);
    expect(graph.owner).toBe("runx");
    const second = graph.steps[1];
    expect(second).toMatchObject({
      kind: "skill",
      skill: "../../skills/echo",
      depends_on: ["first"],
      context: { message: { step: "first", path: ["result", "data", "message"] } },
    });
  });

  it("normalizes step sources, retry, mutation, fanout membership and guards", () => {
    const graph = normalizeGraph(
      {
        name: "full",
        result_from: ["approve"],
        fanout: { groups: { g: { strategy: "quorum", min_success: 1 } } },
        steps: [
          step("a", { mode: "fanout", fanout_group: "g", scopes: ["net:http"] }),
          step("b", { fanout_group: "g", retry: { max_attempts: 3 } }),
          {
            id: "approve",
            run: { type: "approval" },
            inputs: { gate_id: "x" },
            artifacts: { wrap_as: "approval" },
          },
          {
            id: "act",
            skill: ".",
            runner: "act",
            mutation: true,
            idempotency_key: "$input.key",
            context: { v: "$steps.a.value" },
          },
        ],
      },
      {
        policy: {
          guards: [{ step: "act", field: "approve.approval.data.approved", equals: true }],
        },
      },
    );
    expect(graph.fanout.g).toMatchObject({
      strategy: "quorum",
      on_branch_failure: "continue",
      steps: ["a", "b"],
    });
    expect(graph.steps.map((s) => s.kind)).toEqual(["tool", "tool", "run", "skill"]);
    expect(graph.steps[1]?.retry).toEqual({ max_attempts: 3 });
    expect(graph.steps[3]).toMatchObject({
      mutating: true,
      idempotency_key: "$input.key",
      runner: "act",
      depends_on: ["a"],
    });
    expect(graph.guards).toMatchObject([{ step: "act", equals: true, field: { step: "approve" } }]);
  });

  it("accepts the TS-era agent-step run type and transitions alias", () => {
    const graph = normalizeGraph(
      doc([step("a"), { id: "b", run: { type: "agent-step", agent: "x", task: "t" } }], {
        policy: { transitions: [{ to: "b", field: "a.ok", equals: true }] },
      }),
    );
    expect(graph.steps[1]).toMatchObject({ kind: "run", run: { type: "agent-task" } });
    expect(graph.guards[0]?.step).toBe("b");
  });

  it("accepts overlapping outputs from conditional result producers", () => {
    const graph = normalizeGraph(
      doc(
        [
          step("pick"),
          step("x", {
            when: { field: "pick.equal", equals: true },
            artifacts: { wrap_as: "packet" },
          }),
          step("y", {
            when: { field: "pick.equal", equals: false },
            artifacts: { wrap_as: "packet" },
          }),
        ],
        { result_from: ["x", "y"] },
      ),
    );
    expect(graph.result_from).toEqual(["x", "y"]);
  });
});

describe("normalizeGraph refusals", () => {
  it.each<[string, JsonValue, { path: string; step_id?: string; key?: string }]>([
    ["duplicate step ids", doc([step("a"), step("a")]), { path: "steps[1].id", step_id: "a" }],
    [
      "a context edge to an unknown step",
      doc([step("a", { context: { v: "ghost.out" } })]),
      { path: "steps[0].context.v", step_id: "a" },
    ],
    [
      "a context edge to a later step",
      doc([step("a", { context: { v: "b.out" } }), step("b")]),
      { path: "steps[0].context.v", step_id: "a" },
    ],
    [
      "a $steps reference to a later step",
      doc([step("a", { inputs: { nested: { v: "$steps.b.out" } } }), step("b")]),
      { path: "steps[0].inputs.nested", step_id: "a" },
    ],
    [
      "a when condition on an unknown step",
      doc([step("a", { when: { field: "ghost.ok", equals: true } })]),
      { path: "steps[0].when.field", step_id: "a" },
    ],
    [
      "result_from naming an unknown step",
      doc([step("a")], { result_from: ["ghost"] }),
      { path: "result_from[0]", step_id: "ghost" },
    ],
    [
      "two unconditional result producers declaring the same output key",
      doc(
        [
          step("a", { artifacts: { wrap_as: "packet" } }),
          step("b", { outputs: { packet: "object" } }),
        ],
        {
          result_from: ["a", "b"],
        },
      ),
      { path: "steps[1].outputs.packet", step_id: "b", key: "packet" },
    ],
    [
      "an input that looks like a step reference",
      doc([step("a"), step("b", { inputs: { v: "a.out" } })]),
      { path: "steps[1].inputs.v", step_id: "b" },
    ],
    [
      "a step with two sources",
      doc([{ id: "a", tool: "x", skill: "y" }]),
      { path: "steps[0]", step_id: "a" },
    ],
    [
      "runner without skill",
      doc([step("a", { runner: "r" })]),
      { path: "steps[0].runner", step_id: "a" },
    ],
    [
      "an unknown step key",
      doc([step("a", { parallel: true })]),
      { path: "steps[0].parallel", step_id: "a" },
    ],
    [
      "a rejected stage key",
      doc([step("a", { stage: "x" })]),
      { path: "steps[0].stage", step_id: "a" },
    ],
    ["top-level sync", doc([step("a")], { sync: {} }), { path: "sync" }],
    [
      "an undeclared fanout group",
      doc([step("a", { fanout_group: "g" })]),
      { path: "steps[0].fanout_group", step_id: "a" },
    ],
    [
      "a non-contiguous fanout group",
      doc([step("a", { fanout_group: "g" }), step("b"), step("c", { fanout_group: "g" })], {
        fanout: { groups: { g: {} } },
      }),
      { path: "steps[2].fanout_group", step_id: "c" },
    ],
    [
      "a context edge between branches of one group",
      doc(
        [
          step("a", { fanout_group: "g" }),
          step("b", { fanout_group: "g", context: { v: "a.out" } }),
        ],
        {
          fanout: { groups: { g: {} } },
        },
      ),
      { path: "steps[1].context.v", step_id: "b" },
    ],
    [
      "quorum min_success above the branch count",
      doc([step("a", { fanout_group: "g" })], {
        fanout: { groups: { g: { strategy: "quorum", min_success: 2 } } },
      }),
      { path: "fanout.groups.g.min_success" },
    ],
    [
      "a semantic gate field",
      doc([step("a", { fanout_group: "g" })], {
        fanout: { groups: { g: { conflict_gates: [{ field: "x", semantic: "similar" }] } } },
      }),
      { path: "fanout.groups.g.conflict_gates[0].semantic" },
    ],
    [
      "a guard reading a step that runs after the guarded one",
      doc([step("a"), step("b")], {
        policy: { guards: [{ step: "a", field: "b.ok", equals: true }] },
      }),
      { path: "policy.guards[0].field", step_id: "a" },
    ],
    [
      "a retry below one attempt",
      doc([step("a", { retry: { max_attempts: 0 } })]),
      { path: "steps[0].retry.max_attempts", step_id: "a" },
    ],
    ["an empty steps list", { name: "g", steps: [] }, { path: "steps" }],
  ])("refuses %s with GRAPH_INVALID and its key path", (_name, value, details) => {
    const error = refusal(value);
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject(details);
  });

  it("accepts a guard field that names no step (upstream parses it; at run time it blocks)", () => {
    const graph = normalizeGraph(
      doc([step("scan"), step("review")], {
        policy: { guards: [{ step: "review", field: "status", equals: "needs_review" }] },
      }),
    );
    expect(graph.guards).toMatchObject([{ step: "review", field: { ref: "status" } }]);
  });

  it("prefixes key paths with the graph's place in its document", () => {
    const error = refusal(doc([step("a"), step("a")]), {
      path: ["runners", "default", "graph"],
      file: "X.yaml",
    });
    expect(error.details).toMatchObject({
      path: "runners.default.graph.steps[1].id",
      file: "X.yaml",
    });
  });
});
