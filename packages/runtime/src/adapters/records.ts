/**
 * Dispatch attempts on disk, for history, the console and cancellation. Every attempt's
 * `dispatch-receipt.v1` document is kept next to the run under
 * `.runx/runs/<run_id>/dispatches/<step>-<n>.json` (append-only: written once with `wx`),
 * alongside the id of the signed runx receipt that commits it. A cancel request from another
 * process is a file the running attempt polls for.
 *
 * Containment: every write (and read) under `.runx/runs/<run_id>/` goes through a path with no
 * symlinked component from `.runx` down and no `..` (run ids are plain slugs, step ids are
 * sanitized), so a planted link can never redirect a record, a cancel request or a log to its
 * target. A run directory that fails this is refused with PATH_ESCAPE (the dispatch gate
 * refuses the attempt itself as `path_unsafe` before anything is written).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { RuntimeError } from "../errors.js";
import type { DispatchReceiptBody } from "./dispatch-receipt.js";
import { checkContained, hasSymlinkComponent } from "./fs-safety.js";

/** One recorded attempt. */
export interface DispatchAttemptRecord {
  /** The signed runx receipt (child of the step receipt) committing this document. */
  receipt_id: string;
  dispatch: DispatchReceiptBody;
}

const RUN_ID = /^[A-Za-z0-9_-]+$/;

function runDir(runxDir: string, runId: string): string {
  if (!RUN_ID.test(runId))
    throw new RuntimeError("RUN_NOT_FOUND", `no run ${runId}`, { run_id: runId });
  return join(runxDir, "runs", runId);
}

/**
 * Why `.runx/runs/<run_id>/<below>` cannot be used, or undefined: an existing component from
 * `.runx` down is a symlink. Missing components are fine (they are created in place).
 */
export function runPathProblem(runxDir: string, runId: string, below = ""): string | undefined {
  const dir = runDir(runxDir, runId);
  const target = below === "" ? dir : join(dir, below);
  return hasSymlinkComponent(dirname(runxDir), target)
    ? `.runx/runs/${runId}${below === "" ? "" : `/${below}`} is reached through a symlink`
    : undefined;
}

/** Throws PATH_ESCAPE when `.runx/runs/<run_id>/<below>` is reached through a symlink. */
function contained(runxDir: string, runId: string, below: string): string {
  const problem = runPathProblem(runxDir, runId, below);
  if (problem !== undefined)
    throw new RuntimeError("PATH_ESCAPE", `${problem}; nothing is read or written through it`, {
      run_id: runId,
    });
  return join(runDir(runxDir, runId), below);
}

/**
 * The absolute path of a regular file `rel` (plain relative, e.g.
 * `dispatch/<step>/<n>/stdout.log`) of a run, or undefined when it is missing or any
 * component from `.runx` down is a symlink: callers read only what this returns.
 */
export function containedRunFile(runxDir: string, runId: string, rel: string): string | undefined {
  const dir = runDir(runxDir, runId);
  if (runPathProblem(runxDir, runId) !== undefined) return undefined;
  return checkContained(dir, rel, { file: true }) === undefined ? join(dir, rel) : undefined;
}

function dispatchesDir(runxDir: string, runId: string): string {
  return contained(runxDir, runId, "dispatches");
}

const safeStep = (stepId: string): string => stepId.replace(/[^A-Za-z0-9_-]/g, "_");

/**
 * The next attempt number of a step. A run directory reached through a symlink is not read
 * (its attempt is refused as `path_unsafe` before anything is written): numbering starts at 1.
 */
export function nextAttempt(runxDir: string, runId: string, stepId: string): number {
  if (runPathProblem(runxDir, runId, "dispatches") !== undefined) return 1;
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
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Checked again once the directories exist: a link swapped in meanwhile is not written through.
  dispatchesDir(runxDir, record.dispatch.run_id);
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
  return join(runDir(runxDir, runId), "cancel-requested");
}

/** Asks a running dispatch of `runId` (in any process) to stop. */
export function requestCancel(runxDir: string, runId: string, at: Date): void {
  const dir = contained(runxDir, runId, "");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = contained(runxDir, runId, "cancel-requested");
  writeFileSync(file, `${at.toISOString()}\n`);
}

/** Clears a cancel request once the attempt it stopped has been recorded. */
export function clearCancel(runxDir: string, runId: string): void {
  rmSync(contained(runxDir, runId, "cancel-requested"), { force: true });
}
