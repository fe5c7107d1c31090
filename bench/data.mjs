// Data-store append benchmark. Prints events/s for governed appends (data.append_event through
// the same core the tools use: input contract, event type, canonical JSON, digests, head chain,
// envelope) next to a raw baseline measured in the same run, on the same kind of connection:
//   sqlite    durable appends (WAL, synchronous=FULL)   vs a bare INSERT transaction
//             (BEGIN IMMEDIATE; INSERT; COMMIT) of a row of the same size into a table defined
//             exactly like the store's event table, in its own file with the same pragmas
//   postgres  1 and 16 clients                          vs a bare INSERT transaction per event
//   redis     1 and 16 clients                          vs a bare EVALSHA (RPUSH of a record
//             of the same byte size as the governed append's record)
// Targets: sqlite and redis governed >= 80% of baseline.
//
// Method: both sides are warmed up (untimed appends, so both run JIT-compiled and connected),
// then measured in R rounds of N events each, alternating which side goes first. The table
// shows the median events/s of each side, the median of the per-round ratios, and the median
// process CPU time (user + system, µs) per event of each side: wall time on a shared machine is
// noisy, CPU time per event much less so.
//
// Usage: node bench/data.mjs [--events N] [--rounds R] [--warmup W] [--only sqlite,postgres,redis] [--json]
// PostgreSQL and Redis on loopback: RUNX_TEST_PG_URL (default postgres://127.0.0.1:5432/test),
// RUNX_TEST_PG_USER (default postgres), RUNX_TEST_REDIS_URL (default redis://127.0.0.1:6379/0).
// Each run uses its own scratch database / key prefix / temp files and removes them.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : fallback;
};
const EVENTS = Number(arg("--events", "2000"));
const ROUNDS = Number(arg("--rounds", "7"));
const WARMUP = Number(arg("--warmup", "2000"));
const ONLY = new Set(arg("--only", "sqlite,postgres,redis").split(","));
const JSON_OUT = argv.includes("--json");
for (const [name, value] of [
  ["--events", EVENTS],
  ["--rounds", ROUNDS],
  ["--warmup", WARMUP],
]) {
  if (!Number.isSafeInteger(value) || value < (name === "--warmup" ? 0 : 1)) {
    console.error(`${name} must be a positive integer`);
    process.exit(2);
  }
}

// Bundle the data-store sources once (adapters and core), drivers stay external.
const cache = join(repo, "node_modules", ".cache", "runx-bench");
mkdirSync(cache, { recursive: true });
const entry = join(cache, `data-${process.pid}.mjs`);
await build({
  stdin: {
    contents: `
      export { openSqliteAdapter, openSqliteFile, SQLITE_SCHEMA_V1 } from "./src/data/sqlite.ts";
      export { openPostgresAdapter } from "./src/data/postgres.ts";
      export { openRedisAdapter } from "./src/data/redis.ts";
      export { runOnAdapter } from "./src/data/operations.ts";
      export { scratchPostgres, scratchRedisPrefix, PG_USER, REDIS_URL } from "./src/data/test-services.ts";
    `,
    resolveDir: join(repo, "packages", "runtime"),
    loader: "ts",
  },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  outfile: entry,
  external: ["better-sqlite3", "pg", "ioredis"],
  logLevel: "error",
});
const data = await import(pathToFileURL(entry).href);
rmSync(entry, { force: true });
const pg = (await import("pg")).default;
const { Redis } = await import("ioredis");

const SOURCE = "tenant://bench/board";
const RESOURCE = "bench_events";
const now = () => new Date();
/** The event both sides store (the baseline stores its plain JSON text). */
const event = (i) => ({ type: "bench.append", i, payload: { title: "benchmark event", n: i } });
/** A digest-sized placeholder, so baseline rows and records have the governed byte sizes. */
const DIGEST = `sha256:${"0".repeat(64)}`;
/** A record shaped and sized like the governed one (what Redis pushes), without canonicalising. */
const recordText = (aggregate, i, committedAt) =>
  `{"committed_at":"${committedAt}","event":${JSON.stringify(event(i))},"event_digest":"${DIGEST}","event_ref":"${RESOURCE}:${aggregate}:${i}","event_type":"bench.append","idempotency_key":"k${i}","version":${i}}`;

