/**
 * Entry of a verification worker (built as dist/verify-worker.cjs): told the store and the
 * policy in `workerData`, it checks each chunk of files it is sent and posts the results
 * back under the chunk's number. The pool (verify-pool.ts) puts them in order.
 */
import { parentPort, workerData } from "node:worker_threads";
import { checkChunk, policyFromDescription } from "./check-chunk.js";
import type { PolicyDescription } from "./check-chunk.js";
import type { StoredFile } from "./store.js";

/** What the pool starts a worker with. */
export interface WorkerSetup {
  dir: string;
  label: string;
  policy: PolicyDescription;
  /** The verified-digest cache's digests, one per line. */
  verified: string;
}

const setup = workerData as WorkerSetup;
const ctx = {
  dir: setup.dir,
  label: setup.label,
  policy: policyFromDescription(setup.policy),
  verified: new Set(setup.verified === "" ? [] : setup.verified.split("\n")),
};
parentPort?.on("message", (message: { chunk: number; files: StoredFile[] }) => {
  parentPort?.postMessage({ chunk: message.chunk, checks: checkChunk(ctx, message.files) });
});
