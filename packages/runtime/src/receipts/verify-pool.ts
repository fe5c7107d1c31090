/**
 * Checks a store's receipt files on every core: the files are cut into chunks that worker
 * threads (verify-worker.ts, one per other core) and this thread take in turn, and each result is
 * handed to `onCheck` in file order as soon as every chunk before it is done, so a caller
 * can stream findings and show progress while the rest is still being checked. Small sets,
 * policies a worker cannot rebuild (a verifier other than an Ed25519 key ring) and an
 * installation without the built worker script run in this thread alone.
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Worker } from "node:worker_threads";
import { checkChunk, describePolicy } from "./check-chunk.js";
import type { ChunkContext } from "./check-chunk.js";
import type { StoredFile } from "./store.js";
import type { FileCheck } from "./stored-receipt.js";
import type { WorkerSetup } from "./verify-worker.js";

/** Files per chunk: large enough that a message costs little, small enough to spread. */
const CHUNK_FILES = 250;

/** Below this many files, starting workers costs more than it saves. */
const PARALLEL_MIN_FILES = 2_000;

/** Options of {@link checkReceiptFiles}. */
export interface PoolOptions extends ChunkContext {
  files: readonly StoredFile[];
  /** Told about each file in order. */
  onCheck?: (check: FileCheck, done: number, total: number) => void;
  /** Worker threads to use besides this thread; defaults to one per other core (0: none). */
  workers?: number;
}

/**
 * The built worker script beside this code: dist/verify-worker.cjs from the library bundle
 * (dist/) or a CLI chunk (dist/cli/); undefined when running from source.
 */
function workerScript(): string | undefined {
  for (const candidate of ["./verify-worker.cjs", "../verify-worker.cjs"]) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** Every file checked, in the order of `files`. */
export async function checkReceiptFiles(opts: PoolOptions): Promise<FileCheck[]> {
  const chunks: StoredFile[][] = [];
  for (let i = 0; i < opts.files.length; i += CHUNK_FILES) {
    chunks.push(opts.files.slice(i, i + CHUNK_FILES));
  }
  const results: Array<FileCheck[] | undefined> = chunks.map(() => undefined);
  const out: FileCheck[] = [];
  let emitted = 0;
  const deliver = (chunk: number, checks: FileCheck[]): void => {
    results[chunk] = checks;
    for (let next = results[emitted]; next !== undefined; next = results[emitted]) {
      for (const check of next) {
        out.push(check);
        opts.onCheck?.(check, out.length, opts.files.length);
      }
      results[emitted] = undefined;
      emitted++;
    }
  };
  let taken = 0;
  const take = (): number | undefined => (taken < chunks.length ? taken++ : undefined);
  const workers = await startWorkers(opts);
  try {
    await new Promise<void>((done, fail) => {
      const finish = (): void => {
        if (emitted === chunks.length) done();
      };
      for (const worker of workers) {
        const feed = (): void => {
          const k = take();
          if (k === undefined) return;
          worker.postMessage({ chunk: k, files: chunks[k] });
        };
        worker.on("message", (message: { chunk: number; checks: FileCheck[] }) => {
          deliver(message.chunk, message.checks);
          feed();
          finish();
        });
        worker.once("error", fail);
        worker.once("exit", (code) => {
          if (emitted < chunks.length) fail(new Error(`a verification worker exited (${code})`));
        });
        feed();
      }
      // This thread takes chunks too (workers take a while to start), yielding between
      // chunks so the workers' results are taken in.
      const local = (): void => {
        const k = take();
        if (k === undefined) {
          finish();
          return;
        }
        try {
          deliver(k, checkChunk(opts, chunks[k] as StoredFile[]));
        } catch (error) {
          fail(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        finish();
        setImmediate(local);
      };
      local();
    });
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return out;
}

/**
 * The workers for a large enough set. `os` and `worker_threads` are loaded only then: a
 * small store's verification (and the CLI start-up budget, cli/startup-modules.test.ts)
 * does without them.
 */
async function startWorkers(opts: PoolOptions): Promise<Worker[]> {
  if (opts.workers === 0 || opts.files.length < PARALLEL_MIN_FILES) return [];
  const { availableParallelism } = await import("node:os");
  const { Worker } = await import("node:worker_threads");
  // This thread checks chunks too, so one worker per other core.
  const count = opts.workers ?? availableParallelism() - 1;
  if (count <= 0) return [];
  const script = workerScript();
  const policy = describePolicy(opts.policy);
  if (script === undefined || policy === undefined) return [];
  const setup: WorkerSetup = {
    dir: opts.dir,
    label: opts.label,
    policy,
    verified: [...opts.verified].join("\n"),
  };
  return Array.from({ length: count }, () => new Worker(script, { workerData: setup }));
}
