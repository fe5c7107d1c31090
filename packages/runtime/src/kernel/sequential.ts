/**
 * Upstream's trusted-kernel sequential-graph decisions, as `runx kernel eval` must reproduce
 * them: the planner over a flat list of step definitions (contiguous `fanoutGroup` runs are a
 * fan-out group) and the event transitions of the graph state. The fan-out sync rules the
 * planner applies are kernel/fanout-sync.ts; the shapes both use are kernel/sequential-model.ts.
 * This is a decision surface over caller-supplied state — branch state is looked up by position
 * first, as upstream does — not the runtime's graph engine (graph/machine.ts), which plans
 * from a graph document and its own run state. Pure.
 */
import { countedSyncDecision, evaluateFanoutSync } from "./fanout-sync.js";
import type {
  FanoutPolicy,
  SequentialEvent,
  SequentialState,
  StepDefinition,
  StepState,
  SyncDecision,
  BranchResult,
} from "./sequential-model.js";

/** A fresh graph state: every step pending, no attempts. */
export function createSequentialState(
  graphId: string,
  steps: readonly StepDefinition[],
): SequentialState {
  return {
    graphId,
    status: "pending",
    steps: steps.map((s) => ({ stepId: s.id, status: "pending", attempts: 0 })),
  };
}

/** What the planner does next. */
export type SequentialPlan =
  | { type: "run_step"; stepId: string; attempt: number; contextFrom: string[] }
  | {
      type: "run_fanout";
      groupId: string;
      branches: { stepId: string; attempt: number; contextFrom: string[] }[];
    }
  | { type: "complete" }
  | { type: "failed" | "blocked"; stepId: string; reason: string; syncDecision?: SyncDecision }
  | { type: "paused" | "escalated"; stepId: string; reason: string; syncDecision: SyncDecision };

/** Step ids by definition position, and the positions of each fan-out group. */
class StepIndex {
  readonly positions = new Map<string, number>();
  readonly groups = new Map<string, number[]>();

  constructor(steps: readonly StepDefinition[]) {
    // A later duplicate id wins the id → position map, as upstream's map insert does.
    steps.forEach((s, i) => this.positions.set(s.id, i));
    steps.forEach((s, i) => {
      const group = groupIdOf(s);
      if (group !== undefined) this.groups.set(group, [...(this.groups.get(group) ?? []), i]);
    });
  }

  /** The state of `stepId`: found through its definition position, and only if it matches. */
  stateFor(state: SequentialState, stepId: string): StepState | undefined {
    const at = this.positions.get(stepId);
    const step = at === undefined ? undefined : state.steps[at];
    return step?.stepId === stepId ? step : undefined;
  }

  /** The state at `position` when it is `stepId`'s, else through the id's own position. */
  stateAt(state: SequentialState, position: number, stepId: string): StepState | undefined {
    const step = state.steps[position];
    return step?.stepId === stepId ? step : this.stateFor(state, stepId);
  }
}

function groupIdOf(step: StepDefinition): string | undefined {
  return step.fanoutGroup !== undefined && step.fanoutGroup !== "" ? step.fanoutGroup : undefined;
}

function retryExhausted(step: StepState, def: StepDefinition): boolean {
  return step.status === "failed" && step.attempts >= (def.retry?.maxAttempts ?? 1);
}

function missingContext(
  state: SequentialState,
  index: StepIndex,
  def: StepDefinition,
): string | undefined {
  return (def.contextFrom ?? []).find((source) => {
    const at = index.positions.get(source);
    const step = at === undefined ? undefined : state.steps[at];
    return step?.stepId !== source || step.status !== "succeeded";
  });
}

function planStep(
  state: SequentialState,
  index: StepIndex,
  position: number,
  def: StepDefinition,
): SequentialPlan | undefined {
  const step = index.stateAt(state, position, def.id);
  if (step === undefined)
    return { type: "failed", stepId: def.id, reason: "step state is missing" };
  if (step.status === "running")
    return { type: "blocked", stepId: def.id, reason: "step is already running" };
  if (step.status === "succeeded" || step.status === "skipped") return undefined;
  if (retryExhausted(step, def))
    return {
      type: "failed",
      stepId: def.id,
      reason: "step failed and retry budget is exhausted",
    };
  const missing = missingContext(state, index, def);
  if (missing !== undefined)
    return { type: "blocked", stepId: def.id, reason: `waiting for context from ${missing}` };
  return {
    type: "run_step",
    stepId: def.id,
    attempt: step.attempts + 1,
    contextFrom: def.contextFrom ?? [],
  };
}

function defaultPolicy(groupId: string): FanoutPolicy {
  return {
    groupId,
    strategy: "all",
    onBranchFailure: "halt",
    thresholdGates: [],
    conflictGates: [],
  };
}

function needsOutputs(policy: FanoutPolicy): boolean {
  return (policy.thresholdGates ?? []).length > 0 || (policy.conflictGates ?? []).length > 0;
}

/** The group's sync decision from graph state; branch state is read by position. */
function groupDecision(
  state: SequentialState,
  steps: readonly StepDefinition[],
  index: StepIndex,
  policy: FanoutPolicy,
  keys: ReadonlySet<string> | undefined,
): SyncDecision {
  const positions = index.groups.get(policy.groupId) ?? [];
  if (!needsOutputs(policy)) {
    let successCount = 0;
    let failureCount = 0;
    for (const at of positions) {
      const status = state.steps[at]?.status;
      if (status === "succeeded") successCount += 1;
      else if (status === "failed" || status === undefined) failureCount += 1;
    }
    return countedSyncDecision(policy, {
      branchCount: positions.length,
      successCount,
      failureCount,
    });
  }
  const results: BranchResult[] = [];
  for (const at of positions) {
    const def = steps[at];
    if (def === undefined) continue;
    const step = state.steps[at];
    const result: BranchResult = { stepId: def.id, status: step?.status ?? "failed" };
    if (step?.outputs !== undefined) result.outputs = step.outputs;
    results.push(result);
  }
  return evaluateFanoutSync(policy, results, keys);
}

