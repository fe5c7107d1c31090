/**
 * Policy approval of graph steps, as upstream runx admits tools whose capability declares
 * `approval: Policy` (of ours, `http.execute` and `command.execute`): the step must be declared
 * `mutation: true`, and the graph must carry a guard on it of exactly
 * `<gate>.approval_decision.data.approved` `equals: true`, where `<gate>` is a
 * `run: {type: approval}` step that succeeded with that value. Without such evidence the step
 * is refused before its tool is called. Pure.
 */
import type { GraphDoc, GraphStep } from "./document.js";
import { effectiveRetry } from "./plan.js";
import { evaluateCondition } from "./references.js";
import { scopeOf, stepState } from "./state.js";
import type { GraphState } from "./state.js";

/**
 * Native tools whose calls need policy approval evidence: the ones upstream's capability
 * catalog marks `approval: Policy` (an arbitrary request or command whose effect the runtime
 * cannot bound by itself). `fs.write` and `fs.apply_bundle` are bounded by workspace
 * containment and are not in the set, as upstream has them.
 */
export const POLICY_APPROVAL_TOOLS: ReadonlySet<string> = new Set([
  "http.execute",
  "command.execute",
]);

const APPROVED_FIELD = ".approval_decision.data.approved";

/**
 * The approval gate steps whose approval admits `step` (empty when there is none), followed
 * by the gates this nested graph inherited from the step of its enclosing graph (upstream's
 * inherited policy approval references).
 */
export function approvingGates(doc: GraphDoc, state: GraphState, step: GraphStep): string[] {
  const gates: string[] = [];
  for (const guard of doc.guards) {
    if (guard.step !== step.id || guard.equals !== true || guard.not_equals !== undefined) continue;
    if (!guard.field.ref.endsWith(APPROVED_FIELD)) continue;
    const gate = doc.steps.find((candidate) => candidate.id === guard.field.step);
    if (gate === undefined || gate.kind !== "run" || gate.run.type !== "approval") continue;
    if (stepState(state, gate.id).status !== "succeeded") continue;
    if (evaluateCondition(guard, scopeOf(state)) !== true) continue;
    gates.push(gate.id);
  }
  return [...gates, ...(state.inherited_policy_approval ?? [])];
}

/** Why a policy-approval tool step may not run (a graph failure of its own code). */
export interface PolicyApprovalRefusal {
  code: "POLICY_APPROVAL_REQUIRED";
  disposition: "blocked";
  reason: string;
  stepId: string;
}

/** The refusal of a policy-approval tool step without evidence, or undefined. */
export function policyApprovalFailure(
  doc: GraphDoc,
  state: GraphState,
  step: GraphStep,
): PolicyApprovalRefusal | undefined {
  if (step.kind !== "tool" || !POLICY_APPROVAL_TOOLS.has(step.tool)) return undefined;
  if (!effectiveRetry(step).mutating)
    return {
      code: "POLICY_APPROVAL_REQUIRED",
      disposition: "blocked",
      reason: `policy capability '${step.tool}' must be declared as a mutating graph step (mutation: true)`,
      stepId: step.id,
    };
  if (approvingGates(doc, state, step).length > 0) return undefined;
  return {
    code: "POLICY_APPROVAL_REQUIRED",
    disposition: "blocked",
    reason: `policy capability '${step.tool}' requires an exact approved run:approval guard (policy.guards: {step: ${step.id}, field: <gate>${APPROVED_FIELD}, equals: true})`,
    stepId: step.id,
  };
}
