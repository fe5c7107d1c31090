/**
 * The checkpointed run state of a graph and its settling rules. `GraphState` is JSON-only: it is
 * what a paused run persists and what resume reads back. Pure.
 */
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { FanoutGroup, GraphDoc, GraphStep } from "./document.js";
import { evaluateFanoutSync } from "./fanout.js";
import type { BranchResult, FanoutDecision, FanoutSyncRecord } from "./fanout.js";
import { effectiveRetry } from "./plan.js";
import { evaluateCondition } from "./references.js";
import type { ReferenceScope } from "./references.js";

/** Where a step stands. `pending` with attempts > 0 means "ready to run again after a pause". */
export type StepStatus = "pending" | "succeeded" | "failed" | "skipped" | "paused" | "declined";

/** How one execution of a step ended (what the runner reports). */
export type StepOutcomeStatus =
  "success" | "failure" | "needs_approval" | "needs_agent" | "declined";

/** One recorded execution of a step (receipt lineage and retry metadata). */
export interface StepAttempt {
  attempt: number;
  status: StepOutcomeStatus;
  receiptId?: string;
  receiptDigest?: string;
  reason?: string;
}

/** The state of one step. */
export interface GraphStepState {
  stepId: string;
  status: StepStatus;
  /** Executions that ended (a pause does not consume an attempt). */
  attempts: number;
  output?: JsonObject;
  receiptId?: string;
  receiptDigest?: string;
  /** Pending requests while `paused`. */
  requests?: RunRequest[];
  reason?: string;
  history: StepAttempt[];
  /**
   * The paused state of the nested graph this step runs (a `skill:` step whose runner is a
   * graph), kept while the step is paused and handed back to it on resume. Opaque JSON here.
   */
  subgraph?: unknown;
}

/** A recorded human decision on an approval gate. */
export interface ApprovalRecord {
  approved: boolean;
  actor: "human";
  reason?: string;
}

/** The latest decision of a fanout group (`declined` when its gate was denied). */
export interface GroupDecisionState {
  decision: FanoutDecision | "declined";
  ruleFired: string;
  reason: string;
}

/** Overall status, derived from the next actions after every transition. */
export type GraphStatus = "pending" | "running" | "paused" | "completed" | "failed";

/** The serialisable run state of a graph (checkpoint format `runx.graph_state.v1`). */
export interface GraphState {
  schema: "runx.graph_state.v1";
  graphId?: string;
  graph: string;
  status: GraphStatus;
  inputs: JsonObject;
  /** One entry per step, in declaration order. */
  steps: GraphStepState[];
  /** Human decisions by gate id (approval steps, fanout gates, tool approval requests). */
  approvals: Record<string, ApprovalRecord>;
  /** Approved fanout gate decision keys `<group>:<rule_fired>`. */
  resolvedGates: string[];
  groups: Record<string, GroupDecisionState>;
  /** Every fanout sync point, in the order they were decided (receipt `lineage.sync`). */
  sync: FanoutSyncRecord[];
  /**
   * Approval gates of the enclosing graph that admitted the mutating step running this nested
   * graph: its policy-approval tool steps inherit that evidence (graph/policy-approval.ts).
   */
  inherited_policy_approval?: string[];
}

/** A unit of planning: one sequential step, or one fanout group's contiguous branches. */
export type PlanUnit = { step: GraphStep } | { group: FanoutGroup; branches: GraphStep[] };

/** The document's steps grouped into planning units, in order. */
export function planUnits(doc: GraphDoc): PlanUnit[] {
  const units: PlanUnit[] = [];
  for (const step of doc.steps) {
    const group = step.fanout_group === undefined ? undefined : doc.fanout[step.fanout_group];
    const last = units[units.length - 1];
    if (group === undefined) units.push({ step });
    else if (last !== undefined && "group" in last && last.group.id === group.id)
      last.branches.push(step);
    else units.push({ group, branches: [step] });
  }
  return units;
}

/** The state entry of a step; GRAPH_STATE_INVALID when the state does not know it. */
export function stepState(state: GraphState, stepId: string): GraphStepState {
  const entry = state.steps.find((s) => s.stepId === stepId);
  if (entry === undefined)
    throw new RuntimeError("GRAPH_STATE_INVALID", `graph state has no step '${stepId}'`, {
      step_id: stepId,
    });
  return entry;
}

/** Reference scope over the state: graph inputs and outputs of succeeded steps. */
export function scopeOf(state: GraphState): ReferenceScope {
  return {
    inputs: state.inputs,
    outputOf: (id) => {
      const entry = state.steps.find((s) => s.stepId === id);
      return entry?.status === "succeeded" ? entry.output : undefined;
    },
  };
}

/** True once a step will not run again: succeeded, skipped, declined, or failed with no budget. */
export function isSettled(step: GraphStep, entry: GraphStepState): boolean {
  if (entry.status === "failed") return entry.attempts >= effectiveRetry(step).max_attempts;
  return entry.status === "succeeded" || entry.status === "skipped" || entry.status === "declined";
}

/** Marks a not-yet-run step skipped when its `when` is false or unresolved. */
function skipIfConditionFails(step: GraphStep, state: GraphState): void {
  const entry = stepState(state, step.id);
  if (entry.status !== "pending" || entry.attempts > 0 || step.when === undefined) return;
  if (evaluateCondition(step.when, scopeOf(state)) !== true) entry.status = "skipped";
}

function evaluateGroup(group: FanoutGroup, branches: GraphStep[], state: GraphState): void {
  const results: BranchResult[] = [];
  for (const step of branches) {
    const entry = stepState(state, step.id);
    if (entry.status === "skipped") continue;
    const result: BranchResult = {
      stepId: step.id,
      status: entry.status === "succeeded" ? "succeeded" : "failed",
    };
    if (entry.output !== undefined) result.outputs = entry.output;
    if (entry.receiptId !== undefined) result.receiptId = entry.receiptId;
    if (entry.receiptDigest !== undefined) result.receiptDigest = entry.receiptDigest;
    results.push(result);
  }
  const record = evaluateFanoutSync(group, results, state.resolvedGates);
  state.sync.push(record);
  state.groups[group.id] = {
    decision: record.decision,
    ruleFired: record.rule_fired,
    reason: record.reason,
  };
}

/**
 * Advances everything that needs no execution, in order, up to the first unit that does:
 * skips steps whose `when` fails, and evaluates fanout groups whose branches have all settled
 * (recording the sync point). Mutates `state`, which must be a private copy.
 */
export function settle(doc: GraphDoc, state: GraphState): void {
  for (const unit of planUnits(doc)) {
    if ("step" in unit) {
      skipIfConditionFails(unit.step, state);
      const status = stepState(state, unit.step.id).status;
      if (status === "succeeded" || status === "skipped") continue;
      return;
    }
    const decided = state.groups[unit.group.id];
    if (decided === undefined) {
      for (const branch of unit.branches) skipIfConditionFails(branch, state);
      if (unit.branches.every((b) => isSettled(b, stepState(state, b.id))))
        evaluateGroup(unit.group, unit.branches, state);
    }
    if (state.groups[unit.group.id]?.decision !== "proceed") return;
  }
}

/** A JSON deep copy (the state must survive exactly this round trip). */
export function cloneState(state: GraphState): GraphState {
  return JSON.parse(JSON.stringify(state)) as GraphState;
}
