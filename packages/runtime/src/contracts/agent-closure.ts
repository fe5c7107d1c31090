/**
 * An agent's own closure. An agent answer may carry `closure: {disposition, reason_code?,
 * summary?}` beside its declared outputs: control metadata saying how the act ended (an agent
 * that refuses to bypass an approval answers `blocked`). It is not a declared output, so the
 * output contract is checked without it, and it decides the seal: any disposition other than
 * `closed` seals the act with that disposition (reason `agent_act_<disposition>`) instead of a
 * completed action. Pure.
 */
import type { ClosureDisposition } from "../receipts/model.js";

/** The dispositions an agent may close its act with. */
export const AGENT_CLOSURE_DISPOSITIONS: readonly ClosureDisposition[] = [
  "closed",
  "deferred",
  "superseded",
  "declined",
  "blocked",
  "failed",
  "killed",
  "timed_out",
];

/** How an agent answer closes its act. */
export interface AgentClosure {
  disposition: ClosureDisposition;
  reasonCode: string;
  summary: string;
}

/** A malformed `closure` in an agent answer: the field and what is wrong with it. */
export interface AgentClosureProblem {
  field: string;
  message: string;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with the answer's `closure`, or null when it is absent or well formed. */
export function agentClosureProblem(answer: unknown): AgentClosureProblem | null {
  if (!isObject(answer) || !Object.hasOwn(answer, "closure")) return null;
  const closure = answer.closure;
  if (!isObject(closure)) return { field: "closure", message: "must be an object" };
  if (!Object.hasOwn(closure, "disposition")) {
    return { field: "closure.disposition", message: "is required" };
  }
  const disposition = closure.disposition;
  if (typeof disposition !== "string") {
    return { field: "closure.disposition", message: "must be a string" };
  }
  if (!(AGENT_CLOSURE_DISPOSITIONS as readonly string[]).includes(disposition)) {
    return {
      field: "closure.disposition",
      message: `"${disposition}" is not supported (one of: ${AGENT_CLOSURE_DISPOSITIONS.join(", ")})`,
    };
  }
  return null;
}

/** The answer without its `closure`: what the declared output contract is checked against. */
export function withoutClosure<T>(answer: T): T {
  if (!isObject(answer) || !Object.hasOwn(answer, "closure")) return answer;
  const { closure: _closure, ...rest } = answer;
  return rest as T;
}

/**
 * The closure an answer states, or null when it states none (the act then closes as a
 * completed action, as before). Call only after agentClosureProblem found nothing.
 */
export function agentClosure(answer: unknown): AgentClosure | null {
  if (!isObject(answer) || !isObject(answer.closure)) return null;
  const disposition = answer.closure.disposition as ClosureDisposition;
  return {
    disposition,
    reasonCode: `agent_act_${disposition}`,
    summary: `agent act closed with ${disposition}`,
  };
}
