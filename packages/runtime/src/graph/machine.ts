/**
 * The graph run state machine as pure functions over a serialisable `GraphState`:
 * `nextActions` plans, the runner executes, `applyStepOutcome` records, `resumeGraph` takes
 * human decisions. The runner may execute a fanout group's branches in any order or at once;
 * planning treats them as one group and evaluates it once every branch has settled.
 */
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { FanoutGroup, GraphDoc, GraphStep } from "./document.js";
import { fail, isApprovalStep, planStep } from "./actions.js";
import type { ApprovalDecisionInput, GraphAction, StepOutcome } from "./actions.js";
import { fanoutDecisionKey, fanoutGateId, fanoutPauseRequest } from "./fanout.js";
import { effectiveRetry, producerKeys, retryRefusals, sharesResultKey } from "./plan.js";
import { cloneState, isSettled, planUnits, settle, stepState } from "./state.js";
import type { ApprovalRecord, GraphState, GraphStatus, StepAttempt } from "./state.js";

export type * from "./state.js";
export type * from "./actions.js";

/** Actions for one sequential step, or undefined when it is done and planning moves on. */
function stepActions(doc: GraphDoc, state: GraphState, step: GraphStep): GraphAction[] | undefined {
  const entry = stepState(state, step.id);
  const at = { stepId: step.id };
  switch (entry.status) {
    case "succeeded":
    case "skipped":
      return undefined;
    case "declined":
      return isApprovalStep(step)
        ? [fail("APPROVAL_DENIED", "declined", `approval for step '${step.id}' was denied`, at)]
        : [fail("STEP_DECLINED", "declined", entry.reason ?? `step '${step.id}' was declined`, at)];
    case "paused":
      return [{ kind: "pause", requests: entry.requests ?? [] }];
    case "failed": {
      if (!isSettled(step, entry)) return [planStep(doc, state, step)];
      const max = effectiveRetry(step).max_attempts;
      const why = entry.reason === undefined ? "" : `: ${entry.reason}`;
      return max > 1
        ? [
            fail(
              "RETRY_EXHAUSTED",
              "failed",
              `step '${step.id}' failed and its retry budget is exhausted${why}`,
              at,
            ),
          ]
        : [fail("STEP_FAILED", "failed", `step '${step.id}' failed${why}`, at)];
    }
    case "pending":
      return [planStep(doc, state, step)];
  }
}

function groupActions(
  doc: GraphDoc,
  state: GraphState,
  group: FanoutGroup,
  branches: GraphStep[],
): GraphAction[] | undefined {
  const decided = state.groups[group.id];
  const at = { groupId: group.id };
  if (decided !== undefined) {
    const why = `fanout group '${group.id}': ${decided.reason}`;
    switch (decided.decision) {
      case "proceed":
        return undefined;
      case "halt":
        return [fail("FANOUT_HALTED", "failed", why, at)];
      case "escalate":
        return [fail("FANOUT_ESCALATED", "blocked", why, at)];
      case "declined":
        return [fail("APPROVAL_DENIED", "declined", why, at)];
      case "pause": {
        const record = state.sync.filter((r) => r.group_id === group.id).pop();
        if (record === undefined) break;
        return [{ kind: "pause", requests: [fanoutPauseRequest(record)] }];
      }
    }
  }
  const executions: GraphAction[] = [];
  const requests: RunRequest[] = [];
  for (const branch of branches) {
    const entry = stepState(state, branch.id);
    if (isSettled(branch, entry)) continue;
    const action =
      entry.status === "paused"
        ? { kind: "pause" as const, requests: entry.requests ?? [] }
        : planStep(doc, state, branch);
    if (action.kind === "fail") return [action];
    if (action.kind === "pause") requests.push(...action.requests);
    else executions.push(action);
  }
  if (executions.length > 0) return executions;
  if (requests.length > 0) return [{ kind: "pause", requests }];
  throw new RuntimeError(
    "GRAPH_STATE_INVALID",
    `fanout group '${group.id}' settled without a decision`,
    at,
  );
}

