/** An executor that runs jobs in the calling thread (tests and single-process tools). */
import type { HostJob, Runtime } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import type { ExecutorResult, RunExecutor } from "./trpc.js";

/** Runs every job inline and publishes its status. */
export function inlineExecutor(runtime: Runtime, events: ApiEvents): RunExecutor {
  const settle = async (job: HostJob): Promise<ExecutorResult> => {
    const envelope = await runtime.console.runJob(job);
    events.run({
      runId: envelope.run_id,
      status: envelope.status,
      skill: envelope.skill_name,
      receiptId: envelope.receipt_id,
      at: new Date().toISOString(),
    });
    return { runId: job.runId, state: "settled", envelope };
  };
  return {
    start: (job) => settle({ kind: "start", ...job }),
    release: (job) => settle({ kind: "release", ...job }),
    answer: (job) => settle({ kind: "answer", ...job }),
  };
}