function planGroup(
  state: SequentialState,
  index: StepIndex,
  start: number,
  steps: readonly StepDefinition[],
  group: readonly StepDefinition[],
  given: FanoutPolicy | undefined,
  keys: ReadonlySet<string> | undefined,
): SequentialPlan | "proceed" {
  const first = group[0];
  const groupId = first === undefined ? undefined : groupIdOf(first);
  if (first === undefined || groupId === undefined)
    return { type: "failed", stepId: first?.id ?? "unknown", reason: "fanout group is empty" };
  const branches: { stepId: string; attempt: number; contextFrom: string[] }[] = [];
  for (const [offset, def] of group.entries()) {
    const step = index.stateAt(state, start + offset, def.id);
    if (step === undefined)
      return { type: "failed", stepId: def.id, reason: "step state is missing" };
    if (step.status === "running")
      return { type: "blocked", stepId: def.id, reason: "step is already running" };
    if (step.status === "succeeded" || retryExhausted(step, def)) continue;
    const missing = missingContext(state, index, def);
    if (missing !== undefined)
      return { type: "blocked", stepId: def.id, reason: `waiting for context from ${missing}` };
    branches.push({
      stepId: def.id,
      attempt: step.attempts + 1,
      contextFrom: def.contextFrom ?? [],
    });
  }
  if (branches.length > 0) return { type: "run_fanout", groupId, branches };
  const policy = given ?? defaultPolicy(groupId);
  const decision = groupDecision(state, steps, index, policy, keys);
  switch (decision.decision) {
    case "proceed":
      return "proceed";
    case "halt":
      return { type: "failed", stepId: first.id, reason: decision.reason, syncDecision: decision };
    case "pause":
      return { type: "paused", stepId: first.id, reason: decision.reason, syncDecision: decision };
    case "escalate":
      return {
        type: "escalated",
        stepId: first.id,
        reason: decision.reason,
        syncDecision: decision,
      };
  }
}

/** The next action for a graph in `state`, walking the definitions in order. */
export function planSequentialTransition(
  state: SequentialState,
  steps: readonly StepDefinition[],
  policies: ReadonlyMap<string, FanoutPolicy>,
  keys?: ReadonlySet<string>,
): SequentialPlan {
  const running = state.steps.find((s) => s.status === "running");
  if (running !== undefined)
    return { type: "blocked", stepId: running.stepId, reason: "step is already running" };
  const index = new StepIndex(steps);
  let at = 0;
  while (at < steps.length) {
    const def = steps[at] as StepDefinition;
    const groupId = groupIdOf(def);
    if (groupId !== undefined) {
      let end = at;
      while (end < steps.length && groupIdOf(steps[end] as StepDefinition) === groupId) end += 1;
      const group = steps.slice(at, end);
      const plan = planGroup(state, index, at, steps, group, policies.get(groupId), keys);
      if (plan === "proceed") {
        at = end;
        continue;
      }
      return plan;
    }
    const plan = planStep(state, index, at, def);
    if (plan !== undefined) return plan;
    at += 1;
  }
  return { type: "complete" };
}

function updateStep(
  state: SequentialState,
  stepId: string,
  update: (step: StepState) => StepState,
): void {
  const at = state.steps.findIndex((s) => s.stepId === stepId);
  const step = state.steps[at];
  if (step !== undefined) state.steps[at] = update(step);
}

function without<K extends keyof StepState>(step: StepState, ...keys: K[]): StepState {
  const next = { ...step };
  for (const key of keys) delete next[key];
  return next;
}

/** The graph state after `event`; an event that does not fit leaves the step as it was. */
export function transitionSequential(
  state: SequentialState,
  event: SequentialEvent,
): SequentialState {
  const next: SequentialState = { ...state, steps: state.steps.map((s) => ({ ...s })) };
  switch (event.type) {
    case "start_step":
      updateStep(next, event.stepId, (step) =>
        step.status === "running" || step.status === "succeeded"
          ? step
          : {
              ...without(step, "completedAt", "outputs", "error"),
              status: "running",
              attempts: step.attempts + 1,
              startedAt: event.at,
            },
      );
      next.status = "running";
      break;
    case "step_succeeded": {
      const { stepId, receiptId } = event.admissionWitness;
      if (stepId === "" || receiptId === "") break;
      updateStep(next, stepId, (step) => {
        if (step.status !== "running") return step;
        const done: StepState = {
          ...without(step, "outputs", "error"),
          status: "succeeded",
          completedAt: event.at,
          receiptId,
        };
        if (event.outputs !== undefined) done.outputs = event.outputs;
        return done;
      });
      break;
    }
    case "step_failed":
      updateStep(next, event.stepId, (step) =>
        step.status !== "running"
          ? step
          : {
              ...without(step, "outputs"),
              status: "failed",
              completedAt: event.at,
              error: event.error,
            },
      );
      break;
    case "step_skipped":
      updateStep(next, event.stepId, (step) =>
        step.status !== "pending"
          ? step
          : { ...without(step, "outputs", "error"), status: "skipped", completedAt: event.at },
      );
      break;
    case "complete":
      if (next.steps.every((s) => s.status !== "pending" && s.status !== "running"))
        next.status = "succeeded";
      break;
    case "pause_graph":
      next.status = "paused";
      break;
    case "escalate_graph":
      next.status = "escalated";
      break;
    case "fail_graph":
      next.status = "failed";
      break;
  }
  return next;
}
