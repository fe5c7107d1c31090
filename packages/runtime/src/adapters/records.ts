/**
 * Dispatch attempts on disk, for history, the console and cancellation. Every attempt's
 * `dispatch-receipt.v1` document is kept next to the run under
 * `.runx/runs/<run_id>/dispatches/<step>-<n>.json` (append-only: written once with `wx`),
 * alongside the id of the signed runx receipt that commits it. A cancel request from another
 * process is a file the running attempt polls for.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import type { DispatchReceiptBody } from "./dispatch.js";

/** One recorded attempt. */
export interface DispatchAttemptRecord {
  /** The signed runx receipt (child of the step receipt) committing this document. */
  receipt_id: string;
  dispatch: DispatchReceiptBody;
}

const RUN_ID = /^[A-Za-z0-9_-]+$/;

function dispatchesDir(runxDir: string, runId: string): string {
  if (!RUN_ID.test(runId))
    throw new RuntimeError("RUN_NOT_FOUND", `no run ${runId}`, { run_id: runId });
  return join(runxDir, "runs", runId, "dispatches");
}

const safeStep = (stepId: string): string => stepId.replace(/[^A-Za-z0-9_-]/g, "_");

/** The next attempt number of a step. */
export function nextAttempt(runxDir: string, runId: string, stepId: string): number {
  const dir = dispatchesDir(runxDir, runId);
  if (!existsSync(dir)) return 1;
  const prefix = `${safeStep(stepId)}-`;
  const numbers = readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(".json"))
    .map((f) => Number(f.slice(prefix.length, -5)))
    .filter((n) => Number.isInteger(n));
  return numbers.length === 0 ? 1 : Math.max(...numbers) + 1;
}

/** Records one attempt; refuses to overwrite an earlier one. */
export function writeAttemptRecord(runxDir: string, record: DispatchAttemptRecord): string {
  const dir = dispatchesDir(runxDir, record.dispatch.run_id);
  mkdirSync(dir, { recursive: true });
  const name = `${safeStep(record.dispatch.step_id)}-${record.dispatch.attempt}.json`;
  writeFileSync(join(dir, name), `${JSON.stringify(record, null, 2)}\n`, {
    flag: "wx",
    mode: 0o600,
  });
  return `.runx/runs/${record.dispatch.run_id}/dispatches/${name}`;
}

/** Every recorded attempt of a run, oldest first. */
export function listAttemptRecords(runxDir: string, runId: string): DispatchAttemptRecord[] {
  const dir = dispatchesDir(runxDir, runId);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")) as DispatchAttemptRecord)
    .sort(
      (a, b) =>
        a.dispatch.invoked_at.localeCompare(b.dispatch.invoked_at) ||
        a.dispatch.attempt - b.dispatch.attempt,
    );
}

/** Path of a run's cancel request. */
export function cancelRequestPath(runxDir: string, runId: string): string {
  if (!RUN_ID.test(runId))
    throw new RuntimeError("RUN_NOT_FOUND", `no run ${runId}`, { run_id: runId });
  return join(runxDir, "runs", runId, "cancel-requested");
}

/** Asks a running dispatch of `runId` (in any process) to stop. */
export function requestCancel(runxDir: string, runId: string, at: Date): void {
  const file = cancelRequestPath(runxDir, runId);
  mkdirSync(join(runxDir, "runs", runId), { recursive: true });
  writeFileSync(file, `${at.toISOString()}\n`);
}

/** Clears a cancel request once the attempt it stopped has been recorded. */
export function clearCancel(runxDir: string, runId: string): void {
  rmSync(cancelRequestPath(runxDir, runId), { force: true });
}
