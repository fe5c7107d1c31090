/**
 * Adapters from upstream's kernel state-machine fixtures (`state-machine.*` inputs) to the
 * runtime's graph machine (graph/machine.ts, graph/fanout.ts) and single-step lifecycle, and
 * from their answers to upstream's camelCase plan and decision shapes. The fixture's step
 * definitions become a graph document of placeholder tool steps whose context edges are the
 * fixture's `contextFrom`; planning is the machine's own `nextActions`.
 */
import { normalizeGraph } from "../graph/document.js";
import type { FanoutGroup, GraphDoc } from "../graph/document.js";
import { evaluateFanoutSync, fanoutDecisionKey } from "../graph/fanout.js";
import type { BranchResult, FanoutSyncRecord } from "../graph/fanout.js";
import { createGraphState, nextActions } from "../graph/machine.js";
import type { GraphState, GraphStepState } from "../graph/machine.js";
import { createSingleStepState, transitionSingleStep } from "../graph/single-step.js";
import type { SingleStepEvent, SingleStepState } from "../graph/single-step.js";
import { settle } from "../graph/state.js";
import { isRuntimeError } from "../errors.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { Fields } from "./read.js";
import { evaluationFailed } from "./read.js";

interface StepDefinition {
  id: string;
  contextFrom: string[];
  maxAttempts?: number;
  fanoutGroup?: string;
}

function definitions(input: Fields): StepDefinition[] {
  return input.objects("steps").map((s) => {
    const def: StepDefinition = {
      id: s.string("id"),
      contextFrom: s.optStrings("contextFrom") ?? [],
    };
    const max = s.optObject("retry")?.optInteger("maxAttempts");
    const group = s.optString("fanoutGroup");
    if (max !== undefined) def.maxAttempts = max;
    if (group !== undefined) def.fanoutGroup = group;
    return def;
  });
}

/** A fanout policy in the graph document's own syntax. */
function rawGroup(policy: Fields | undefined): JsonObject {
  if (policy === undefined) return { strategy: "all", on_branch_failure: "halt" };
  const raw: JsonObject = {
    strategy: policy.oneOf("strategy", ["all", "any", "quorum", "threshold"] as const),
    on_branch_failure: policy.oneOf("onBranchFailure", ["halt", "continue"] as const),
  };
  const min = policy.optInteger("minSuccess");
  if (min !== undefined) raw.min_success = min;
  raw.threshold_gates = (policy.optObjects("thresholdGates") ?? []).map((g) => ({
    step: g.string("step"),
    field: g.string("field"),
    above: g.number("above"),
    action: g.oneOf("action", ["pause", "escalate"] as const),
  }));
  raw.conflict_gates = (policy.optObjects("conflictGates") ?? []).map((g) => {
    const steps = g.optStrings("steps") ?? [];
    const gate: JsonObject = {
      field: g.string("field"),
      action: g.oneOf("action", ["pause", "escalate"] as const),
    };
    // Upstream's empty list means "every branch"; the document says that by omission.
    if (steps.length > 0) gate.steps = steps;
    return gate;
  });
  return raw;
}

/** The graph document standing for the fixture's step definitions and fanout policies. */
function documentOf(name: string, defs: StepDefinition[], policies?: Fields): GraphDoc {
  const groups: JsonObject = {};
  for (const def of defs)
    if (def.fanoutGroup !== undefined && groups[def.fanoutGroup] === undefined)
      groups[def.fanoutGroup] = rawGroup(policies?.optObject(def.fanoutGroup));
  const raw: JsonObject = {
    name,
    steps: defs.map((def) => {
      const step: JsonObject = {
        id: def.id,
        tool: "kernel.step",
        context: Object.fromEntries(def.contextFrom.map((src) => [`from_${src}`, src])),
      };
      if (def.maxAttempts !== undefined) step.retry = { max_attempts: def.maxAttempts };
      if (def.fanoutGroup !== undefined) step.fanout_group = def.fanoutGroup;
      return step;
    }),
  };
  if (Object.keys(groups).length > 0) raw.fanout = { groups };
  try {
    return normalizeGraph(raw);
  } catch (error) {
    if (isRuntimeError(error)) evaluationFailed("input.steps", error.message);
    throw error;
  }
}

