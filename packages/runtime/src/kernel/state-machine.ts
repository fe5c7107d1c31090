/**
 * Readers of upstream's kernel state-machine inputs (`state-machine.*`) into the kernel's
 * sequential-graph decisions (kernel/sequential.ts, kernel/fanout-sync.ts) and the
 * single-step lifecycle, and their answers in upstream's camelCase shapes. A field of the
 * wrong shape fails the evaluation.
 */
import { createSingleStepState, transitionSingleStep } from "../graph/single-step.js";
import type { SingleStepEvent, SingleStepState } from "../graph/single-step.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { Fields } from "./read.js";
import { evaluateFanoutSync, syncDecisionKey } from "./fanout-sync.js";
import {
  createSequentialState,
  planSequentialTransition,
  transitionSequential,
} from "./sequential.js";
import type {
  BranchResult,
  FanoutPolicy,
  SequentialEvent,
  SequentialState,
  StepDefinition,
  StepState,
} from "./sequential-model.js";

const STEP_STATUS = ["pending", "running", "succeeded", "failed", "skipped"] as const;
const GRAPH_STATUS = ["pending", "running", "succeeded", "failed", "paused", "escalated"] as const;
const ACTIONS = ["pause", "escalate"] as const;
const AUTHORITY_VERBS = [
  "read",
  "write",
  "comment",
  "review",
  "approve",
  "merge",
  "create",
  "update",
  "delete",
  "execute",
  "verify",
  "estimate",
  "prepare",
  "commit",
  "reverse",
  "publish",
  "spawn_child",
  "revoke",
] as const;

function definitionOf(f: Fields): StepDefinition {
  const def: StepDefinition = { id: f.string("id") };
  const context = f.optStrings("contextFrom");
  const retry = f.optObject("retry");
  const group = f.optString("fanoutGroup");
  if (context !== undefined) def.contextFrom = context;
  if (retry !== undefined) def.retry = { maxAttempts: retry.u32("maxAttempts") };
  if (group !== undefined) def.fanoutGroup = group;
  return def;
}

function stepStateOf(f: Fields): StepState {
  const step: StepState = {
    stepId: f.string("stepId"),
    status: f.oneOf("status", STEP_STATUS),
    attempts: f.u32("attempts"),
  };
  for (const key of ["startedAt", "completedAt", "receiptId", "error"] as const) {
    const v = f.optString(key);
    if (v !== undefined) step[key] = v;
  }
  const outputs = f.optObject("outputs");
  if (outputs !== undefined) step.outputs = outputs.value;
  return step;
}

function stateOf(f: Fields): SequentialState {
  return {
    graphId: f.string("graphId"),
    status: f.oneOf("status", GRAPH_STATUS),
    steps: f.objects("steps").map(stepStateOf),
  };
}

function policyOf(f: Fields): FanoutPolicy {
  const policy: FanoutPolicy = {
    groupId: f.string("groupId"),
    strategy: f.oneOf("strategy", ["all", "any", "quorum"] as const),
    onBranchFailure: f.oneOf("onBranchFailure", ["halt", "continue"] as const),
  };
  const min = f.optU32("minSuccess");
  if (min !== undefined) policy.minSuccess = min;
  const thresholds = f.optObjects("thresholdGates");
  if (thresholds !== undefined)
    policy.thresholdGates = thresholds.map((g) => ({
      step: g.string("step"),
      field: g.string("field"),
      above: g.number("above"),
      action: g.oneOf("action", ACTIONS),
    }));
  const conflicts = f.optObjects("conflictGates");
  if (conflicts !== undefined)
    policy.conflictGates = conflicts.map((g) => ({
      field: g.string("field"),
      steps: g.strings("steps"),
      action: g.oneOf("action", ACTIONS),
    }));
  return policy;
}

function resultOf(f: Fields): BranchResult {
  const result: BranchResult = {
    stepId: f.string("stepId"),
    status: f.oneOf("status", STEP_STATUS),
  };
  const outputs = f.optObject("outputs");
  if (outputs !== undefined) result.outputs = outputs.value;
  return result;
}

function keysOf(f: Fields, key: string): ReadonlySet<string> | undefined {
  const keys = f.optStrings(key);
  return keys === undefined ? undefined : new Set(keys);
}

/** Checks an admission witness the way upstream reads it; only its ids are used. */
function witnessOf(f: Fields): { stepId: string; receiptId: string } {
  const authority = f.optObject("authority");
  if (authority !== undefined) {
    authority.oneOf("verb", AUTHORITY_VERBS);
    authority.string("parentTermId");
    authority.string("childTermId");
    authority.optString("idempotencyKey");
    const ref = authority.optObject("capabilityRef");
    if (ref !== undefined) {
      ref.only(["type", "uri", "provider", "locator", "label", "observed_at", "proof_kind"]);
      ref.string("type");
      ref.nonEmpty("uri");
    }
  }
  return { stepId: f.string("stepId"), receiptId: f.string("receiptId") };
}

const EVENT_TYPES = [
  "start_step",
  "step_succeeded",
  "step_failed",
  "step_skipped",
  "complete",
  "pause_graph",
  "escalate_graph",
  "fail_graph",
] as const;

function eventOf(f: Fields): SequentialEvent {
  const type = f.oneOf("type", EVENT_TYPES);
  switch (type) {
    case "start_step":
    case "step_skipped":
      return { type, stepId: f.string("stepId"), at: f.string("at") };
    case "step_succeeded": {
      const at = f.string("at");
      const admissionWitness = witnessOf(f.object("admissionWitness"));
      const outputs = f.optObject("outputs");
      return outputs === undefined
        ? { type, at, admissionWitness }
        : { type, at, admissionWitness, outputs: outputs.value };
    }
    case "step_failed":
      return { type, stepId: f.string("stepId"), at: f.string("at"), error: f.string("error") };
    case "complete":
      return { type };
    case "pause_graph":
    case "escalate_graph":
      return { type, reason: f.string("reason") };
    case "fail_graph":
      return { type, error: f.string("error") };
  }
}

function planSequential(input: Fields): JsonValue {
  const policies = new Map<string, FanoutPolicy>();
  const given = input.optObject("fanoutPolicies");
  if (given !== undefined)
    for (const key of Object.keys(given.value)) policies.set(key, policyOf(given.object(key)));
  return planSequentialTransition(
    stateOf(input.object("state")),
    input.objects("steps").map(definitionOf),
    policies,
    keysOf(input, "resolvedFanoutGateKeys"),
  ) as unknown as JsonObject;
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
  if (type === "succeed")
    return { type, at: f.string("at"), admissionWitness: witnessOf(f.object("admissionWitness")) };
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
  "state-machine.createSequentialGraphState": (input) =>
    createSequentialState(
      input.string("graphId"),
      input.objects("steps").map(definitionOf),
    ) as unknown as JsonObject,
  "state-machine.planSequentialGraphTransition": planSequential,
  "state-machine.transitionSequentialGraph": (input) =>
    transitionSequential(
      stateOf(input.object("state")),
      eventOf(input.object("event")),
    ) as unknown as JsonObject,
  "state-machine.evaluateFanoutSync": (input) =>
    evaluateFanoutSync(
      policyOf(input.object("policy")),
      input.objects("results").map(resultOf),
      keysOf(input, "resolvedGateKeys"),
    ) as unknown as JsonObject,
  "state-machine.fanoutSyncDecisionKey": (input) => {
    const d = input.object("decision");
    return syncDecisionKey(d.string("groupId"), d.string("ruleFired"));
  },
};
