/**
 * Graph actions and outcomes, and planning of one runnable step: policy guards, context
 * sources, input and idempotency-key resolution, and the human gate of approval steps. Pure.
 */
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { GraphDoc, GraphStep } from "./document.js";
import { effectiveRetry } from "./plan.js";
import { approvingGates, policyApprovalFailure } from "./policy-approval.js";
import { evaluateCondition, resolveIdempotencyKey, resolveStepInputs } from "./references.js";
import { scopeOf, stepState } from "./state.js";
import type { ApprovalRecord, GraphState, StepOutcomeStatus } from "./state.js";

/** Retry metadata recorded on each attempt's receipt. */
export interface RetryMetadata {
  attempt: number;
  max_attempts: number;
  rule_fired: "initial_attempt" | "retry_attempt";
}

/**
 * Run one step. Approval steps carry the recorded human decision: the runner seals the step
 * with `approvalDecisionPacket` and reports success (approved) or declined (denied). Decisions
 * on a tool's own approval requests are in `state.approvals`, by request id.
 */
export interface ExecuteStepAction {
  kind: "execute_step";
  stepId: string;
  attempt: number;
  resolvedInputs: JsonObject;
  retry: RetryMetadata;
  mutating: boolean;
  idempotencyKey?: string;
  groupId?: string;
  approval?: ApprovalRecord & { gateId: string };
  /**
   * The approval gates that admit this mutating step (graph/policy-approval.ts); a nested graph
   * it runs inherits them as policy approval evidence.
   */
  policyApproval?: string[];
}

/** Why a graph ended without completing. */
export type GraphFailureCode =
  | "STEP_FAILED"
  | "RETRY_EXHAUSTED"
  | "RETRY_REFUSED"
  | "GUARD_BLOCKED"
  | "CONTEXT_BLOCKED"
  | "GRAPH_REFERENCE_MISSING"
  | "FANOUT_HALTED"
  | "FANOUT_ESCALATED"
  | "APPROVAL_DENIED"
  | "STEP_DECLINED"
  | "RESULT_CONFLICT"
  | "POLICY_APPROVAL_REQUIRED";

/** Terminal failure; `disposition` is the seal disposition of the graph receipt. */
export interface FailAction {
  kind: "fail";
  code: GraphFailureCode;
  disposition: "failed" | "blocked" | "declined";
  reason: string;
  stepId?: string;
  groupId?: string;
}

/** What to do next. */
export type GraphAction =
  | ExecuteStepAction
  | { kind: "pause"; requests: RunRequest[] }
  | { kind: "complete"; result: JsonObject }
  | FailAction;

/** What the runner reports for one execution of a step. */
export interface StepOutcome {
  status: StepOutcomeStatus;
  output?: JsonObject;
  receiptId?: string;
  receiptDigest?: string;
  requests?: RunRequest[];
  reason?: string;
  /** A paused nested graph's state, kept on the step until it runs again (opaque JSON). */
  subgraph?: unknown;
}

/** A decision supplied on resume; only `actor: "human"` is accepted. */
export interface ApprovalDecisionInput {
  approved: boolean;
  actor: string;
  reason?: string;
}

/** A terminal failure action. */
export function fail(
  code: GraphFailureCode,
  disposition: FailAction["disposition"],
  reason: string,
  at: { stepId?: string; groupId?: string } = {},
): FailAction {
  return { kind: "fail", code, disposition, reason, ...at };
}

/** True for `run: {type: approval}` steps (human gates handled by the machine). */
export function isApprovalStep(step: GraphStep): boolean {
  return step.kind === "run" && step.run.type === "approval";
}

/** The `runx.approval.decision.v1` packet of a decided approval step (idempotency key excluded). */
export function approvalDecisionPacket(action: ExecuteStepAction): JsonObject {
  const decision = action.approval;
  if (decision === undefined)
    throw new RuntimeError("GRAPH_STATE_INVALID", `step '${action.stepId}' has no decision`, {
      step_id: action.stepId,
    });
  const packet: JsonObject = {
    schema: "runx.approval.decision.v1",
    gate_id: decision.gateId,
    approved: decision.approved,
    status: decision.approved ? "approved" : "denied",
    actor: decision.actor,
  };
  const gateType = action.resolvedInputs.gate_type;
  if (typeof gateType === "string") packet.gate_type = gateType;
  if (decision.reason !== undefined) packet.reason = decision.reason;
  return packet;
}

