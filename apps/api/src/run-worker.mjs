// A worker thread of the API's run pool: its own runtime over the same workspace and state
// store (SQLite WAL), executing jobs and posting back the envelope or the error. A `shutdown`
// message aborts every job in flight (their process trees are killed and the runs sealed
// `killed`), waits for them to settle, and answers `{shutdown: true}` (worker-pool.ts close()).
import { parentPort, workerData } from "node:worker_threads";
import { createRuntime } from "@runx/runtime";

const runtime = createRuntime(workerData.options);
/** Jobs in flight: id → [controller, settled promise]. */
const running = new Map();

// The runtime applies the run's console spawn grant to every kind of job.
function execute(job, signal) {
  if (job.kind !== "start" && job.kind !== "release" && job.kind !== "answer") {
    return Promise.reject(new Error(`unknown job kind ${job.kind}`));
  }
  return runtime.console.runJob(job, signal);
}

function errorReply(error) {
  return error !== null && typeof error === "object" && typeof error.code === "string"
    ? { code: error.code, message: error.message, details: error.details ?? {} }
    : { code: "INTERNAL", message: String(error), details: {} };
}

parentPort.on("message", (job) => {
  if (job.kind === "shutdown") {
    for (const [controller] of running.values()) controller.abort();
    void Promise.allSettled([...running.values()].map(([, settled]) => settled)).then(() =>
      parentPort.postMessage({ shutdown: true }),
    );
    return;
  }
  const controller = new AbortController();
  const settled = execute(job, controller.signal).then(
    (envelope) => parentPort.postMessage({ id: job.id, ok: true, envelope }),
    (error) => parentPort.postMessage({ id: job.id, ok: false, error: errorReply(error) }),
  );
  running.set(job.id, [controller, settled]);
  void settled.finally(() => running.delete(job.id));
});
