/**
 * The `runx.skill_run.v1` envelope (spec §5.1): the one caller-facing document of a run.
 * Pure: derivations only, no I/O.
 */

/** Seal dispositions (receipt `seal.disposition`). */
export type Disposition =
  "closed" | "deferred" | "superseded" | "declined" | "blocked" | "failed" | "killed" | "timed_out";

/** Envelope status. */
export type RunStatus =
  "sealed" | "needs_agent" | "needs_approval" | "payment_required" | "needs_credential" | "failure";

/** Derived outcome. */
export type RunOutcome = "completed" | "deferred" | "blocked" | "failed";

/** A question of an `input` request. */
export interface InputQuestion {
  id: string;
  prompt: string;
  required: boolean;
  type: string;
  description?: string;
}

/** A pending request of a paused run (spec §5.2). */
export type RunRequest =
  | { id: string; kind: "input"; questions: InputQuestion[] }
  | {
      id: string;
      kind: "approval";
      gate: { id: string; reason: string; type?: string; summary?: unknown };
    }
  | { id: string; kind: "agent_act"; invocation: Record<string, unknown> };

/** The seal copy carried by the envelope. */
export interface RunClosure {
  disposition: Disposition;
  reason_code?: string;
  summary?: string;
}

/** `runx.skill_run.v1`. */
export interface SkillRunEnvelope {
  schema: "runx.skill_run.v1";
  status: RunStatus;
  outcome: RunOutcome;
  skill_name: string;
  runner: string;
  run_id: string;
  receipt_id: string | null;
  closure: RunClosure | null;
  result: Record<string, unknown> | null;
  requests: RunRequest[];
  next: string | null;
  answers_template?: { answers?: Record<string, unknown>; approvals?: Record<string, boolean> };
}

/** Outcome rule of §5.1: closure disposition first, then status. */
export function deriveOutcome(status: RunStatus, closure: RunClosure | null): RunOutcome {
  if (closure !== null) {
    switch (closure.disposition) {
      case "closed":
        return "completed";
      case "deferred":
        return "deferred";
      case "blocked":
      case "declined":
      case "superseded":
        return "blocked";
      default:
        return "failed";
    }
  }
  if (status === "sealed") return "completed";
  if (status === "failure") return "failed";
  return "deferred";
}

/** `needs_approval` when every pending request is an approval, else `needs_agent` (§5.1). */
export function pendingStatus(requests: readonly RunRequest[]): "needs_agent" | "needs_approval" {
  return requests.length > 0 && requests.every((r) => r.kind === "approval")
    ? "needs_approval"
    : "needs_agent";
}

/** The fail-closed answers template: non-approval ids → {}, approval ids → false. */
export function answersTemplate(
  requests: readonly RunRequest[],
): NonNullable<SkillRunEnvelope["answers_template"]> {
  const answers: Record<string, unknown> = {};
  const approvals: Record<string, boolean> = {};
  for (const r of requests) {
    if (r.kind === "approval") approvals[r.id] = false;
    else answers[r.id] = {};
  }
  return {
    ...(Object.keys(answers).length > 0 ? { answers } : {}),
    ...(Object.keys(approvals).length > 0 ? { approvals } : {}),
  };
}

/** Exit code of §8.3 for a run envelope. */
export function envelopeExitCode(envelope: SkillRunEnvelope): number {
  if (envelope.status === "sealed") return envelope.closure?.disposition === "closed" ? 0 : 1;
  if (envelope.status === "failure") return 1;
  return 2;
}

/** Builds an envelope, deriving outcome, next and the answers template. */
export function makeEnvelope(parts: {
  status: RunStatus;
  skillName: string;
  runner: string;
  runId: string;
  receiptId: string | null;
  closure: RunClosure | null;
  result: Record<string, unknown> | null;
  requests?: RunRequest[];
  /** Overrides the default `runx resume` instruction for pending runs. */
  next?: string;
}): SkillRunEnvelope {
  const requests = parts.requests ?? [];
  const pending = requests.length > 0;
  const status = pending ? pendingStatus(requests) : parts.status;
  const envelope: SkillRunEnvelope = {
    schema: "runx.skill_run.v1",
    status,
    outcome: deriveOutcome(status, parts.closure),
    skill_name: parts.skillName,
    runner: parts.runner,
    run_id: parts.runId,
    receipt_id: parts.receiptId,
    closure: parts.closure,
    result: parts.result,
    requests,
    next: pending ? (parts.next ?? `runx resume ${parts.runId} - --json`) : null,
  };
  if (pending) envelope.answers_template = answersTemplate(requests);
  return envelope;
}
