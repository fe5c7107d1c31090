// Where a governed Redis append's client CPU goes (a diagnostic beside bench/data.mjs, no
// target). With fast Redis and 16 clients in one Node process both sides of bench/data.mjs are
// bound by this process's CPU, so its ratio is the CPU ratio measured here. In one process,
// rounds rotating, 16 clients each append N events per round through:
//   governed  data.append_event through the core on the Redis adapter (what bench/data.mjs runs);
//   adapter   the adapter's append with the request the core would build, built before the clock;
//   raw       a bare EVALSHA of the adapter's script with the same arguments (bench/data.mjs's
//             baseline).
// Printed per side: median process CPU (user + system) µs per event, and the median of the
// per-round ratios to raw. The difference governed − adapter is the core's work (input
// contract, canonical JSON, digests, envelope); adapter − raw is the adapter's (chain value,
// arguments, reply).
//
// Usage: node bench/redis-cpu.mjs [--events N] [--rounds R] [--clients C]
// Redis on loopback: RUNX_TEST_REDIS_URL (default redis://127.0.0.1:6379/0); a scratch key
// prefix is used and removed.
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = argv.indexOf(name);
  return Number(i >= 0 ? argv[i + 1] : fallback);
};
const EVENTS = arg("--events", 1000);
const ROUNDS = arg("--rounds", 13);
const CLIENTS = arg("--clients", 16);
for (const [name, value] of [
  ["--events", EVENTS],
  ["--rounds", ROUNDS],
  ["--clients", CLIENTS],
]) {
  if (!Number.isSafeInteger(value) || value < 1) {
    console.error(`${name} must be a positive integer`);
    process.exit(2);
  }
}

const cache = join(repo, "node_modules", ".cache", "runx-bench");
mkdirSync(cache, { recursive: true });
const entry = join(cache, `redis-cpu-${process.pid}.mjs`);
await build({
  stdin: {
    contents: `
      export { openRedisAdapter, REDIS_APPEND_SCRIPT, headMember, redisStreamKeys } from "./src/data/redis.ts";
      export { runOnAdapter } from "./src/data/operations.ts";
      export { EMPTY_PROJECTION_DIGEST, canonicalEvent, canonicalRecord, chainDigest } from "./src/data/model.ts";
      export { sha256Prefixed } from "./src/receipts/canonical.ts";
      export { scratchRedisPrefix, REDIS_URL } from "./src/data/test-services.ts";
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
const { Redis } = await import("ioredis");

const SOURCE = "tenant://bench/board";
const RESOURCE = "bench_events";
const now = () => new Date();
const event = (i) => ({ type: "bench.append", i, payload: { title: "benchmark event", n: i } });

/** The requests the core builds for versions 1..n of `aggregate`, with the chain values. */
function requests(aggregate, n) {
  const out = [];
  let previous = data.EMPTY_PROJECTION_DIGEST;
  for (let version = 1; version <= n; version++) {
    const value = event(version);
    const eventJson = data.canonicalEvent(value);
    const record = {
      event_ref: `${RESOURCE}:${aggregate}:${version}`,
      version,
      event_type: "bench.append",
      event: value,
      event_digest: data.sha256Prefixed(eventJson),
      idempotency_key: `k${version}`,
      committed_at: now().toISOString(),
    };
    const next = data.chainDigest(previous, version, record.event_digest);
    out.push({
      request: {
        stream: { source: SOURCE, resource: RESOURCE, aggregateId: aggregate },
        expectedVersion: version - 1,
        idempotencyKey: record.idempotency_key,
        eventJson,
        recordJson: data.canonicalRecord(record, eventJson),
        record,
      },
      previous,
      next,
    });
    previous = next;
  }
  return out;
}

const scratch = data.scratchRedisPrefix();
const adapters = await Promise.all(
  Array.from({ length: CLIENTS }, () =>
    data.openRedisAdapter({ endpoint: data.REDIS_URL, keyPrefix: scratch.prefix }),
  ),
);
const conns = Array.from({ length: CLIENTS }, () => new Redis(data.REDIS_URL));
try {
  const sha = await conns[0].script("LOAD", data.REDIS_APPEND_SCRIPT);
  const sides = {
    governed: {
      prepare: (aggregate) =>
        Array.from({ length: EVENTS }, (_, i) => ({
          data_source_ref: SOURCE,
          resource: RESOURCE,
          aggregate_id: aggregate,
          expected_version: i,
          idempotency_key: `k${i + 1}`,
          event: event(i + 1),
        })),
      run: async (c, inputs) => {
        for (const input of inputs) {
          const r = await data.runOnAdapter(adapters[c], "append_event", input, { now });
          if (r.status !== "committed") throw new Error(`governed append: ${r.status}`);
        }
      },
    },
    adapter: {
      prepare: (aggregate) => requests(aggregate, EVENTS),
      run: async (c, rows) => {
        for (const { request } of rows) {
          const r = await adapters[c].append(request);
          if (r.kind !== "committed") throw new Error(`adapter append: ${r.kind}`);
        }
      },
    },
    raw: {
      prepare: (aggregate) => ({
        aggregate,
        keys: data.redisStreamKeys(scratch.prefix, {
          source: SOURCE,
          resource: RESOURCE,
          aggregateId: aggregate,
        }),
        rows: requests(aggregate, EVENTS),
      }),
      run: async (c, { aggregate, keys, rows }) => {
        for (const { request, previous, next } of rows) {
          const at = now().toISOString();
          const reply = await conns[c].evalsha(
            sha,
            4,
            keys[0],
            keys[1],
            keys[2],
            keys[3],
            request.expectedVersion,
            request.idempotencyKey,
            request.record.event_digest,
            request.recordJson,
            previous,
            next,
            data.headMember(at, aggregate),
            aggregate,
          );
          if (reply[0] !== "committed") throw new Error(`raw append: ${reply[0]}`);
        }
      },
    },
  };
  const names = Object.keys(sides);
  const cpu = Object.fromEntries(names.map((name) => [name, []]));
  // Round 0 warms up (JIT, connections) and is not counted.
  for (let round = 0; round <= ROUNDS; round++) {
    for (let k = 0; k < names.length; k++) {
      const name = names[(round + k) % names.length];
      const side = sides[name];
      const inputs = Array.from({ length: CLIENTS }, (_, c) =>
        side.prepare(`${name}-r${round}-${c}`),
      );
      const before = process.cpuUsage();
      await Promise.all(inputs.map((input, c) => side.run(c, input)));
      const used = process.cpuUsage(before);
      if (round > 0) cpu[name].push((used.user + used.system) / (CLIENTS * EVENTS));
    }
  }
  const median = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  console.log(
    `redis append client CPU: ${CLIENTS} clients × ${EVENTS} events per round, ${ROUNDS} rounds (medians)`,
  );
  for (const name of names) {
    const ratio = median(cpu[name].map((x, i) => x / cpu.raw[i]));
    console.log(
      `${name.padEnd(9)} ${median(cpu[name]).toFixed(2).padStart(6)} µs/event  ${ratio.toFixed(3)}× raw`,
    );
  }
} finally {
  await Promise.all(adapters.map((a) => a.close()));
  await Promise.all(conns.map((c) => c.quit()));
  await scratch.drop();
}