/** The union of the successful producers' declared outputs (compat: the last step's output). */
function completion(doc: GraphDoc, state: GraphState): GraphAction {
  if (doc.result_from_defaulted) {
    const last = state.steps[state.steps.length - 1];
    return { kind: "complete", result: last?.status === "succeeded" ? (last.output ?? {}) : {} };
  }
  const result: JsonObject = {};
  const owner = new Map<string, GraphStep>();
  for (const id of doc.result_from) {
    const entry = stepState(state, id);
    const step = doc.steps.find((s) => s.id === id);
    if (entry.status !== "succeeded" || entry.output === undefined || step === undefined) continue;
    const keys = producerKeys(step) ?? Object.keys(entry.output);
    for (const key of keys) {
      const value = entry.output[key];
      if (value === undefined) continue;
      const other = owner.get(key);
      if (other !== undefined && !sharesResultKey(other, step))
        return fail(
          "RESULT_CONFLICT",
          "failed",
          `result producers '${other.id}' and '${id}' both emitted '${key}'`,
          {
            stepId: id,
          },
        );
      owner.set(key, step);
      result[key] = value;
    }
  }
  return { kind: "complete", result };
}

function checkState(doc: GraphDoc, state: GraphState): void {
  const ids = state.steps.map((s) => s.stepId).join("\n");
  if (state.graph !== doc.name || ids !== doc.steps.map((s) => s.id).join("\n"))
    throw new RuntimeError(
      "GRAPH_STATE_INVALID",
      `graph state does not belong to graph '${doc.name}'`,
      {
        graph: doc.name,
      },
    );
}

/** What to do next: step executions (several for a fanout group), a pause, or the end. */
export function nextActions(doc: GraphDoc, state: GraphState): GraphAction[] {
  checkState(doc, state);
  const refused = retryRefusals(doc)[0];
  if (refused !== undefined)
    return [fail("RETRY_REFUSED", "blocked", refused.reason, { stepId: refused.stepId })];
  for (const unit of planUnits(doc)) {
    const actions =
      "step" in unit
        ? stepActions(doc, state, unit.step)
        : groupActions(doc, state, unit.group, unit.branches);
    if (actions !== undefined) return actions;
  }
  return [completion(doc, state)];
}

function statusOf(actions: readonly GraphAction[], state: GraphState): GraphStatus {
  const first = actions[0];
  if (first?.kind === "complete") return "completed";
  if (first?.kind === "fail") return "failed";
  if (first?.kind === "pause") return "paused";
  return state.steps.some((s) => s.history.length > 0) ? "running" : "pending";
}

function settled(doc: GraphDoc, state: GraphState): GraphState {
  settle(doc, state);
  state.status = statusOf(nextActions(doc, state), state);
  return state;
}

/** A fresh state for a run of `doc` with validated graph inputs. */
export function createGraphState(
  doc: GraphDoc,
  inputs: JsonObject,
  options: { graphId?: string; inheritedPolicyApproval?: readonly string[] } = {},
): GraphState {
  const state: GraphState = {
    schema: "runx.graph_state.v1",
    graph: doc.name,
    status: "pending",
    inputs: JSON.parse(JSON.stringify(inputs)) as JsonObject,
    steps: doc.steps.map((s) => ({ stepId: s.id, status: "pending", attempts: 0, history: [] })),
    approvals: {},
    resolvedGates: [],
    groups: {},
    sync: [],
  };
  if (options.graphId !== undefined) state.graphId = options.graphId;
  if (options.inheritedPolicyApproval !== undefined && options.inheritedPolicyApproval.length > 0)
    state.inherited_policy_approval = [...options.inheritedPolicyApproval];
  return settled(doc, state);
}

