/**
 * Turns the pasted "Answer JSON" into `runs.answer`'s `answers` map (keyed by request id).
 * Accepted: the map itself (every key a pending request id), or — when exactly one request
 * is pending — that request's bare answer.
 */
export type AnswersResult =
  { ok: true; answers: Record<string, unknown> } | { ok: false; error: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export function parseAnswers(text: string, pendingIds: readonly string[]): AnswersResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `Answer JSON is not valid JSON: ${(error as Error).message}` };
  }
  if (isObject(value)) {
    const keys = Object.keys(value);
    if (keys.length > 0 && keys.every((k) => pendingIds.includes(k))) {
      return { ok: true, answers: value };
    }
  }
  if (pendingIds.length === 1 && pendingIds[0] !== undefined) {
    return { ok: true, answers: { [pendingIds[0]]: value } };
  }
  return {
    ok: false,
    error: `Answer JSON must be an object keyed by request id (${pendingIds.join(", ")})`,
  };
}

/** The template the textarea starts with. */
export function answersTemplate(pendingIds: readonly string[]): string {
  return JSON.stringify(Object.fromEntries(pendingIds.map((id) => [id, {}])), null, 2);
}
