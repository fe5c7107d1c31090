// Receipts-at-scale benchmark. For each store size, seeds a scratch workspace with that many
// receipts through the runtime's ReceiptStore (not through CLI runs), then prints the wall
// time of `runx history --limit 20`, of one echo run and of `runx verify` (without and with its
// verified-digest cache), and a floor: the
// cost of reading, hashing and signature-checking the same files in worker threads, one per
// core. Goals: history and echo at the largest size within 1.2x of the smallest; verify
// within 1.5x of the floor. Sizes are measured interleaved, round by round (see below), and
// every figure is the median of `--runs` rounds (default 5).
// Usage: npm run build && node bench/receipts.mjs [--sizes 1000,10000,100000] [--runs N] [--json]
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { cliWorkspace, median } from "./cli-kit.mjs";

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = argv.indexOf(name);
  return at >= 0 ? argv[at + 1] : fallback;
};
const sizes = flag("--sizes", "1000,10000,100000").split(",").map(Number);
const runs = Number(flag("--runs", "5"));
const json = argv.includes("--json");
if (sizes.some((n) => !Number.isSafeInteger(n) || n < 1) || !Number.isSafeInteger(runs)) {
  console.error("--sizes must list positive integers and --runs must be a positive integer");
  process.exit(2);
}

const runtime = await import("../packages/runtime/dist/index.js");
const bin = join(import.meta.dirname, "..", "packages", "runtime", "bin", "runx.cjs");
const signer = runtime.signerFromEnv({});

