/**
 * Entry of a verification worker (built as dist/verify-worker.cjs): told the store and the
 * policy in `workerData`, it checks each chunk it is sent (store files it reads, or receipt
 * documents of an evidence bundle) and posts the results back under the chunk's number.
 * The pool (verify-pool.ts) puts them in order.
 */
import { parentPort, workerData } from "node:worker_threads";
import { checkBundledChunk, checkChunk, policyFromDescription } from "./check-chunk.js";
import type { BundledReceipt, PolicyDescription } from "./check-chunk.js";
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
/** A chunk of store files to read, or of evidence-bundle documents already read. */
type ChunkMessage =
  { chunk: number; files: StoredFile[] } | { chunk: number; bundled: BundledReceipt[] };

parentPort?.on("message", (message: ChunkMessage) => {
  const checks =
    "files" in message
      ? checkChunk(ctx, message.files)
      : checkBundledChunk(ctx.policy, message.bundled);
  parentPort?.postMessage({ chunk: message.chunk, checks });
});