/**
 * One side of a comparison: `run(client, count, tag)` appends `count` events as client `client`
 * to streams named by `tag` (fresh per round, so every round starts from version 0).
 */
async function measure(clients, perClient, run, tag) {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: clients }, (_, c) => run(c, perClient, tag)));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const used = process.cpuUsage(cpu);
  const events = clients * perClient;
  return { rate: events / seconds, cpuUs: (used.user + used.system) / events };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Warm-up, then ROUNDS alternating rounds; returns medians. */
async function compare(clients, governedRun, baselineRun) {
  const per = Math.max(1, Math.floor(EVENTS / clients));
  await governedRun(0, WARMUP, "warm");
  await baselineRun(0, WARMUP, "warm");
  const g = [];
  const b = [];
  for (let round = 0; round < ROUNDS; round++) {
    const tag = `r${round}`;
    if (round % 2 === 0) {
      g.push(await measure(clients, per, governedRun, tag));
      b.push(await measure(clients, per, baselineRun, tag));
    } else {
      b.push(await measure(clients, per, baselineRun, tag));
      g.push(await measure(clients, per, governedRun, tag));
    }
  }
  return {
    governed: median(g.map((x) => x.rate)),
    baseline: median(b.map((x) => x.rate)),
    ratio: median(g.map((x, i) => x.rate / b[i].rate)),
    ratios: g.map((x, i) => x.rate / b[i].rate),
    governedCpuUs: median(g.map((x) => x.cpuUs)),
    baselineCpuUs: median(b.map((x) => x.cpuUs)),
  };
}

/** Governed appends through the core, on `adapters[client]`. */
const governedRun = (adapters, label) => async (c, n, tag) => {
  const via = adapters[c] ?? adapters[0];
  for (let i = 0; i < n; i++) {
    const r = await data.runOnAdapter(
      via,
      "append_event",
      {
        data_source_ref: SOURCE,
        resource: RESOURCE,
        aggregate_id: `${label}-${tag}-${c}`,
        expected_version: i,
        idempotency_key: `k${i + 1}`,
        event: event(i + 1),
      },
      { now },
    );
    if (r.status !== "committed")
      throw new Error(`append ${i}: ${r.status} ${JSON.stringify(r.stop_conditions)}`);
  }
};

const results = [];
const record = (backend, clients, m, target) =>
  results.push({
    backend,
    clients,
    governed_events_per_s: Math.round(m.governed),
    baseline_events_per_s: Math.round(m.baseline),
    ratio: Number(m.ratio.toFixed(3)),
    round_ratios: m.ratios.map((r) => Number(r.toFixed(3))),
    governed_cpu_us_per_event: Number(m.governedCpuUs.toFixed(1)),
    baseline_cpu_us_per_event: Number(m.baselineCpuUs.toFixed(1)),
    ...(target !== undefined ? { target, meets_target: m.ratio >= target } : {}),
  });