async function seed(dir, count) {
  const store = new runtime.ReceiptStore({ dir, policy: { mode: "local-development" } });
  const start = Date.parse("2026-01-01T00:00:00Z");
  let batch = [];
  for (let i = 0; i < count; i++) {
    const createdAt = new Date(start + i * 1000).toISOString().replace(/\.\d+Z$/, "Z");
    batch.push(
      runtime.sealReceipt(
        runtime.buildSkillReceipt({
          name: `seed-${i % 50}`,
          step: "default",
          createdAt,
          disposition: "closed",
          reasonCode: "process_closed",
          metadata: { seed: String(i) },
        }),
        signer,
      ),
    );
    if (batch.length === 1000) {
      await store.writeAll(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await store.writeAll(batch);
}

function time(ws, env, args, okCodes = [0]) {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: ws, env, encoding: "utf8" });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (!okCodes.includes(r.status)) {
    throw new Error(`runx ${args.join(" ")} failed (${r.status}):\n${r.stderr}${r.stdout}`);
  }
  return ms;
}

// One worker per core: imports the runtime (not counted), waits for "go", then reads,
// hashes (body digest and content address) and checks the signature of its share.
const FLOOR_WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFileSync } = require("node:fs");
import(workerData.runtime).then((runtime) => {
  parentPort.postMessage("ready");
  parentPort.once("message", () => {
    let bad = 0;
    for (const path of workerData.files) {
      const receipt = JSON.parse(readFileSync(path, "utf8"));
      const digest = runtime.receiptBodyDigest(receipt);
      if (digest !== receipt.digest || receipt.signature.value !== "sig:" + digest) bad++;
      if (runtime.receiptContentId(receipt) !== receipt.id) bad++;
    }
    parentPort.postMessage(bad);
  });
});
`;

/** Wall time of the floor pass, from "go" (every worker loaded) to the last worker's answer. */
async function floor(dir) {
  const files = readdirSync(dir)
    .filter((name) => name.startsWith("sha256-"))
    .map((name) => join(dir, name));
  const cores = availableParallelism();
  const share = Math.ceil(files.length / cores);
  const runtimeUrl = new URL("../packages/runtime/dist/index.js", import.meta.url).href;
  const workers = Array.from(
    { length: cores },
    (_, k) =>
      new Worker(FLOOR_WORKER, {
        eval: true,
        workerData: { runtime: runtimeUrl, files: files.slice(k * share, (k + 1) * share) },
      }),
  );
  const next = (worker) =>
    new Promise((done, fail) => {
      worker.once("message", done);
      worker.once("error", fail);
    });
  await Promise.all(workers.map(next));
  const start = process.hrtime.bigint();
  const answers = workers.map(next);
  for (const worker of workers) worker.postMessage("go");
  const bad = await Promise.all(answers);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  await Promise.all(workers.map((worker) => worker.terminate()));
  if (bad.some((n) => n > 0)) throw new Error("floor found receipts that do not check");
  return ms;
}

// Every size is seeded first, then measured in rounds that visit the sizes in turn (a round
// is history + echo + cold verify + cached verify + floor at each size), so a change in the
// machine's load during the run shows in every size alike instead of skewing one size's
// figures against another's. Each figure is the median over the rounds.
const stores = [];
try {
  for (const size of sizes) {
    const store = { size, ...cliWorkspace("runx-bench-receipts-") };
    stores.push(store);
    store.dir = join(store.ws, ".runx", "receipts");
    const seeding = Date.now();
    await seed(store.dir, size);
    store.seedMs = Date.now() - seeding;
    store.indexBytes = readFileSync(join(store.dir, "index.jsonl")).length;
    // Warm the CLI's caches in this workspace before counting.
    for (let i = 0; i < 3; i++)
      time(store.ws, store.env, ["skill", "skills/echo", "--message", "hi", "--json"]);
    store.samples = { history: [], echo: [], verify: [], cached: [], floor: [] };
  }
  for (let round = 0; round < runs; round++) {
    for (const store of stores) {
      const { ws, env, samples } = store;
      samples.history.push(time(ws, env, ["history", "--limit", "20", "--json"]));
      samples.echo.push(time(ws, env, ["skill", "skills/echo", "--message", "hi", "--json"]));
      // Cold: no verified-digest cache (each receipt checked in full); cached: the same
      // unchanged store again, every file still read and hashed.
      rmSync(join(ws, ".runx", "cache"), { recursive: true, force: true });
      samples.verify.push(time(ws, env, ["verify", "--json"], [0, 3]));
      samples.cached.push(time(ws, env, ["verify", "--json"], [0, 3]));
      samples.floor.push(await floor(store.dir));
    }
  }
} finally {
  for (const store of stores) store.remove();
}
const rows = stores.map(({ size, seedMs, indexBytes, samples }) => {
  const m = (list) => Number(median(list).toFixed(1));
  const verifyMs = m(samples.verify);
  const floorMs = m(samples.floor);
  const cachedMs = m(samples.cached);
  return {
    receipts: size,
    seed_ms: seedMs,
    index_bytes: indexBytes,
    history_ms: m(samples.history),
    echo_ms: m(samples.echo),
    verify_ms: verifyMs,
    floor_ms: floorMs,
    verify_over_floor: Number((verifyMs / floorMs).toFixed(2)),
    verify_cached_ms: cachedMs,
    cached_over_floor: Number((cachedMs / floorMs).toFixed(2)),
  };
});
const first = rows[0];
for (const row of rows) {
  row.history_vs_smallest = Number((row.history_ms / first.history_ms).toFixed(2));
  row.echo_vs_smallest = Number((row.echo_ms / first.echo_ms).toFixed(2));
}
const last = rows[rows.length - 1];
const goals = {
  history_within_1_2x: last.history_vs_smallest <= 1.2,
  echo_within_1_2x: last.echo_vs_smallest <= 1.2,
  verify_within_1_5x_floor: rows.every((row) => row.verify_over_floor <= 1.5),
};
if (json)
  console.log(JSON.stringify({ cores: availableParallelism(), runs, rows, goals }, null, 2));
else {
  console.log(
    `cores: ${availableParallelism()}  (goals: history, echo <= 1.2x smallest; verify <= 1.5x floor)`,
  );
  for (const r of rows) {
    console.log(
      `${String(r.receipts).padStart(7)} receipts  history ${r.history_ms} ms (${r.history_vs_smallest}x)  echo ${r.echo_ms} ms (${r.echo_vs_smallest}x)  verify ${r.verify_ms} ms  floor ${r.floor_ms} ms (verify ${r.verify_over_floor}x floor, cached ${r.verify_cached_ms} ms = ${r.cached_over_floor}x)  index ${r.index_bytes} B  seeded in ${r.seed_ms} ms`,
    );
  }
  const met = Object.entries(goals).map(([goal, ok]) => `${goal} ${ok ? "met" : "MISSED"}`);
  console.log(`medians of ${runs} interleaved rounds; ${met.join(", ")}`);
}
