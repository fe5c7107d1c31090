// Data-store append benchmark. Prints events/s for governed appends (data.append_event through
// the same core the tools use) next to a raw baseline measured in the same run:
//   sqlite    durable appends (WAL, synchronous=FULL)   vs a bare INSERT transaction, same pragmas
//   postgres  1 and 16 clients                          vs a bare INSERT transaction per event
//   redis     1 and 16 clients                          vs a bare EVALSHA (RPUSH of the same bytes)
// Targets: sqlite and redis governed >= 80% of baseline.
// Usage: node bench/data.mjs [--events N] [--only sqlite,postgres,redis] [--json]
// PostgreSQL and Redis on loopback: RUNX_TEST_PG_URL (default postgres://127.0.0.1:5432/test),
// RUNX_TEST_PG_USER (default postgres), RUNX_TEST_REDIS_URL (default redis://127.0.0.1:6379/0).
// Each run uses its own scratch database / key prefix / temp file and removes it.
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
// Untimed operations before each measurement, so both paths run JIT-compiled and connected.
const WARMUP = Number(arg("--warmup", "300"));
const ONLY = new Set(arg("--only", "sqlite,postgres,redis").split(","));
const JSON_OUT = argv.includes("--json");

// Bundle the data-store sources once (adapters and core), drivers stay external.
const cache = join(repo, "node_modules", ".cache", "runx-bench");
mkdirSync(cache, { recursive: true });
const entry = join(cache, `data-${process.pid}.mjs`);
await build({
  stdin: {
    contents: `
      export { openSqliteAdapter, openSqliteFile } from "./src/data/sqlite.ts";
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
const pg = (await import("pg")).default;
const { Redis } = await import("ioredis");
const now = () => new Date();
const event = (i) => ({ type: "bench.append", i, payload: { title: "benchmark event", n: i } });

async function governed(adapter, clients, perClient, label) {
  await appendLoop(adapter, 1, WARMUP, `${label}-warmup`);
  const start = process.hrtime.bigint();
  await appendLoop(adapter, clients, perClient, label);
  return (clients * perClient) / (Number(process.hrtime.bigint() - start) / 1e9);
}

async function appendLoop(adapter, clients, perClient, label) {
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const via = adapter[c] ?? adapter[0];
      for (let i = 0; i < perClient; i++) {
        const r = await data.runOnAdapter(
          via,
          "append_event",
          {
            data_source_ref: "tenant://bench/board",
            resource: "bench_events",
            aggregate_id: `${label}-${c}`,
            expected_version: i,
            idempotency_key: `k${i}`,
            event: event(i),
          },
          { now },
        );
        if (r.status !== "committed")
          throw new Error(`append ${i}: ${r.status} ${JSON.stringify(r.stop_conditions)}`);
      }
    }),
  );
}

async function timed(clients, perClient, fn) {
  await fn(0, WARMUP, "warm");
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: clients }, (_, c) => fn(c, perClient, "run")));
  return (clients * perClient) / (Number(process.hrtime.bigint() - start) / 1e9);
}

const results = [];
const record = (backend, clients, governedRate, baselineRate, target) =>
  results.push({
    backend,
    clients,
    governed_events_per_s: Math.round(governedRate),
    baseline_events_per_s: Math.round(baselineRate),
    ratio: Number((governedRate / baselineRate).toFixed(3)),
    ...(target !== undefined
      ? { target, meets_target: governedRate / baselineRate >= target }
      : {}),
  });

const eventJson = (i) => JSON.stringify(event(i));

if (ONLY.has("sqlite")) {
  const dir = mkdtempSync(join(tmpdir(), "runx-bench-sqlite-"));
  try {
    const adapter = data.openSqliteAdapter({ path: join(dir, "store.sqlite"), label: "bench" });
    const g = await governed([adapter], 1, EVENTS, "sqlite");
    await adapter.close();
    const raw = data.openSqliteFile(join(dir, "baseline.sqlite"));
    raw.exec(
      "CREATE TABLE events (data_source_ref TEXT, resource TEXT, aggregate_id TEXT, version INTEGER, idempotency_key TEXT, event_ref TEXT, event_type TEXT, event_digest TEXT, event_json TEXT, committed_at TEXT, PRIMARY KEY (data_source_ref, resource, aggregate_id, version))",
    );
    const insert = raw.prepare("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    const tx = raw.transaction((i, tag) =>
      insert.run(
        "tenant://bench/board",
        "bench_events",
        `b-${tag}`,
        i,
        `k${i}`,
        `bench_events:b:${i}`,
        "bench.append",
        "sha256:x",
        eventJson(i),
        now().toISOString(),
      ),
    );
    const b = await timed(1, EVENTS, (_, n, tag) => {
      for (let i = 1; i <= n; i++) tx.immediate(i, tag);
    });
    raw.close();
    record("sqlite (durable, synchronous=FULL)", 1, g, b, 0.8);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (ONLY.has("postgres")) {
  const db = await data.scratchPostgres();
  try {
    for (const clients of [1, 16]) {
      const per = Math.max(1, Math.floor(EVENTS / clients));
      const adapters = await Promise.all(
        Array.from({ length: clients }, () =>
          data.openPostgresAdapter({ endpoint: db.endpoint, user: data.PG_USER }),
        ),
      );
      const g = await governed(adapters, clients, per, `pg${clients}`);
      await Promise.all(adapters.map((a) => a.close()));
      const url = new URL(db.endpoint);
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
      const b = await timed(clients, per, async (c, n, tag) => {
        for (let i = 1; i <= n; i++) {
          await conns[c].query("BEGIN");
          await conns[c].query("INSERT INTO baseline VALUES ($1, $2, $3, $4)", [
            `b${clients}-${c}-${tag}`,
            i,
            eventJson(i),
            now().toISOString(),
          ]);
          await conns[c].query("COMMIT");
        }
      });
      await Promise.all(conns.map((c) => c.end()));
      record("postgres", clients, g, b);
    }
  } finally {
    await db.drop();
  }
}

if (ONLY.has("redis")) {
  const scratch = data.scratchRedisPrefix();
  try {
    for (const clients of [1, 16]) {
      const per = Math.max(1, Math.floor(EVENTS / clients));
      const adapters = await Promise.all(
        Array.from({ length: clients }, () =>
          data.openRedisAdapter({ endpoint: data.REDIS_URL, keyPrefix: scratch.prefix }),
        ),
      );
      const g = await governed(adapters, clients, per, `redis${clients}`);
      await Promise.all(adapters.map((a) => a.close()));
      const conns = Array.from({ length: clients }, () => new Redis(data.REDIS_URL));
      const sha = await conns[0].script("LOAD", "return redis.call('RPUSH', KEYS[1], ARGV[1])");
      const b = await timed(clients, per, async (c, n, tag) => {
        for (let i = 1; i <= n; i++) {
          await conns[c].evalsha(
            sha,
            1,
            `${scratch.prefix}:baseline:${clients}:${c}:${tag}`,
            eventJson(i),
          );
        }
      });
      await Promise.all(conns.map((c) => c.quit()));
      record("redis", clients, g, b, 0.8);
    }
  } finally {
    await scratch.drop();
  }
}

rmSync(entry, { force: true });
if (JSON_OUT) console.log(JSON.stringify({ events: EVENTS, results }));
else {
  console.log(`data-store appends (${EVENTS} events per backend and client count)`);
  for (const r of results) {
    const target =
      r.target !== undefined
        ? `  target >= ${r.target * 100}%: ${r.meets_target ? "met" : "NOT met"}`
        : "";
    console.log(
      `${r.backend.padEnd(36)} clients ${String(r.clients).padStart(2)}  governed ${String(r.governed_events_per_s).padStart(7)}/s  baseline ${String(r.baseline_events_per_s).padStart(7)}/s  ratio ${(r.ratio * 100).toFixed(1)}%${target}`,
    );
  }
}