if (ONLY.has("sqlite")) {
  const dir = mkdtempSync(join(tmpdir(), "runx-bench-sqlite-"));
  try {
    const adapter = data.openSqliteAdapter({ path: join(dir, "store.sqlite"), label: "bench" });
    const raw = data.openSqliteFile(join(dir, "baseline.sqlite"));
    raw.exec(data.SQLITE_SCHEMA_V1);
    const insert = raw.prepare(
      "INSERT INTO runx_events (data_source_ref, resource, aggregate_id, version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    const tx = raw.transaction((aggregate, i) =>
      insert.run(
        SOURCE,
        RESOURCE,
        aggregate,
        i,
        `k${i}`,
        `${RESOURCE}:${aggregate}:${i}`,
        "bench.append",
        DIGEST,
        JSON.stringify(event(i)),
        now().toISOString(),
      ),
    );
    const m = await compare(1, governedRun([adapter], "sqlite"), async (c, n, tag) => {
      const aggregate = `b-${tag}-${c}`;
      for (let i = 1; i <= n; i++) tx.immediate(aggregate, i);
    });
    await adapter.close();
    raw.close();
    record("sqlite (durable, synchronous=FULL)", 1, m, 0.8);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (ONLY.has("postgres")) {
  const db = await data.scratchPostgres();
  try {
    const url = new URL(db.endpoint);
    for (const clients of [1, 16]) {
      const adapters = await Promise.all(
        Array.from({ length: clients }, () =>
          data.openPostgresAdapter({ endpoint: db.endpoint, user: data.PG_USER }),
        ),
      );
      const conns = await Promise.all(
        Array.from({ length: clients }, async () => {
          const c = new pg.Client({
            host: url.hostname,
            port: Number(url.port || 5432),
            database: url.pathname.slice(1),
            user: data.PG_USER,
          });
          await c.connect();
          return c;
        }),
      );
      await conns[0].query(
        "CREATE TABLE IF NOT EXISTS baseline (aggregate_id TEXT, version BIGINT, event_json TEXT, committed_at TEXT, PRIMARY KEY (aggregate_id, version))",
      );
      const m = await compare(clients, governedRun(adapters, `pg${clients}`), async (c, n, tag) => {
        for (let i = 1; i <= n; i++) {
          await conns[c].query("BEGIN");
          await conns[c].query("INSERT INTO baseline VALUES ($1, $2, $3, $4)", [
            `b${clients}-${tag}-${c}`,
            i,
            JSON.stringify(event(i)),
            now().toISOString(),
          ]);
          await conns[c].query("COMMIT");
        }
      });
      await Promise.all(adapters.map((a) => a.close()));
      await Promise.all(conns.map((c) => c.end()));
      record("postgres", clients, m);
    }
  } finally {
    await db.drop();
  }
}

if (ONLY.has("redis")) {
  const scratch = data.scratchRedisPrefix();
  try {
    for (const clients of [1, 16]) {
      const adapters = await Promise.all(
        Array.from({ length: clients }, () =>
          data.openRedisAdapter({ endpoint: data.REDIS_URL, keyPrefix: scratch.prefix }),
        ),
      );
      const conns = Array.from({ length: clients }, () => new Redis(data.REDIS_URL));
      const sha = await conns[0].script("LOAD", "return redis.call('RPUSH', KEYS[1], ARGV[1])");
      const m = await compare(
        clients,
        governedRun(adapters, `redis${clients}`),
        async (c, n, tag) => {
          const aggregate = `b${clients}-${tag}-${c}`;
          const key = `${scratch.prefix}:baseline:${aggregate}`;
          for (let i = 1; i <= n; i++) {
            await conns[c].evalsha(sha, 1, key, recordText(aggregate, i, now().toISOString()));
          }
        },
      );
      await Promise.all(adapters.map((a) => a.close()));
      await Promise.all(conns.map((c) => c.quit()));
      record("redis", clients, m, 0.8);
    }
  } finally {
    await scratch.drop();
  }
}

if (JSON_OUT)
  console.log(JSON.stringify({ events: EVENTS, rounds: ROUNDS, warmup: WARMUP, results }));
else {
  console.log(
    `data-store appends: ${EVENTS} events per round and side, ${ROUNDS} rounds (medians), ${WARMUP} warm-up appends per side`,
  );
  for (const r of results) {
    const target =
      r.target !== undefined
        ? `  target >= ${r.target * 100}%: ${r.meets_target ? "met" : "NOT met"}`
        : "";
    console.log(
      `${r.backend.padEnd(36)} clients ${String(r.clients).padStart(2)}  governed ${String(r.governed_events_per_s).padStart(7)}/s  baseline ${String(r.baseline_events_per_s).padStart(7)}/s  ratio ${(r.ratio * 100).toFixed(1).padStart(5)}%  cpu/event governed ${r.governed_cpu_us_per_event.toFixed(1).padStart(6)}µs baseline ${r.baseline_cpu_us_per_event.toFixed(1).padStart(6)}µs${target}`,
    );
    console.log(
      `${"".padEnd(36)}            round ratios ${r.round_ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(" ")}`,
    );
  }
}
