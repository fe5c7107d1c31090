// A worker thread of the API's run pool: its own runtime over the same workspace and state
// store (SQLite WAL), executing one job at a time and posting back the envelope or the error.
import { parentPort, workerData } from "node:worker_threads";
import { createRuntime } from "@runx/runtime";

const runtime = createRuntime(workerData.options);

// The runtime applies the run's console spawn grant to every kind of job.
function execute(job) {
  if (job.kind !== "start" && job.kind !== "release" && job.kind !== "answer") {
    return Promise.reject(new Error(`unknown job kind ${job.kind}`));
  }
  return runtime.console.runJob(job);
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
