/** An executor that runs jobs in the calling thread (tests and single-process tools). */
import type { Runtime } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import type { ExecutorResult, RunExecutor } from "./trpc.js";

/** Runs every job inline and publishes its status. */
export function inlineExecutor(runtime: Runtime, events: ApiEvents): RunExecutor {
  const settle = async (
    runId: string,
    work: Promise<Awaited<ReturnType<Runtime["runSkill"]>>>,
  ): Promise<ExecutorResult> => {
    const envelope = await work;
    events.run({
      runId: envelope.run_id,
      status: envelope.status,
      skill: envelope.skill_name,
      receiptId: envelope.receipt_id,
      at: new Date().toISOString(),
    });
    return { runId, state: "settled", envelope };
  };
  return {
    start: (job) =>
      settle(
        job.runId,
        runtime.runSkill({
          ref: job.ref,
          ...(job.runner !== undefined ? { runner: job.runner } : {}),
          inputs: Object.fromEntries(
            Object.entries(job.inputs).map(([k, value]) => [k, { value: value as never }]),
          ),
          secretEnv: [],
          runId: job.runId,
        }),
      ),
    release: (job) => settle(job.runId, runtime.console.approvals.release(job)),
    answer: (job) =>
      settle(
        job.runId,
        runtime.resumeWith({ runId: job.runId, document: { answers: job.answers } }),
      ),
  };
}
