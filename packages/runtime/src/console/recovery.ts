/**
 * Restart safety for runs a long-lived host (the API's worker pool) executes. Before a job
 * runs, the host journals it (`<runx dir>/api-jobs/<run id>.json`: the job and the process
 * that owns it); when the job settles the entry is removed. On start, `recover()` takes every
 * entry whose owner process is gone and whose run is still `running` (or was never recorded)
 * and puts the run somewhere a human can act on it:
 *
 * - a started run becomes a paused run (`needs_agent`, sealed `deferred` receipt, reason code
 *   `interrupted`) with one request `interrupted`; answering it (`{"interrupted": {}}`) runs
 *   the skill again from the start with the journaled inputs;
 * - a resumed run (approval release or agent answer) goes back to the pause it was resumed
 *   from (its checkpoint is still the latest in the ledger), so it can be resumed again;
 * - a run that can no longer be resumed (the package is gone or changed) is failed, with a
 *   sealed refusal receipt when the package still loads.
 */
import { existsSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { createTaintSet } from "../redaction.js";
import { readCheckpoint } from "../run/checkpoint.js";
import { markRunFailed } from "../run/context.js";
import type { RunScope, RunSkillDeps } from "../run/context.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { ConsoleStore } from "../store/console-store.js";
import type { RunRecord } from "../store/types.js";
import { ensureStateDir } from "../workspace.js";

/** The request id of an interrupted run's pause. */
export const INTERRUPTED_REQUEST = "interrupted";

/** A job the host executes off the request path. */
export type HostJob =
  | { kind: "start"; runId: string; ref: string; runner?: string; inputs: Record<string, unknown> }
  | { kind: "release"; runId: string; gateId: string }
  | {
      kind: "answer";
      runId: string;
      answers: Record<string, unknown>;
      /** The operator who answered (or resumed) in the console: the `resumed` event's actor. */
      by?: string;
      /** The note they gave with the answers. */
      note?: string;
    };

/** The process that owns a journaled job. */
export interface JobOwner {
  host: string;
  pid: number;
  /** Kernel start time of the process (Linux /proc), guarding against pid reuse; else null. */
  startTicks: string | null;
}

interface JournalEntry {
  version: "runx.host_job.v1";
  owner: JobOwner;
  job: HostJob;
  /** The run's paused state before a release/answer took it (null for a start). */
  prior: Pick<RunRecord, "status" | "disposition" | "receiptId" | "requestsJson"> | null;
  startedAt: string;
}

/** What recovery did with one journaled job. */
export interface RecoveryOutcome {
  runId: string;
  job: HostJob["kind"];
  /** `paused`: resumable through the `interrupted` request; `restored`: back at its pause. */
  action: "paused" | "restored" | "failed" | "settled";
  reason: string;
  /** The receipt sealed by the recovery (pause or refusal), when one was. */
  receiptId: string | null;
}

function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime), counted after the parenthesised command name.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

/** This process as a job owner. */
export function currentOwner(): JobOwner {
  return { host: hostname(), pid: process.pid, startTicks: processStartTicks(process.pid) };
}

/** Whether the owner process is still alive (a different host is assumed alive). */
export function ownerAlive(owner: JobOwner): boolean {
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const ticks = processStartTicks(owner.pid);
  return owner.startTicks === null || ticks === null || ticks === owner.startTicks;
}