/** Upstream's camelCase sync decision from the machine's sync record. */
export function syncDecisionOf(record: FanoutSyncRecord): JsonObject {
  const out: JsonObject = {
    groupId: record.group_id,
    decision: record.decision,
    strategy: record.strategy,
    ruleFired: record.rule_fired,
    reason: record.reason,
    branchCount: record.branch_count,
    successCount: record.success_count,
    failureCount: record.failure_count,
    requiredSuccesses: record.required_successes,
  };
  const gate = record.gate;
  if (gate?.type === "threshold") {
    const g: JsonObject = { type: "threshold", stepId: gate.step_id, field: gate.field };
    if (gate.value !== undefined) g.value = gate.value;
    g.comparedTo = gate.compared_to;
    g.action = gate.action;
    out.gate = g;
  } else if (gate?.type === "conflict") {
    out.gate = {
      type: "conflict",
      field: gate.field,
      steps: gate.steps,
      values: gate.values,
      action: gate.action,
    };
  } else if (gate !== undefined) {
    out.gate = {
      type: gate.type,
      value: gate.value,
      comparedTo: gate.compared_to,
      action: gate.action,
    };
  }
  return out;
}

function groupOfPolicy(policy: Fields, results: BranchResult[]): FanoutGroup {
  const doc = normalizeGraph({
    name: "fanout",
    steps: results.map((r) => ({ id: r.stepId, tool: "kernel.step", fanout_group: "g" })),
    fanout: { groups: { g: rawGroup(policy) } },
  });
  const group = doc.fanout.g;
  if (group === undefined) return evaluationFailed("input.policy", "is not a fanout policy");
  return { ...group, id: policy.string("groupId") };
}

function evaluateFanout(input: Fields): JsonValue {
  const results: BranchResult[] = [];
  for (const r of input.objects("results")) {
    const status = r.oneOf("status", [
      "pending",
      "running",
      "succeeded",
      "failed",
      "skipped",
    ] as const);
    // A skipped branch was selected out; it is not part of the group's population.
    if (status === "skipped") continue;
    const result: BranchResult = {
      stepId: r.string("stepId"),
      status: status === "succeeded" ? "succeeded" : "failed",
    };
    if (r.has("outputs")) result.outputs = r.object("outputs").value;
    results.push(result);
  }
  const policy = input.object("policy");
  let group: FanoutGroup;
  try {
    group = groupOfPolicy(policy, results);
  } catch (error) {
    if (isRuntimeError(error) && error.code === "GRAPH_INVALID")
      evaluationFailed("input.policy", error.message);
    throw error;
  }
  return syncDecisionOf(
    evaluateFanoutSync(group, results, input.optStrings("resolvedGateKeys") ?? []),
  );
}

const GRAPH_STEP_STATUS = ["pending", "running", "succeeded", "failed", "skipped"] as const;

