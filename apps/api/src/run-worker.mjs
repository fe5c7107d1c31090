// A worker thread of the API's run pool: its own runtime over the same workspace and state
// store (SQLite WAL), executing one job at a time and posting back the envelope or the error.
import { parentPort, workerData } from "node:worker_threads";
import { createRuntime } from "@runx/runtime";

const runtime = createRuntime(workerData.options);

async function execute(job) {
  if (job.kind === "start") {
    const inputs = Object.fromEntries(
      Object.entries(job.inputs).map(([k, value]) => [k, { value }]),
    );
    return runtime.runSkill({
      ref: job.ref,
      ...(job.runner !== undefined ? { runner: job.runner } : {}),
      inputs,
      secretEnv: [],
      runId: job.runId,
    });
  }
  if (job.kind === "release") return runtime.console.approvals.release(job);
  if (job.kind === "answer") {
    return runtime.resumeWith({ runId: job.runId, document: { answers: job.answers } });
  }
  throw new Error(`unknown job kind ${job.kind}`);
}

parentPort.on("message", (job) => {
  execute(job).then(
    (envelope) => parentPort.postMessage({ id: job.id, ok: true, envelope }),
    (error) =>
      parentPort.postMessage({
        id: job.id,
        ok: false,
        error:
          error !== null && typeof error === "object" && typeof error.code === "string"
            ? { code: error.code, message: error.message, details: error.details ?? {} }
            : { code: "INTERNAL", message: String(error), details: {} },
      }),
  );
});
