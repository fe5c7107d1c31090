// What the data-store benchmarks share (bench/data.mjs, bench/redis-cpu.mjs): the data core
// bundled from source, the benchmark's stream and event, the rows a hand-written client would
// store, and the bare EVALSHA of the Redis adapter's own append script.
import { mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const repo = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The data-store sources (adapters and core) bundled once; the drivers stay external. */
export async function loadDataCore() {
  const cache = join(repo, "node_modules", ".cache", "runx-bench");
  mkdirSync(cache, { recursive: true });
  const entry = join(cache, `data-${process.pid}.mjs`);
  await build({
    stdin: {
      contents: `
      export { openSqliteAdapter, openSqliteFile, SQLITE_SCHEMA_V1 } from "./src/data/sqlite.ts";
      export { openPostgresAdapter } from "./src/data/postgres.ts";
      export { openRedisAdapter, REDIS_APPEND_SCRIPT, headMemberAt, redisStreamKeys } from "./src/data/redis.ts";
      export { runOnAdapter } from "./src/data/operations.ts";
      export { EMPTY_PROJECTION_DIGEST, canonicalEvent, canonicalRecord, chainDigest } from "./src/data/model.ts";
      export { sha256Prefixed } from "./src/receipts/canonical.ts";
      export { NATIVE_AFTER, nativeSha256InUse } from "./src/crypto/sha256.ts";
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
  try {
    return await import(pathToFileURL(entry).href);
  } finally {
    rmSync(entry, { force: true });
  }
}

export const SOURCE = "tenant://bench/board";
export const RESOURCE = "bench_events";
export const TYPE = "bench.append";
export const now = () => new Date();
/** The event every side stores (version i). */
export const event = (i) => ({ type: TYPE, i, payload: { title: "benchmark event", n: i } });

/** The raw data.append_event input of version i + 1 of `aggregate` (what a governed side sends). */
export const appendInput = (aggregate, i) => ({
  data_source_ref: SOURCE,
  resource: RESOURCE,
  aggregate_id: aggregate,
  expected_version: i,
  idempotency_key: `k${i + 1}`,
  event: event(i + 1),
});

/**
 * What a hand-written client would store for `aggregate` (core `data`): per version, the
 * canonical event, its digest, the chain value before and after, and the record JSON after its
 * commit time (`{"committed_at":…,` is stamped at write time, see `stamped`).
 */
export function prepareStream(data, aggregate, n) {
  const out = [];
  let previous = data.EMPTY_PROJECTION_DIGEST;
  for (let version = 1; version <= n; version++) {
    const value = event(version);
    const eventJson = data.canonicalEvent(value);
    const eventDigest = data.sha256Prefixed(eventJson);
    const record = {
      event_ref: `${RESOURCE}:${aggregate}:${version}`,
      version,
      event_type: TYPE,
      event: value,
      event_digest: eventDigest,
      idempotency_key: `k${version}`,
      committed_at: "",
    };
    const recordJson = data.canonicalRecord(record, eventJson);
    const next = data.chainDigest(previous, version, eventDigest);
    out.push({
      version,
      event: value,
      eventJson,
      eventDigest,
      eventRef: record.event_ref,
      afterTime: recordJson.slice(recordJson.indexOf(',"event":') + 1),
      previous,
      next,
    });
    previous = next;
  }
  return out;
}

/** A prepared row's record JSON with its commit time. */
export const stamped = (row, at) => `{"committed_at":"${at}",${row.afterTime}`;

/**
 * The append script's arguments for `row` of `aggregate` (key count, keys, then ARGV, as the
 * strings the adapter sends, in redisAppendArgs' order), the commit time stamped now.
 */
function appendArgv(data, keys, aggregate, row) {
  const date = now();
  return [
    "4",
    keys[0],
    keys[1],
    keys[2],
    keys[3],
    String(row.version - 1),
    `k${row.version}`,
    row.eventDigest,
    stamped(row, date.toISOString()),
    row.previous,
    row.next,
    data.headMemberAt(date.getTime(), aggregate),
    aggregate,
  ];
}

/**
 * The Redis adapter's append script for `row` of `aggregate` with the arguments the adapter
 * sends, called as ioredis's `conn.evalsha(...)`; throws unless committed.
 */
export async function bareRedisAppend(data, conn, sha, keys, aggregate, row) {
  const reply = await conn.evalsha(sha, ...appendArgv(data, keys, aggregate, row));
  if (reply[0] !== "committed") throw new Error(`bare append: ${reply[0]}`);
}

/**
 * `bareRedisAppend` sent the way the Redis adapter sends its scripts: an ioredis Command whose
 * arguments are set as flat strings, handed to sendCommand, instead of the generated
 * `conn.evalsha(...)` (see `scripted` in packages/runtime/src/data/redis.ts). Its ratio to
 * the governed side is runx's cost alone, with the transport the same on both sides.
 */
export async function sentRedisAppend(data, Command, conn, sha, keys, aggregate, row) {
  const command = new Command("evalsha", [], { replyEncoding: "utf8" });
  command.args = [sha, ...appendArgv(data, keys, aggregate, row)];
  void conn.sendCommand(command);
  const reply = await command.promise;
  if (reply[0] !== "committed") throw new Error(`sent append: ${reply[0]}`);
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Which SHA-256 the core hashed short strings with by the end of the run (see
 * packages/runtime/src/crypto/sha256.ts); asking does not load the addon.
 */
export const sha256Implementation = (data) =>
  data.nativeSha256InUse()
    ? `runtime addon (native/sha256.c), after the process's first ${data.NATIVE_AFTER} through node:crypto`
    : "node:crypto (the runtime addon was not loaded: not built, or too few strings hashed)";