function planSequential(input: Fields): JsonValue {
  const defs = definitions(input);
  const given = input.object("state");
  const graphId = given.string("graphId");
  const doc = documentOf(graphId, defs, input.optObject("fanoutPolicies"));
  const entries = given.objects("steps").map((s) => ({
    stepId: s.string("stepId"),
    status: s.oneOf("status", GRAPH_STEP_STATUS),
    attempts: s.optInteger("attempts") ?? 0,
    outputs: s.optObject("outputs")?.value,
  }));
  // The machine has no "running" status: a step is running while the runner executes it.
  const running = entries.find((e) => e.status === "running");
  if (running !== undefined)
    return { type: "blocked", stepId: running.stepId, reason: "step is already running" };
  const steps: GraphStepState[] = defs.map((def) => {
    const entry = entries.find((e) => e.stepId === def.id);
    if (entry === undefined)
      return { stepId: def.id, status: "failed", attempts: Number.MAX_SAFE_INTEGER, history: [] };
    const step: GraphStepState = {
      stepId: def.id,
      status: entry.status as GraphStepState["status"],
      attempts: entry.attempts,
      history: [],
    };
    if (entry.status === "succeeded") step.output = entry.outputs ?? {};
    return step;
  });
  const missing = defs.find((def) => !entries.some((e) => e.stepId === def.id));
  if (missing !== undefined)
    return { type: "failed", stepId: missing.id, reason: "step state is missing" };
  const state: GraphState = {
    ...createGraphState(doc, {}),
    steps,
    resolvedGates: input.optStrings("resolvedFanoutGateKeys") ?? [],
  };
  settle(doc, state);
  const actions = nextActions(doc, state);
  const first = actions[0];
  if (first === undefined) return evaluationFailed("input.state", "the machine planned nothing");
  const defOf = (id: string) => defs.find((d) => d.id === id);
  const syncOf = (groupId: string) => state.sync.filter((r) => r.group_id === groupId).pop();
  const groupStart = (groupId: string) =>
    defs.find((d) => d.fanoutGroup === groupId)?.id ?? groupId;
  switch (first.kind) {
    case "execute_step": {
      if (first.groupId === undefined)
        return {
          type: "run_step",
          stepId: first.stepId,
          attempt: first.attempt,
          contextFrom: defOf(first.stepId)?.contextFrom ?? [],
        };
      const runs = actions.filter((a) => a.kind === "execute_step");
      return {
        type: "run_fanout",
        groupId: first.groupId,
        stepIds: runs.map((a) => a.stepId),
        attempts: Object.fromEntries(runs.map((a) => [a.stepId, a.attempt])),
        contextFrom: Object.fromEntries(
          runs.map((a) => [a.stepId, defOf(a.stepId)?.contextFrom ?? []]),
        ),
      };
    }
    case "complete":
      return { type: "complete" };
    case "pause": {
      const groupId = Object.keys(state.groups).find((g) => state.groups[g]?.decision === "pause");
      const record = groupId === undefined ? undefined : syncOf(groupId);
      if (groupId === undefined || record === undefined)
        return evaluationFailed("input.state", "paused without a fanout decision");
      return {
        type: "paused",
        stepId: groupStart(groupId),
        reason: record.reason,
        syncDecision: syncDecisionOf(record),
      };
    }
    case "fail": {
      if (first.groupId !== undefined) {
        const record = syncOf(first.groupId);
        const type = first.code === "FANOUT_ESCALATED" ? "escalated" : "failed";
        const plan: JsonObject = {
          type,
          stepId: groupStart(first.groupId),
          reason: record?.reason ?? first.reason,
        };
        if (record !== undefined) plan.syncDecision = syncDecisionOf(record);
        return plan;
      }
      const stepId = first.stepId ?? "";
      if (first.code === "CONTEXT_BLOCKED") {
        const dep = defOf(stepId)?.contextFrom.find(
          (src) => state.steps.find((s) => s.stepId === src)?.status !== "succeeded",
        );
        return {
          type: "blocked",
          stepId,
          reason: `waiting for context from ${dep ?? "an earlier step"}`,
        };
      }
      if (first.code === "STEP_FAILED" || first.code === "RETRY_EXHAUSTED")
        return { type: "failed", stepId, reason: "step failed and retry budget is exhausted" };
      return {
        type: first.disposition === "blocked" ? "blocked" : "failed",
        stepId,
        reason: first.reason,
      };
    }
  }
}

function createSequential(input: Fields): JsonValue {
  const graphId = input.string("graphId");
  const state = createGraphState(documentOf(graphId, definitions(input)), {}, { graphId });
  return {
    graphId,
    status: "pending",
    steps: state.steps.map((s) => ({ stepId: s.stepId, status: s.status, attempts: s.attempts })),
  };
}

function singleStepState(f: Fields): SingleStepState {
  const state: SingleStepState = {
    stepId: f.string("stepId"),
    status: f.oneOf("status", ["pending", "admitted", "running", "succeeded", "failed"] as const),
  };
  for (const key of ["startedAt", "completedAt", "error"] as const) {
    const v = f.optString(key);
    if (v !== undefined) state[key] = v;
  }
  return state;
}

function singleStepEvent(f: Fields): SingleStepEvent {
  const type = f.oneOf("type", ["admit", "start", "succeed", "fail"] as const);
  if (type === "admit") return { type };
  if (type === "fail") return { type, at: f.string("at"), error: f.string("error") };
  return { type, at: f.string("at") };
}

/** The state-machine kinds this adapter evaluates, by `input.kind`. */
export const STATE_MACHINE_KINDS: Record<string, (input: Fields) => JsonValue> = {
  "state-machine.createSingleStepState": (input) => ({
    ...createSingleStepState(input.string("stepId")),
  }),
  "state-machine.transitionSingleStep": (input) => ({
    ...transitionSingleStep(
      singleStepState(input.object("state")),
      singleStepEvent(input.object("event")),
    ),
  }),
  "state-machine.createSequentialGraphState": createSequential,
  "state-machine.planSequentialGraphTransition": planSequential,
  "state-machine.evaluateFanoutSync": evaluateFanout,
  "state-machine.fanoutSyncDecisionKey": (input) => {
    const d = input.object("decision");
    return fanoutDecisionKey(d.string("groupId"), d.string("ruleFired"));
  },
};
