/** The closure vocabulary shared by process-backed runners (receipt `seal.disposition`/`reason_code`). */

/** How a runner invocation ended. */
export type RunnerDisposition = "closed" | "failed" | "timed_out" | "killed";

/** The reason code recorded with each disposition. */
export type RunnerReasonCode =
  "process_closed" | "process_failed" | "process_timed_out" | "process_killed";

/** The reason code that goes with a disposition. */
export const REASON_CODE: Readonly<Record<RunnerDisposition, RunnerReasonCode>> = {
  closed: "process_closed",
  failed: "process_failed",
  timed_out: "process_timed_out",
  killed: "process_killed",
};

/** Bytes of stderr kept in a failure summary. */
export const STDERR_TAIL_BYTES = 2048;

/** The last `STDERR_TAIL_BYTES` of a stream as text, without a split character at the front. */
export function tailText(bytes: Buffer, max = STDERR_TAIL_BYTES): string {
  const slice = bytes.length > max ? bytes.subarray(bytes.length - max) : bytes;
  return slice
    .toString("utf8")
    .replace(/^\uFFFD+/, "")
    .trim();
}

/** True for a JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
