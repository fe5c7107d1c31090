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

/**
 * The seal reason of a graph step that closed. A step of a graph document seals
 * `step_closed` (the graph closed the step), whatever runner did the work; a skill run's own
 * receipt keeps the runner's reason (`process_closed`). Upstream's pinned graph-step receipt
 * ids commit this code (conformance fixtures/harness/sequential-graph.yaml).
 */
export const STEP_CLOSED = "step_closed";

/**
 * Packets whose emission is the closing evidence of a run: a run that closes with one of them
 * declared in its artifact contract seals with this reason instead of `process_closed` (the
 * process exit is not what closes an effect; its evidence packet is).
 */
export const EVIDENCE_PACKET_REASON_CODES: Readonly<Record<string, string>> = {
  "runx.effect.evidence.v1": "effect_evidence_closed",
};

/**
 * The seal reason of a run or step that ended with `reasonCode`, given its artifact contract
 * (`artifacts.packet`, or any value of `artifacts.packets`): a closing reason
 * (`process_closed`, `step_closed`) becomes the evidence packet's reason when the contract
 * declares one; every other reason stays.
 */
export function sealReasonCode(reasonCode: string, artifacts: unknown): string {
  const closing = reasonCode === REASON_CODE.closed || reasonCode === STEP_CLOSED;
  if (!closing || !isJsonObject(artifacts)) return reasonCode;
  const packets = isJsonObject(artifacts.packets) ? Object.values(artifacts.packets) : [];
  for (const packet of [artifacts.packet, ...packets]) {
    const reason = typeof packet === "string" ? EVIDENCE_PACKET_REASON_CODES[packet] : undefined;
    if (reason !== undefined) return reason;
  }
  return reasonCode;
}
