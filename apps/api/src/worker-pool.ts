/**
 * The run pool: runs started or resumed from the API execute in worker threads, so a long run
 * never blocks the HTTP server. Every job is journaled (`runtime.console.recovery`) while it
 * runs, so a restart finds the runs it cut off and makes them resumable (see main.ts).
 */
import { Worker } from "node:worker_threads";
import { RuntimeError } from "@runx/runtime";
import type { ErrorCode, HostJob, RuntimeOptions, SkillRunEnvelope } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import type { ExecutorResult, RunExecutor } from "./trpc.js";

type Job = HostJob;

/** Where jobs are journaled while they run (`runtime.console.recovery`). */
export interface JobJournal {
  begin(job: HostJob): void;
  end(runId: string): void;
  /**
   * Recovers the journaled job of a run whose worker died under it, the way a restart would
   * (a resumable pause, or back at the pause it was resumed from); what was done, in words.
   */
  recoverJob?(runId: string, why: string): Promise<{ action: string; reason: string } | null>;
}

interface Reply {
  id: number;
  ok: boolean;
  envelope?: SkillRunEnvelope;
  error?: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

/** The worker script: next to this module (src/ under tsx, dist/ in the bundle). */
function workerScript(): URL {
  const here = new URL(import.meta.url);
  return new URL(here.pathname.endsWith(".ts") ? "./run-worker.mjs" : "./run-worker.js", here);
}

/** How long a request waits for its run before answering "running" (the run continues). */
export const SETTLE_WAIT_MS = 2000;
/** How long close() lets the workers kill their runs' processes and seal them `killed`. */
export const SHUTDOWN_WAIT_MS = 5000;

export type { ExecutorResult } from "./trpc.js";

/** One worker thread and the jobs it holds. */
interface Slot {
  worker: Worker;
  /** Jobs posted to this worker and not answered yet, by message id. */
  jobs: Map<number, Job>;
}

/**
 * A fixed pool of run workers sharing the runtime's workspace. A worker that dies (an uncaught
 * error in a run) never takes the API down: its jobs are answered as failed, their runs are
 * recovered as a restart would recover them, and a new worker takes its place.
 */
export class WorkerPool implements RunExecutor {
  readonly #slots: Slot[] = [];
  readonly #pending = new Map<number, { resolve: (r: Reply) => void }>();
  readonly #events: ApiEvents;
  readonly #journal: JobJournal | null;
  readonly #runtime: Pick<RuntimeOptions, "workspaceRoot" | "runxHome" | "receiptDir" | "env">;
  readonly #script: URL;
  #next = 1;
  #closing = false;

  constructor(options: {
    size: number;
    runtime: Pick<RuntimeOptions, "workspaceRoot" | "runxHome" | "receiptDir" | "env">;
    events: ApiEvents;
    /** Journals each job while it runs, for restart recovery. */
    journal?: JobJournal;
    /** The worker script (default run-worker beside this module; tests pass their own). */
    script?: URL;
  }) {
    this.#events = options.events;
    this.#journal = options.journal ?? null;
    this.#runtime = options.runtime;
    this.#script = options.script ?? workerScript();
    for (let i = 0; i < Math.max(1, options.size); i++) {
      const slot: Slot = { worker: this.#spawn(), jobs: new Map() };
      this.#watch(slot);
      this.#slots.push(slot);
    }
  }

  #spawn(): Worker {
    const worker = new Worker(this.#script, { workerData: { options: this.#runtime } });
    worker.unref();
    return worker;
  }

  #watch(slot: Slot): void {
    const { worker } = slot;
    worker.on("message", (reply: Reply | { shutdown: true }) => {
      if (!("id" in reply)) return;
      slot.jobs.delete(reply.id);
      this.#pending.get(reply.id)?.resolve(reply);
      this.#pending.delete(reply.id);
    });
    // Without an 'error' listener a worker's uncaught error is rethrown in the main thread.
    worker.on("error", (error) => {
      process.stderr.write(`runx api: a run worker failed: ${error.message}\n`);
    });
    worker.once("exit", (code) => {
      if (slot.worker !== worker) return;
      const lost = [...slot.jobs];
      slot.jobs.clear();
      if (!this.#closing) {
        slot.worker = this.#spawn();
        this.#watch(slot);
      }
      for (const [id, job] of lost) void this.#lose(id, job, code);
    });
  }

  /** Answers a job whose worker died as failed, after recovering its run. */
  async #lose(id: number, job: Job, exitCode: number): Promise<void> {
    const why = `interrupted: the run worker stopped (exit ${exitCode}) before the run settled`;
    let recovered = "";
    try {
      const outcome = (await this.#journal?.recoverJob?.(job.runId, why)) ?? null;
      if (outcome !== null) recovered = `; the run was ${outcome.action}: ${outcome.reason}`;
    } catch (error) {
      recovered = `; recovering the run failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.#pending.get(id)?.resolve({
      id,
      ok: false,
      error: { code: "INTERNAL", message: `${why}${recovered}`, details: { run_id: job.runId } },
    });
    this.#pending.delete(id);
  }

  #dispatch(job: Job): Promise<Reply> {
    const slot = this.#slots.reduce((a, b) => (b.jobs.size < a.jobs.size ? b : a));
    const id = this.#next++;
    slot.jobs.set(id, job);
    return new Promise((resolve) => {
      this.#pending.set(id, { resolve });
      slot.worker.postMessage({ ...job, id });
    });
  }

  async #run(job: Job): Promise<ExecutorResult> {
    this.#journal?.begin(job);
    const done = this.#dispatch(job).then((reply) => {
      this.#journal?.end(job.runId);
      if (reply.ok && reply.envelope !== undefined) {
        this.#events.run({
          runId: reply.envelope.run_id,
          status: reply.envelope.status,
          skill: reply.envelope.skill_name,
          receiptId: reply.envelope.receipt_id,
          at: new Date().toISOString(),
        });
      }
      return reply;
    });
    const timer = new Promise<"running">((resolve) =>
      setTimeout(() => resolve("running"), SETTLE_WAIT_MS).unref(),
    );
    const first = await Promise.race([done, timer]);
    if (first === "running") return { runId: job.runId, state: "running" };
    if (!first.ok || first.envelope === undefined) {
      const e = first.error ?? { code: "INTERNAL" as const, message: "worker failed", details: {} };
      throw new RuntimeError(e.code, e.message, e.details);
    }
    return { runId: job.runId, state: "settled", envelope: first.envelope };
  }

  start(job: Omit<Extract<Job, { kind: "start" }>, "kind">): Promise<ExecutorResult> {
    return this.#run({ kind: "start", ...job });
  }

  release(job: { runId: string; gateId: string }): Promise<ExecutorResult> {
    return this.#run({ kind: "release", ...job });
  }

  answer(job: Omit<Extract<Job, { kind: "answer" }>, "kind">): Promise<ExecutorResult> {
    return this.#run({ kind: "answer", ...job });
  }

  /**
   * Stops every worker: runs in flight are aborted first (their process trees killed, the runs
   * sealed `killed`), for at most {@link SHUTDOWN_WAIT_MS}; then the threads are terminated.
   */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all(
      this.#slots.map(async ({ worker }) => {
        const drained = new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
          worker.on("message", (reply: { shutdown?: boolean }) => {
            if (reply.shutdown !== true) return;
            clearTimeout(timer);
            resolve();
          });
          worker.once("exit", () => {
            clearTimeout(timer);
            resolve();
          });
        });
        worker.postMessage({ kind: "shutdown" });
        await drained;
        await worker.terminate();
      }),
    );
  }
}