/** Records one execution's outcome for a step that `nextActions` planned; returns the new state. */
export function applyStepOutcome(
  doc: GraphDoc,
  state: GraphState,
  stepId: string,
  outcome: StepOutcome,
): GraphState {
  const planned = nextActions(doc, state).find(
    (a) => a.kind === "execute_step" && a.stepId === stepId,
  );
  if (planned?.kind !== "execute_step")
    throw new RuntimeError("GRAPH_STATE_INVALID", `step '${stepId}' is not awaiting execution`, {
      step_id: stepId,
    });
  const next = cloneState(state);
  const entry = stepState(next, stepId);
  const attempt: StepAttempt = { attempt: planned.attempt, status: outcome.status };
  if (outcome.receiptId !== undefined) attempt.receiptId = entry.receiptId = outcome.receiptId;
  if (outcome.receiptDigest !== undefined)
    attempt.receiptDigest = entry.receiptDigest = outcome.receiptDigest;
  if (outcome.reason !== undefined) attempt.reason = entry.reason = outcome.reason;
  entry.history.push(attempt);
  delete entry.requests;
  delete entry.subgraph;
  if (outcome.status === "needs_agent" || outcome.status === "needs_approval") {
    if (outcome.requests === undefined || outcome.requests.length === 0)
      throw new RuntimeError("GRAPH_STATE_INVALID", `step '${stepId}' paused without requests`, {
        step_id: stepId,
      });
    entry.status = "paused";
    entry.requests = JSON.parse(JSON.stringify(outcome.requests)) as RunRequest[];
    if (outcome.subgraph !== undefined)
      entry.subgraph = JSON.parse(JSON.stringify(outcome.subgraph)) as unknown;
    return settled(doc, next);
  }
  entry.attempts = planned.attempt;
  entry.status =
    outcome.status === "success"
      ? "succeeded"
      : outcome.status === "failure"
        ? "failed"
        : "declined";
  if (outcome.status === "success")
    entry.output = JSON.parse(JSON.stringify(outcome.output ?? {})) as JsonObject;
  return settled(doc, next);
}

/**
 * Resumes a paused run with human decisions by request id. Decisions must answer pending
 * approval requests (else ANSWERS_INVALID) and come from a human (else APPROVAL_NOT_ANSWERABLE);
 * a run that is not paused is RESUME_REFUSED.
 * Paused steps become runnable again (the runner re-executes them with the caller's answers).
 */
export function resumeGraph(
  doc: GraphDoc,
  state: GraphState,
  decisions: { approvals?: Record<string, ApprovalDecisionInput> } = {},
): GraphState {
  const actions = nextActions(doc, state);
  const pause = actions[0];
  if (pause?.kind !== "pause")
    throw new RuntimeError("RESUME_REFUSED", "the graph run is not paused", { graph: doc.name });
  const pending = new Set(pause.requests.filter((r) => r.kind === "approval").map((r) => r.id));
  const next = cloneState(state);
  for (const [id, decision] of Object.entries(decisions.approvals ?? {})) {
    if (!pending.has(id))
      throw new RuntimeError("ANSWERS_INVALID", `no pending approval "${id}"`, {
        path: `approvals.${id}`,
      });
    if (decision.actor !== "human")
      throw new RuntimeError(
        "APPROVAL_NOT_ANSWERABLE",
        `approval "${id}" must be a human decision`,
        {
          path: `approvals.${id}`,
        },
      );
    const record: ApprovalRecord = { approved: decision.approved, actor: "human" };
    if (decision.reason !== undefined) record.reason = decision.reason;
    next.approvals[id] = record;
  }
  for (const [groupId, decided] of Object.entries(next.groups)) {
    const answer = next.approvals[fanoutGateId(groupId, decided.ruleFired)];
    if (decided.decision !== "pause" || answer === undefined) continue;
    if (answer.approved) {
      next.resolvedGates.push(fanoutDecisionKey(groupId, decided.ruleFired));
      delete next.groups[groupId];
    } else {
      const id = fanoutGateId(groupId, decided.ruleFired);
      next.groups[groupId] = {
        ...decided,
        decision: "declined",
        reason: `gate '${id}' was denied`,
      };
    }
  }
  for (const entry of next.steps)
    if (entry.status === "paused") {
      entry.status = "pending";
      delete entry.requests;
    }
  return settled(doc, next);
}
