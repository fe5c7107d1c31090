/**
 * The `runx.skill_run.v1` envelope: the one caller-facing document of a run.
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

/** A pending request of a paused run. */
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

/** One executed step of a graph run as its trace names it: a reference, never its payload. */
export interface GraphTraceStep {
  step_id: string;
  /** What ran: the skill reference, `tool:<name>`, or `run:<type>` for an inline source. */
  skill: string;
  status: "success" | "failure";
  receipt_id: string;
}

/** The compact trace of a sealed graph run (graph runs only). */
export interface GraphTrace {
  graph: string;
  /** `succeeded`, `failed`, `blocked` or `deferred`. */
  status: string;
  steps: GraphTraceStep[];
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
  /** A sealed graph run's steps by reference (absent for every other run). */
  trace?: GraphTrace;
  /** For `needs_credential`: the unmet requirement and the commands that would satisfy it. */
  credential_requirement?: {
    credential: string;
    provider: string;
    auth_modes: string[];
    env: string[];
    setup: string[];
  };
}

/** The outcome rule: closure disposition first, then status. */
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

/**
 * What a run record means to a person: its status, seal disposition and pending requests read
 * together (a `sealed` run can have been declined, blocked or cancelled). A closed set, the
 * contract `schemas/console/run-outcome.schema.json`; the dispositions keep their seal names
 * (`killed` is shown as "cancelled").
 */
export const DETAILED_OUTCOMES = [
  "running",
  "completed",
  "paused_for_agent",
  "paused_for_approval",
  "paused_for_input",
  "blocked",
  "declined",
  "failed",
  "killed",
  "timed_out",
  "superseded",
] as const;

/** One of DETAILED_OUTCOMES. */
export type DetailedOutcome = (typeof DETAILED_OUTCOMES)[number];

/** Seal dispositions that are their own outcome whatever the finished status (sealed, failure). */
export const NAMED_END_DISPOSITIONS = [
  "blocked",
  "declined",
  "killed",
  "timed_out",
  "superseded",
] as const satisfies readonly Disposition[];

/** The parts of a run record its outcome is read from. */
export interface OutcomeFacts {
  /** The run record's status (`running`, `sealed`, `needs_agent`, `needs_approval`, `failure`). */
  status: string;
  disposition: string | null;
  /** Kinds of the pending requests (`agent_act`, `input`, `approval`), in any order. */
  requestKinds: readonly string[];
}

/**
 * The outcome of a run record. Only a `sealed` run whose seal is `closed` is completed; a
 * finished run with any other disposition named in NAMED_END_DISPOSITIONS has that outcome,
 * and every other finished run (disposition `failed`, missing or unknown) is failed, so a
 * record this release cannot read is never shown as a success. A run waiting for an agent and
 * for input shows the agent; one waiting only for input (answers to questions, or the
 * `interrupted` request of a recovered start) is paused for input.
 */
export function deriveDetailedOutcome(facts: OutcomeFacts): DetailedOutcome {
  switch (facts.status) {
    case "running":
      return "running";
    case "needs_approval":
      return "paused_for_approval";
    case "needs_agent":
      return !facts.requestKinds.includes("agent_act") && facts.requestKinds.includes("input")
        ? "paused_for_input"
        : "paused_for_agent";
  }
  if (facts.status === "sealed" && facts.disposition === "closed") return "completed";
  const named = NAMED_END_DISPOSITIONS.find((d) => d === facts.disposition);
  return named ?? "failed";
}

/** Whether a run with this outcome can still change (it runs or waits for someone). */
export function outcomeIsOpen(outcome: DetailedOutcome): boolean {
  return outcome === "running" || outcome.startsWith("paused_for_");
}

/** `needs_approval` when every pending request is an approval, else `needs_agent`. */
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

/** The exit code of a run envelope (docs/cli.md). */
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
  trace?: GraphTrace;
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
  if (parts.trace !== undefined && !pending) envelope.trace = parts.trace;
  return envelope;
}
