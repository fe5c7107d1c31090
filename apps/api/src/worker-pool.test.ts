/**
 * The run pool against a worker that dies under a job: the API process (here the test's)
 * survives, the job is answered as failed after its run is recovered, and the next job runs
 * on the worker that replaced the dead one.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import { ApiEvents } from "./events.js";
import { WorkerPool } from "./worker-pool.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-pool-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

// A worker that crashes (an uncaught error, as an unhandled rejection in a run would be) on a
// job for run "crash", and answers every other job with a sealed envelope.
const WORKER = `
import { parentPort } from "node:worker_threads";
parentPort.on("message", (job) => {
  if (job.kind === "shutdown") return parentPort.postMessage({ shutdown: true });
  if (job.runId === "crash") setImmediate(() => { throw new Error("boom in a run"); });
  else parentPort.postMessage({ id: job.id, ok: true, envelope: { run_id: job.runId, status: "sealed" } });
});
`;

it("answers a dead worker's job as failed, recovers its run and replaces the worker", async () => {
  const script = join(dir, "worker.mjs");
  writeFileSync(script, WORKER);
  const recovered: string[] = [];
  const ended: string[] = [];
  const pool = new WorkerPool({
    size: 1,
    runtime: { workspaceRoot: dir, runxHome: join(dir, "home"), env: {} },
    events: new ApiEvents(),
    script: pathToFileURL(script),
    journal: {
      begin: () => undefined,
      end: (runId) => ended.push(runId),
      recoverJob: (runId) => {
        recovered.push(runId);
        return Promise.resolve({ action: "paused", reason: "resumable" });
      },
    },
  });
  try {
    const job = { ref: "s", inputs: {} };
    const failed = await pool.start({ ...job, runId: "crash" }).then(
      () => null,
      (error: unknown) => error as { code: string; message: string },
    );
    expect(failed?.code).toBe("INTERNAL");
    expect(failed?.message).toMatch(/run worker stopped .*; the run was paused: resumable/);
    expect(recovered).toEqual(["crash"]);
    const next = await pool.start({ ...job, runId: "after" });
    expect(next).toMatchObject({ state: "settled", envelope: { run_id: "after" } });
    expect(ended).toEqual(["crash", "after"]);
  } finally {
    await pool.close();
  }
});