/** The job journal and recovery over one runtime's workspace. */
export function recoveryServices(deps: { runDeps: RunSkillDeps; store: () => ConsoleStore }) {
  const dir = (): string => join(deps.runDeps.paths.runxDir, "api-jobs");
  const file = (runId: string): string => join(dir(), `${runId}.json`);
  const state = () => deps.runDeps.state();

  const recoverOne = async (entry: JournalEntry, why: string): Promise<RecoveryOutcome> => {
    const { job } = entry;
    const base = { runId: job.runId, job: job.kind };
    let run: RunRecord | null = null;
    try {
      run = state().getRun(job.runId);
    } catch (error) {
      if (!isRuntimeError(error) || error.code !== "RUN_NOT_FOUND") throw error;
    }
    if (run !== null && run.status !== "running") {
      return { ...base, action: "settled", reason: `the run is ${run.status}`, receiptId: null };
    }
    if (job.kind !== "start") {
      if (run === null || entry.prior === null) {
        return { ...base, action: "settled", reason: "no run to restore", receiptId: null };
      }
      state().updateRun(job.runId, {
        status: entry.prior.status,
        disposition: entry.prior.disposition,
        receiptId: entry.prior.receiptId,
        requestsJson: entry.prior.requestsJson,
      });
      return {
        ...base,
        action: "restored",
        reason: `${why}; the run is back at the pause it was resumed from (${entry.prior.status})`,
        receiptId: entry.prior.receiptId,
      };
    }
    const { prepareRun } = await import("../run/prepare.js");
    let prep;
    try {
      prep = await prepareRun(deps.runDeps, {
        ref: job.ref,
        ...(job.runner !== undefined ? { runner: job.runner } : {}),
        runId: job.runId,
      });
    } catch (error) {
      const message = isRuntimeError(error) ? error.message : String(error);
      if (run !== null) {
        await markRunFailed(await deps.runDeps.runState(), job.runId);
        state().updateRun(job.runId, {
          errorJson: JSON.stringify({ code: "RESUME_REFUSED", summary: `${why}; ${message}` }),
        });
      }
      return {
        ...base,
        action: "failed",
        reason: `${why}; the skill can no longer be loaded: ${message}`,
        receiptId: null,
      };
    }
    const scope: RunScope = {
      deps: deps.runDeps,
      prep,
      secrets: {},
      taint: createTaintSet([]),
      signal: new AbortController().signal,
    };
    const { withRefusal } = await import("../run/run-skill.js");
    const { pauseRun } = await import("../run/pause.js");
    try {
      const envelope = await withRefusal(scope, async (stage) => {
        stage("recover");
        if (run !== null && run.packageDigest !== prep.packageDigest) {
          throw new RuntimeError(
            "RESUME_REFUSED",
            `${why}; the package changed since the run started, so it is not run again`,
            { run_id: job.runId, expected: run.packageDigest, actual: prep.packageDigest },
          );
        }
        return pauseRun(scope, {
          kind: "inputs",
          requests: [{ id: INTERRUPTED_REQUEST, kind: "input", questions: [] }],
          inputs: job.inputs,
          reasonCode: "interrupted",
          summary: `${why}; answer request "${INTERRUPTED_REQUEST}" with {} to run it again`,
          runExists: run !== null,
        });
      });
      return {
        ...base,
        action: "paused",
        reason: envelope.closure?.summary ?? why,
        receiptId: envelope.receipt_id,
      };
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      const receiptId = error.details.receipt_id;
      return {
        ...base,
        action: "failed",
        reason: error.message,
        receiptId: typeof receiptId === "string" ? receiptId : null,
      };
    }
  };

  return {
    /** Journals a job before it runs (with the run's current pause for a resume). */
    begin(job: HostJob): void {
      let prior: JournalEntry["prior"] = null;
      if (job.kind !== "start") {
        try {
          const run = state().getRun(job.runId);
          prior = {
            status: run.status,
            disposition: run.disposition,
            receiptId: run.receiptId,
            requestsJson: run.requestsJson,
          };
        } catch (error) {
          if (!isRuntimeError(error) || error.code !== "RUN_NOT_FOUND") throw error;
        }
      }
      const entry: JournalEntry = {
        version: "runx.host_job.v1",
        owner: currentOwner(),
        job,
        prior,
        startedAt: deps.runDeps.now().toISOString(),
      };
      // Created component by component: a linked `.runx/api-jobs` would carry the journal away.
      ensureStateDir(dir());
      const tmp = `${file(job.runId)}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(entry), { mode: 0o600 });
      renameSync(tmp, file(job.runId));
    },

    /**
     * The job that continues a paused run without new human input: the `interrupted`
     * request of a recovered start, or the release of a gate that has decisions on the run's
     * current pause (a release the restart cut off: the run went back to that pause). An
     * earlier pause's decisions never count here: a release that paused the run again has
     * moved it to a new pause, decided afresh. RESUME_REFUSED otherwise.
     */
    resumeJob(runId: string): Extract<HostJob, { kind: "answer" | "release" }> {
      const run = state().getRun(runId);
      const requests = (
        run.requestsJson === null ? [] : JSON.parse(run.requestsJson)
      ) as RunRequest[];
      if (run.status === "needs_agent" && requests.some((r) => r.id === INTERRUPTED_REQUEST)) {
        return { kind: "answer", runId, answers: { [INTERRUPTED_REQUEST]: {} } };
      }
      if (run.status === "needs_approval") {
        const pause = readCheckpoint(state(), runId).paused_receipt.id;
        for (const request of requests) {
          if (deps.store().listDecisions(runId, request.id, pause).length > 0) {
            return { kind: "release", runId, gateId: request.id };
          }
        }
      }
      throw new RuntimeError(
        "RESUME_REFUSED",
        `run ${runId} is ${run.status} and has nothing to resume without new input (answer its requests or decide its gates)`,
        { run_id: runId, status: run.status },
      );
    },

    /** Removes a settled job's entry. */
    end(runId: string): void {
      rmSync(file(runId), { force: true });
    },

    /**
     * Recovers one journaled job now, as `recover()` would after a restart: for a host whose
     * worker died under the job while the host itself lives on (its owner pid is alive, so
     * `recover()` would skip it). Null when the job is not journaled (it settled).
     */
    async recoverJob(runId: string, why: string): Promise<RecoveryOutcome | null> {
      const path = file(runId);
      const claimed = `${path}.recovering-${process.pid}`;
      let entry: JournalEntry;
      try {
        renameSync(path, claimed);
        entry = JSON.parse(readFileSync(claimed, "utf8")) as JournalEntry;
      } catch {
        return null;
      }
      try {
        return await recoverOne(entry, why);
      } finally {
        rmSync(claimed, { force: true });
      }
    },

    /**
     * Recovers every journaled job whose owner process is gone (see the module comment).
     * Safe against a concurrent recovery: an entry is claimed by renaming it first.
     */
    async recover(): Promise<RecoveryOutcome[]> {
      if (!existsSync(dir())) return [];
      const out: RecoveryOutcome[] = [];
      for (const name of readdirSync(dir()).sort()) {
        if (!name.endsWith(".json")) continue;
        const path = join(dir(), name);
        let entry: JournalEntry;
        try {
          entry = JSON.parse(readFileSync(path, "utf8")) as JournalEntry;
        } catch {
          continue; // being written or already claimed
        }
        if (entry.version !== "runx.host_job.v1" || ownerAlive(entry.owner)) continue;
        const claimed = `${path}.recovering-${process.pid}`;
        try {
          renameSync(path, claimed);
        } catch {
          continue; // another process claimed it
        }
        const why = `interrupted: the process running it (pid ${entry.owner.pid} on ${entry.owner.host}, since ${entry.startedAt}) stopped before the run settled`;
        out.push(await recoverOne(entry, why));
        rmSync(claimed, { force: true });
      }
      return out;
    },
  };
}

/** The recovery services' surface (`runtime.console.recovery`). */
export type RecoveryServices = ReturnType<typeof recoveryServices>;
