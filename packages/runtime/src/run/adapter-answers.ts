/**
 * Answers to the questions an adapter asked (`needs_input`): checked
 * against the pending request before a paused run is taken, then carried into the new packet
 * as `answers[]`. Pure. An answer is task input, never approval.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { RunRequest } from "../contracts/envelope.js";

/** A question the adapter asked through its manifest. */
export type DispatchQuestion = { question_id: string; prompt: string; answer_schema?: unknown };

const SCHEMA_TYPES: Readonly<Record<string, (v: unknown) => boolean>> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number",
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  array: (v) => Array.isArray(v),
  object: (v) => isJsonObject(v),
};

/**
 * Checks the caller's answer to a `needs_input` request: an object with an answer for every
 * question (and nothing else), each of the type its `answer_schema` names. Returns the
 * packet's `answers[]` in question order.
 */
export function packetAnswers(
  request: RunRequest,
  answer: unknown,
): Array<{ question_id: string; value: unknown }> {
  const path = `answers.${request.id}`;
  const invocation = request.kind === "agent_act" ? request.invocation : {};
  const questions = Array.isArray(invocation.questions)
    ? (invocation.questions as DispatchQuestion[])
    : [];
  if (!isJsonObject(answer))
    throw new RuntimeError(
      "ANSWERS_INVALID",
      `${path} must be an object keyed by question_id (${questions.map((q) => q.question_id).join(", ")})`,
      { path },
    );
  const ids = new Set(questions.map((q) => q.question_id));
  for (const key of Object.keys(answer)) {
    if (!ids.has(key))
      throw new RuntimeError("ANSWERS_INVALID", `${path}.${key}: no such question`, {
        path: `${path}.${key}`,
      });
  }
  return questions.map((q) => {
    const value = answer[q.question_id];
    if (value === undefined)
      throw new RuntimeError("ANSWERS_INVALID", `${path}.${q.question_id}: no answer given`, {
        path: `${path}.${q.question_id}`,
      });
    const type = (q.answer_schema as { type?: unknown } | undefined)?.type;
    const check = typeof type === "string" ? SCHEMA_TYPES[type] : undefined;
    if (check !== undefined && !check(value))
      throw new RuntimeError(
        "ANSWERS_INVALID",
        `${path}.${q.question_id}: the answer must be of type ${String(type)}`,
        { path: `${path}.${q.question_id}` },
      );
    return { question_id: q.question_id, value };
  });
}

/** True for the request a `needs_input` dispatch pauses on. */
export function isAdapterQuestions(request: RunRequest): boolean {
  return request.kind === "agent_act" && request.invocation.type === "adapter_questions";
}
