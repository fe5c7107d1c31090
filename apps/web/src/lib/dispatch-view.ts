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
