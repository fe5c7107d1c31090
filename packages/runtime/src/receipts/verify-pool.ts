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
import { checkBundledChunk, checkChunk, describePolicy } from "./check-chunk.js";
import type { BundledReceipt, ChunkContext } from "./check-chunk.js";
import type { SignaturePolicy } from "./verifier.js";
import type { StoredFile } from "./store.js";
import type { FileCheck } from "./stored-receipt.js";
import type { WorkerSetup } from "./verify-worker.js";

/** Files per chunk: large enough that a message costs little, small enough to spread. */
export const CHUNK_FILES = 250;

/** Below this many files, starting workers costs more than it saves. */
export const PARALLEL_MIN_FILES = 2_000;

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
  return spawnWorkers(opts, opts.workers);
}

/** `count` workers (default: one per other core) set up for `ctx`; none when they cannot be. */
async function spawnWorkers(ctx: ChunkContext, count: number | undefined): Promise<Worker[]> {
  const { availableParallelism } = await import("node:os");
  const { Worker } = await import("node:worker_threads");
  // This thread checks chunks too, so one worker per other core.
  const wanted = count ?? availableParallelism() - 1;
  if (wanted <= 0) return [];
  const script = workerScript();
  const policy = describePolicy(ctx.policy);
  if (script === undefined || policy === undefined) return [];
  const setup: WorkerSetup = {
    dir: ctx.dir,
    label: ctx.label,
    policy,
    verified: [...ctx.verified].join("\n"),
  };
  return Array.from({ length: wanted }, () => new Worker(script, { workerData: setup }));
}

/**
 * Checks the receipt documents of an evidence bundle as they are read: chunks are submitted
 * one by one, taken by idle workers or, when every worker is busy, by this thread, and the
 * results reach `onCheck` in submission order. At most a few chunks per thread are in flight,
 * so memory stays bounded whatever the bundle's size.
 */
export interface BundleCheckPool {
  /** Queues a chunk; resolves once the chunks in flight are back under the bound. */
  submit(entries: BundledReceipt[]): Promise<void>;
  /** Starts the workers (once): the bundle turned out large enough for them. */
  widen(): Promise<void>;
  /** Resolves once every submitted chunk is checked and delivered. */
  drain(): Promise<void>;
  /** Stops the workers. */
  close(): Promise<void>;
}

/** A {@link BundleCheckPool}; `workers` as for {@link checkReceiptFiles}. */
export function bundleCheckPool(opts: {
  policy: SignaturePolicy;
  workers?: number;
  onCheck: (check: FileCheck) => void;
}): BundleCheckPool {
  const queue: Array<{ chunk: number; bundled: BundledReceipt[] }> = [];
  const results = new Map<number, FileCheck[]>();
  const idle: Worker[] = [];
  let workers: Worker[] = [];
  let widened = false;
  let submitted = 0;
  let emitted = 0;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const poke = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const settled = (): Promise<void> =>
    new Promise((resolve) => {
      wake = resolve;
    });
  const check = (): void => {
    if (failure !== undefined) throw failure;
  };
  const deliver = (chunk: number, checks: FileCheck[]): void => {
    results.set(chunk, checks);
    for (let next = results.get(emitted); next !== undefined; next = results.get(emitted)) {
      results.delete(emitted);
      emitted++;
      for (const c of next) opts.onCheck(c);
    }
    poke();
  };
  const dispatch = (): void => {
    for (let w = idle.pop(); w !== undefined; w = idle.pop()) {
      const job = queue.shift();
      if (job === undefined) {
        idle.push(w);
        return;
      }
      w.postMessage(job);
    }
  };
  const runLocal = (): void => {
    const job = queue.shift();
    if (job !== undefined) deliver(job.chunk, checkBundledChunk(opts.policy, job.bundled));
  };
  const yieldToWorkers = (): Promise<void> =>
    workers.length === 0 ? Promise.resolve() : new Promise((resolve) => setImmediate(resolve));
  return {
    async submit(entries) {
      check();
      queue.push({ chunk: submitted++, bundled: entries });
      dispatch();
      // Every worker busy (or none): this thread takes a chunk.
      if (queue.length > 0) runLocal();
      const bound = 4 * (workers.length + 1);
      while (submitted - emitted > bound) {
        if (queue.length > 0) runLocal();
        else await settled();
        check();
      }
      await yieldToWorkers();
      check();
    },
    async widen() {
      if (widened || opts.workers === 0) return;
      widened = true;
      const ctx = { dir: "", label: "bundle", policy: opts.policy, verified: new Set<string>() };
      workers = await spawnWorkers(ctx, opts.workers);
      for (const w of workers) {
        w.on("message", (message: { chunk: number; checks: FileCheck[] }) => {
          idle.push(w);
          deliver(message.chunk, message.checks);
          dispatch();
        });
        w.once("error", (error) => {
          failure = error;
          poke();
        });
        w.once("exit", (code) => {
          if (emitted < submitted) {
            failure ??= new Error(`a verification worker exited (${code})`);
            poke();
          }
        });
        idle.push(w);
      }
      dispatch();
    },
    async drain() {
      while (emitted < submitted) {
        check();
        dispatch();
        if (queue.length > 0) runLocal();
        else if (emitted < submitted) await settled();
      }
      check();
    },
    async close() {
      const all = workers;
      workers = [];
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}
