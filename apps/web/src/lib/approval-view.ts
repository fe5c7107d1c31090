/**
 * The approval card's words: who asked, the gate policy, whether anyone else can still
 * approve, and what a decision did to the run. Pure, so the card and the decision log say the
 * same thing and tests can hold them to it.
 */

/** A gate's policy as the API reports it. */
export interface GatePolicy {
  requiredApprovals: number;
  forbidInitiator: boolean;
}

/** "Started by ada" or where a run without a console initiator came from. */
export function whoAsked(initiator: string | null): string {
  return initiator !== null
    ? `Started by ${initiator} in the console`
    : "Started outside the console (the CLI, MCP or another host)";
}

/** The policy in plain words, with the approvals counted so far. */
export function policyText(policy: GatePolicy, approvals: number): string {
  const n = policy.requiredApprovals;
  const needs = `Needs ${n} approval${n === 1 ? "" : "s"} from ${n === 1 ? "an approver" : "distinct approvers"}`;
  const initiator = policy.forbidInitiator
    ? "; the operator who started the run may not approve"
    : "";
  return `${needs}${initiator}. ${approvals} of ${n} so far.`;
}

/**
 * True when fewer operators can still approve than approvals are missing: the gate cannot be
 * approved until someone is added (a lone admin who started the run, say).
 */
export function needsAnotherApprover(gate: {
  policy: GatePolicy;
  approversAvailable: number;
  decisions: ReadonlyArray<{ decision: string }>;
}): boolean {
  if (gate.decisions.some((d) => d.decision === "deny")) return false;
  const approved = gate.decisions.filter((d) => d.decision === "approve").length;
  return gate.approversAvailable < gate.policy.requiredApprovals - approved;
}

/** A run's seal as a person reads it (`closed` → completed). */
export function outcomeWord(disposition: string | null | undefined): string {
  switch (disposition) {
    case "closed":
      return "completed";
    case "killed":
      return "cancelled";
    case "timed_out":
      return "timed out";
    case null:
    case undefined:
      return "unknown";
    default:
      return disposition;
  }
}

/** What the API reports about the run after a decision (a settled envelope, or still running). */
export interface RunAfterDecision {
  state: "settled" | "running";
  status?: string;
  disposition?: string | null;
}

/** The result of a decision in one sentence. */
export function decisionResult(options: {
  decision: "approve" | "deny";
  approvals: number;
  required: number;
  releasable: boolean;
  run: RunAfterDecision | null;
}): string {
  const { run } = options;
  const after =
    run === null
      ? ""
      : run.state === "running"
        ? " The run resumed and is still running."
        : run.status === "sealed"
          ? ` The run resumed and sealed: ${outcomeWord(run.disposition)}.`
          : run.status === "needs_approval" || run.status === "needs_agent"
            ? ` The run resumed and is waiting again (${run.status === "needs_approval" ? "for an approval" : "for an agent"}).`
            : ` The run resumed: ${run.status ?? "unknown"}.`;
  if (options.decision === "deny") return `Denied.${after}`;
  if (!options.releasable) {
    return `Approval recorded (${options.approvals} of ${options.required}); waiting for more approvers.`;
  }
  return `Approved (${options.approvals} of ${options.required}).${after}`;
}
