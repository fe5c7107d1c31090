/**
 * The resume document `{answers: {}, approvals: {}}`, checked against a paused
 * run's pending requests. Pure. Agent or caller work goes under `answers`; human decisions go
 * under `approvals` and nowhere else — a decision offered under `answers` is refused.
 */
import { RuntimeError } from "../errors.js";
import type { RunRequest } from "../contracts/envelope.js";

/** One human decision as the resume document states it. */
export interface ApprovalAnswer {
  approved: boolean;
  reason?: string;
}

/** A checked resume document. */
export interface ResumeAnswers {
  answers: Record<string, unknown>;
  approvals: Record<string, ApprovalAnswer>;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fail(message: string, path: string): RuntimeError {
  return new RuntimeError("ANSWERS_INVALID", message, { path });
}

/** Parses the resume document's JSON value; refuses unknown top-level keys and bad shapes. */
export function parseResumeDocument(value: unknown): ResumeAnswers {
  if (!isPlainObject(value)) throw fail("the resume document must be a JSON object", "$");
  for (const key of Object.keys(value)) {
    if (key !== "answers" && key !== "approvals") {
      throw fail(`unknown top-level key "${key}" (expected answers and approvals)`, key);
    }
  }
  const answers = value.answers ?? {};
  const approvals = value.approvals ?? {};
  if (!isPlainObject(answers))
    throw fail("answers must be an object keyed by request id", "answers");
  if (!isPlainObject(approvals)) {
    throw fail("approvals must be an object keyed by gate id", "approvals");
  }
  const decisions: Record<string, ApprovalAnswer> = {};
  for (const [id, decision] of Object.entries(approvals)) {
    if (typeof decision === "boolean") decisions[id] = { approved: decision };
    else if (isPlainObject(decision) && typeof decision.approved === "boolean") {
      const extra = Object.keys(decision).filter((k) => k !== "approved" && k !== "reason");
      if (extra.length > 0)
        throw fail(`unknown field "${extra[0]}"`, `approvals.${id}.${extra[0]}`);
      if (decision.reason !== undefined && typeof decision.reason !== "string") {
        throw fail("reason must be a string", `approvals.${id}.reason`);
      }
      decisions[id] = {
        approved: decision.approved,
        ...(typeof decision.reason === "string" ? { reason: decision.reason } : {}),
      };
    } else {
      throw fail("an approval is true, false or {approved, reason?}", `approvals.${id}`);
    }
  }
  return { answers: { ...answers }, approvals: decisions };
}

/**
 * Checks every answer and decision against the pending requests: ids must be pending, an
 * approval id under `answers` is refused (only a human decision resolves a gate), and an
 * approval decision for a non-approval request is refused.
 */
export function checkAgainstRequests(doc: ResumeAnswers, pending: readonly RunRequest[]): void {
  const byId = new Map(pending.map((r) => [r.id, r]));
  for (const id of Object.keys(doc.answers)) {
    const request = byId.get(id);
    if (request === undefined) throw fail(`no pending request "${id}"`, `answers.${id}`);
    if (request.kind === "approval") {
      throw new RuntimeError(
        "APPROVAL_NOT_ANSWERABLE",
        `"${id}" is an approval gate: only a human decision under "approvals" can resolve it`,
        { path: `answers.${id}` },
      );
    }
  }
  for (const id of Object.keys(doc.approvals)) {
    const request = byId.get(id);
    if (request === undefined) throw fail(`no pending approval "${id}"`, `approvals.${id}`);
    if (request.kind !== "approval") {
      throw fail(
        `"${id}" is not an approval gate; put its answer under "answers"`,
        `approvals.${id}`,
      );
    }
  }
}
