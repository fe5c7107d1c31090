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

export type { ExecutorResult } from "./trpc.js";

/** A fixed pool of run workers sharing the runtime's workspace. */
export class WorkerPool implements RunExecutor {
  readonly #workers: Array<{ worker: Worker; busy: number }> = [];
  readonly #pending = new Map<number, { resolve: (r: Reply) => void }>();
  readonly #events: ApiEvents;
  readonly #journal: JobJournal | null;
  #next = 1;

  constructor(options: {
    size: number;
    runtime: Pick<RuntimeOptions, "workspaceRoot" | "runxHome" | "receiptDir" | "env">;
    events: ApiEvents;
    /** Journals each job while it runs, for restart recovery. */
    journal?: JobJournal;
  }) {
    this.#events = options.events;
    this.#journal = options.journal ?? null;
    for (let i = 0; i < Math.max(1, options.size); i++) {
      const worker = new Worker(workerScript(), {
        workerData: { options: options.runtime },
      });
      const slot = { worker, busy: 0 };
      worker.on("message", (reply: Reply) => {
        slot.busy--;
        this.#pending.get(reply.id)?.resolve(reply);
        this.#pending.delete(reply.id);
      });
      worker.unref();
      this.#workers.push(slot);
    }
  }

  #dispatch(job: Job): Promise<Reply> {
    const slot = this.#workers.reduce((a, b) => (b.busy < a.busy ? b : a));
    const id = this.#next++;
    slot.busy++;
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

  answer(job: { runId: string; answers: Record<string, unknown> }): Promise<ExecutorResult> {
    return this.#run({ kind: "answer", ...job });
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    await Promise.all(this.#workers.map((w) => w.worker.terminate()));
  }
}
