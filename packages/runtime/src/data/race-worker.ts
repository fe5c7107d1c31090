/**
 * One writer process of the race and crash tests (bundled by the test with esbuild and run
 * with node). Prints one JSON line per outcome: `ack` (committed, with its version), `lost`
 * (a conflict on the shared stream), `error` (anything else; the process then exits 1).
 *
 * argv: <store JSON> <writer index> <appends (0 = until killed)> <mode: race|own>
 * store JSON: {"kind":"sqlite","path":…} | {"kind":"postgres","endpoint":…,"user":…} |
 *             {"kind":"redis","endpoint":…,"prefix":…}
 */
import { writeSync } from "node:fs";
import type { DataAdapter } from "./adapter.js";
import { runOnAdapter } from "./operations.js";

export type WorkerStore =
  | { kind: "sqlite"; path: string }
  | { kind: "postgres"; endpoint: string; user: string }
  | { kind: "redis"; endpoint: string; prefix: string };

export const RACE_SOURCE = "tenant://race/board";
export const RACE_RESOURCE = "race_events";
export const SHARED_AGGREGATE = "shared";

export async function openWorkerStore(store: WorkerStore): Promise<DataAdapter> {
  switch (store.kind) {
    case "sqlite":
      return (await import("./sqlite.js")).openSqliteAdapter({
        path: store.path,
        label: "race.sqlite",
        busyTimeoutMs: 30_000,
      });
    case "postgres":
      return (await import("./postgres.js")).openPostgresAdapter({
        endpoint: store.endpoint,
        user: store.user,
      });
    case "redis":
      return (await import("./redis.js")).openRedisAdapter({
        endpoint: store.endpoint,
        keyPrefix: store.prefix,
      });
  }
}

const emit = (line: Record<string, unknown>) => writeSync(1, `${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const [storeJson = "", writerText = "0", countText = "0", mode = "race"] = process.argv.slice(2);
  const store = JSON.parse(storeJson) as WorkerStore;
  const writer = Number(writerText);
  const count = Number(countText);
  const adapter = await openWorkerStore(store);
  const now = () => new Date();
  const stream = {
    data_source_ref: RACE_SOURCE,
    resource: RACE_RESOURCE,
    aggregate_id: mode === "race" ? SHARED_AGGREGATE : `own-${writer}`,
  };
  let ownVersion = 0;
  for (let i = 0; count === 0 || i < count; i++) {
    const key = `w${writer}-${i}`;
    const event = { type: "race.append", writer, i, pad: "x".repeat(64) };
    for (;;) {
      let expected = ownVersion;
      if (mode === "race") {
        const head = await runOnAdapter(adapter, "read_projection", stream, { now });
        expected = head.after_version;
      }
      const r = await runOnAdapter(
        adapter,
        "append_event",
        { ...stream, expected_version: expected, idempotency_key: key, event },
        { now },
      );
      if (r.status === "committed") {
        ownVersion = r.after_version;
        emit({ ack: key, aggregate: stream.aggregate_id, version: r.after_version });
        break;
      }
      if (r.status === "conflict" && mode === "race") {
        emit({ lost: key, expected, current: r.after_version });
        continue;
      }
      emit({ error: key, status: r.status, stops: r.stop_conditions });
      await adapter.close();
      process.exit(1);
    }
  }
  await adapter.close();
}

// Only the spawned worker runs; importing this module (types, openWorkerStore) does not.
if (process.env.RUNX_DATA_RACE_WORKER === "1") {
  void main().catch((error: unknown) => {
    emit({ error: "worker", message: String(error) });
    process.exit(1);
  });
}
