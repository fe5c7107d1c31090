/**
 * The logs of a run's dispatch attempts as the console shows them.
 * What an attempt keeps is already bounded (cut at a line boundary with a marker) and scrubbed
 * (credentials, tokens, workspace and home paths) before it was written; this reads it back,
 * checks it against the digest its dispatch receipt records, and caps what one page shows.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { containedRunFile, listAttemptRecords } from "../adapters/records.js";

/** How much of one log a page shows (a log may keep up to 10 MB). */
export const LOG_DISPLAY_BYTES = 64 * 1024;

/** One stream of one attempt. */
export interface DispatchLogView {
  receipt_id: string;
  step_id: string;
  attempt: number;
  stream: "stdout" | "stderr";
  /** Bytes the process wrote to the stream. */
  bytes_total: number;
  /** Bytes kept on disk (after the cap, the marker and redaction). */
  bytes_retained: number;
  /** The process wrote more than the adapter's cap: the kept log ends with a marker. */
  truncated: boolean;
  /**
   * The kept log matches the sha256 its dispatch receipt records; false when it is missing
   * or changed (then `text` is empty: an altered log is not shown as the attempt's output).
   */
  intact: boolean;
  /** The kept log, at most LOG_DISPLAY_BYTES, cut at a line boundary. */
  text: string;
  /** Whether `text` is shorter than the kept log (the page cap, not the adapter's). */
  display_truncated: boolean;
}

const safeStep = (stepId: string): string => stepId.replace(/[^A-Za-z0-9_-]/g, "_");

function capped(bytes: Buffer): { text: string; cut: boolean } {
  if (bytes.length <= LOG_DISPLAY_BYTES) return { text: bytes.toString("utf8"), cut: false };
  const window = bytes.subarray(0, LOG_DISPLAY_BYTES);
  const newline = window.lastIndexOf(0x0a);
  return { text: window.subarray(0, newline + 1).toString("utf8"), cut: true };
}

/** The kept logs of every recorded attempt of a run, oldest attempt first. */
export function dispatchLogs(runxDir: string, runId: string): DispatchLogView[] {
  const out: DispatchLogView[] = [];
  for (const record of listAttemptRecords(runxDir, runId)) {
    const { dispatch } = record;
    for (const log of dispatch.logs) {
      // Read from where the attempt wrote it, never from a path the record names.
      // No symlinked component is followed: a log replaced by a link is not read.
      const file = containedRunFile(
        runxDir,
        runId,
        `dispatch/${safeStep(dispatch.step_id)}/${dispatch.attempt}/${log.stream}.log`,
      );
      let bytes: Buffer | null;
      try {
        bytes = file !== undefined ? readFileSync(file) : null;
      } catch {
        bytes = null;
      }
      const intact =
        bytes !== null &&
        `sha256:${createHash("sha256").update(bytes).digest("hex")}` === log.sha256;
      const shown = intact && bytes !== null ? capped(bytes) : { text: "", cut: false };
      out.push({
        receipt_id: record.receipt_id,
        step_id: dispatch.step_id,
        attempt: dispatch.attempt,
        stream: log.stream,
        bytes_total: log.bytes_total,
        bytes_retained: log.bytes_retained,
        truncated: log.truncated,
        intact,
        text: shown.text,
        display_truncated: shown.cut,
      });
    }
  }
  return out;
}