function approvalRequest(step: GraphStep, gateId: string, inputs: JsonObject): RunRequest {
  const reason =
    typeof inputs.reason === "string" ? inputs.reason : `step '${step.id}' needs approval`;
  const gate: { id: string; reason: string; type?: string; summary?: unknown } = {
    id: gateId,
    reason,
  };
  if (typeof inputs.gate_type === "string") gate.type = inputs.gate_type;
  if (inputs.summary !== undefined) gate.summary = inputs.summary;
  return { id: gateId, kind: "approval", gate };
}

function guardFailure(doc: GraphDoc, state: GraphState, step: GraphStep): FailAction | undefined {
  for (const guard of doc.guards.filter((g) => g.step === step.id)) {
    if (evaluateCondition(guard, scopeOf(state)) === true) continue;
    const [op, value] =
      guard.equals !== undefined ? ["==", guard.equals] : ["!=", guard.not_equals];
    const rule = `transition policy blocked step '${step.id}': expected ${guard.field.ref} ${op} ${JSON.stringify(value)}`;
    const reason = guard.reason !== undefined ? `${guard.reason} (${rule})` : rule;
    return fail("GUARD_BLOCKED", "blocked", reason, { stepId: step.id });
  }
  return undefined;
}

/** Plans the next execution of a runnable step (guards, context, inputs, approval gate). */
export function planStep(doc: GraphDoc, state: GraphState, step: GraphStep): GraphAction {
  const guard = guardFailure(doc, state, step);
  if (guard !== undefined) return guard;
  const unapproved = policyApprovalFailure(doc, state, step);
  if (unapproved !== undefined) return { kind: "fail", ...unapproved };
  for (const dep of step.depends_on)
    if (stepState(state, dep).status !== "succeeded")
      return fail(
        "CONTEXT_BLOCKED",
        "blocked",
        `step '${step.id}' is blocked: '${dep}' has not succeeded`,
        {
          stepId: step.id,
        },
      );
  const retry = effectiveRetry(step);
  const attempt = stepState(state, step.id).attempts + 1;
  const action: ExecuteStepAction = {
    kind: "execute_step",
    stepId: step.id,
    attempt,
    resolvedInputs: {},
    retry: {
      attempt,
      max_attempts: retry.max_attempts,
      rule_fired: attempt === 1 ? "initial_attempt" : "retry_attempt",
    },
    mutating: retry.mutating,
  };
  try {
    action.resolvedInputs = resolveStepInputs(step, scopeOf(state), {
      ambient: step.kind === "skill",
    });
    if (retry.idempotency_key !== undefined)
      action.idempotencyKey = resolveIdempotencyKey(
        retry.idempotency_key,
        step.id,
        state.inputs,
        action.resolvedInputs,
      );
  } catch (error) {
    if (!(error instanceof RuntimeError) || error.code !== "GRAPH_REFERENCE_MISSING") throw error;
    return fail("GRAPH_REFERENCE_MISSING", "failed", error.message, { stepId: step.id });
  }
  if (step.fanout_group !== undefined) action.groupId = step.fanout_group;
  if (retry.mutating) {
    const gates = approvingGates(doc, state, step);
    if (gates.length > 0) action.policyApproval = gates;
  }
  if (isApprovalStep(step)) {
    const gateId =
      typeof action.resolvedInputs.gate_id === "string" ? action.resolvedInputs.gate_id : step.id;
    const decision = state.approvals[gateId];
    if (decision === undefined)
      return { kind: "pause", requests: [approvalRequest(step, gateId, action.resolvedInputs)] };
    action.approval = { gateId, ...decision };
  }
  return action;
}
