/**
 * How the run page words a dispatch attempt's receipt check, and the key its live refresh
 * compares (a new attempt, one settling, or one launching changes it).
 */
import type { DispatchState } from "./api-types";

type Attempt = DispatchState["attempts"][number];

/** "verified", "unverified", "invalid: <check>" or "missing" (the DAG panel's wording). */
export function attemptVerification(attempt: Pick<Attempt, "receipt" | "verified">): {
  status: string;
  text: string;
} {
  const { status, failed_check: check } = attempt.receipt;
  if (status === "invalid" || !attempt.verified) {
    return { status: "invalid", text: `invalid: ${check ?? "dispatch_document_mismatch"}` };
  }
  return { status, text: status };
}

/** Changes whenever an attempt is recorded or one starts or stops being in flight. */
export function dispatchKey(state: DispatchState | null): string {
  if (state === null) return "";
  return [
    ...state.attempts.map((a) => `${a.receipt_id}:${a.dispatch.status}`),
    ...state.running.map((r) => `running:${r.step_id}#${r.attempt}`),
  ].join("|");
}

/**
 * The Failure column of an attempt: its failure code, or the question ids of an attempt that
 * ended asking for input (status `blocked` with questions, no failure), else null.
 */
export function attemptNote(
  dispatch: Pick<Attempt["dispatch"], "failure" | "questions">,
): { text: string; title: string } | null {
  if (dispatch.failure !== null) {
    return { text: dispatch.failure.code, title: dispatch.failure.message };
  }
  const ids = dispatch.questions.map((q) => q.question_id);
  return ids.length > 0
    ? { text: `needs input: ${ids.join(", ")}`, title: "the adapter asked; the run needs answers" }
    : null;
}
