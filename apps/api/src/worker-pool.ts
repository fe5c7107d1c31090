/**
 * The run pool: runs started or resumed from the API execute in worker threads, so a long run
 * never blocks the HTTP server. A run outlives nothing but its worker: a paused run is durable
 * in the state store, and `recoverInterrupted` (on start) reports runs a restart cut off.
 */
import { Worker } from "node:worker_threads";
import { RuntimeError } from "@runx/runtime";
import type { ErrorCode, RuntimeOptions, SkillRunEnvelope } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import type { ExecutorResult, RunExecutor } from "./trpc.js";

type Job =
  | { kind: "start"; runId: string; ref: string; runner?: string; inputs: Record<string, unknown> }
  | { kind: "release"; runId: string; gateId: string }
  | { kind: "answer"; runId: string; answers: Record<string, unknown> };

interface Reply {
  id: number;
  ok: boolean;
  envelope?: SkillRunEnvelope;
  error?: { code: ErrorCode; message: string; details: Record<string, unknown> };
}

/** How long a request waits for its run before answering "running" (the run continues). */
export const SETTLE_WAIT_MS = 2000;

export type { ExecutorResult } from "./trpc.js";

/** A fixed pool of run workers sharing the runtime's workspace. */
export class WorkerPool implements RunExecutor {
  readonly #workers: Array<{ worker: Worker; busy: number }> = [];
  readonly #pending = new Map<number, { resolve: (r: Reply) => void }>();
  readonly #events: ApiEvents;
  #next = 1;

  constructor(options: {
    size: number;
    runtime: Pick<RuntimeOptions, "workspaceRoot" | "runxHome" | "receiptDir" | "env">;
    events: ApiEvents;
  }) {
    this.#events = options.events;
    for (let i = 0; i < Math.max(1, options.size); i++) {
      const worker = new Worker(new URL("./run-worker.mjs", import.meta.url), {
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
    const done = this.#dispatch(job).then((reply) => {
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
