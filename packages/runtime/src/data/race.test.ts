/**
 * Race and crash tests per adapter, with writers in separate processes. 16 writers: 8 race on
 * one shared stream through expected_version (read head, append, retry on conflict), 8 append
 * to their own streams. Afterwards every acknowledged event is present exactly once, versions
 * are dense, every loser got `conflict`, and the head digest chain verifies. The crash test
 * SIGKILLs a writer mid-stream and checks there is no torn event and the head matches.
 *
 * RUNX_DATA_RACE_APPENDS sets appends per writer (default 200; 1000 is the full issue load).
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../testing/cli.js";
import type { DataAdapter } from "./adapter.js";
import type { EventRecord } from "./model.js";
import { recomputeChain } from "./model.js";
import { runOnAdapter } from "./operations.js";
import { RACE_RESOURCE, RACE_SOURCE, SHARED_AGGREGATE, openWorkerStore } from "./race-worker.js";
import type { WorkerStore } from "./race-worker.js";
import { PG_USER, REDIS_URL, scratchPostgres, scratchRedisPrefix } from "./test-services.js";

const APPENDS = Number(process.env.RUNX_DATA_RACE_APPENDS ?? "200");
const WRITERS = 16;
const now = () => new Date();

let workerFile = "";
beforeAll(async () => {
  const dir = join(REPO_ROOT, "node_modules", ".cache", "runx-data-race");
  mkdirSync(dir, { recursive: true });
  workerFile = join(dir, `worker-${process.pid}.mjs`);
  await build({
    entryPoints: [join(REPO_ROOT, "packages/runtime/src/data/race-worker.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: workerFile,
    external: ["better-sqlite3", "pg", "ioredis"],
    logLevel: "error",
  });
});
afterAll(() => rmSync(workerFile, { force: true }));

interface Line {
  ack?: string;
  lost?: string;
  error?: string;
  aggregate?: string;
  version?: number;
  expected?: number;
  current?: number;
}

function startWorker(store: WorkerStore, writer: number, count: number, mode: "race" | "own") {
  const child = spawn(
    process.execPath,
    [workerFile, JSON.stringify(store), String(writer), String(count), mode],
    {
      env: { PATH: process.env.PATH ?? "", RUNX_DATA_RACE_WORKER: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const lines: Line[] = [];
  let buffer = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => {
    buffer += chunk.toString("utf8");
    const parts = buffer.split("\n");
    buffer = parts.pop() ?? "";
    for (const part of parts) if (part !== "") lines.push(JSON.parse(part) as Line);
  });
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal })),
  );
  return { child, lines, done, stderr: () => stderr };
}

async function readStream(adapter: DataAdapter, aggregate: string): Promise<EventRecord[]> {
  const out: EventRecord[] = [];
  let after = 0;
  for (;;) {
    const page = await runOnAdapter(
      adapter,
      "read_events",
      {
        data_source_ref: RACE_SOURCE,
        resource: RACE_RESOURCE,
        aggregate_id: aggregate,
        after_version: after,
        limit: 500,
      },
      { now },
    );
    expect(page.status).toBe("read");
    out.push(...page.events);
    after = page.next_after_version ?? after;
    if (page.has_more !== true) return out;
  }
}

async function verifyStream(adapter: DataAdapter, aggregate: string, acked: Line[]) {
  const events = await readStream(adapter, aggregate);
  expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
  const keys = events.map((e) => e.idempotency_key);
  expect(new Set(keys).size).toBe(keys.length);
  const byKey = new Map(events.map((e) => [e.idempotency_key, e.version]));
  for (const ack of acked) expect(byKey.get(ack.ack ?? "")).toBe(ack.version);
  const head = await runOnAdapter(
    adapter,
    "read_projection",
    { data_source_ref: RACE_SOURCE, resource: RACE_RESOURCE, aggregate_id: aggregate },
    { now },
  );
  expect(head.after_version).toBe(events.length);
  expect(head.projection_digest).toBe(recomputeChain(events));
  return events;
}

/**
 * Waits until a killed writer can no longer commit. A SIGKILLed process commits nothing more on
 * SQLite or Redis, but a PostgreSQL backend may still be finishing the COMMIT the client sent
 * just before it died; until that backend session ends, reading the stream could miss the last
 * event and the next append would rightly conflict.
 */
async function settled(store: WorkerStore): Promise<void> {
  if (store.kind !== "postgres") return;
  const { default: pg } = await import("pg");
  const url = new URL(store.endpoint);
  url.username = store.user;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const { rows } = await client.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
      );
      if (rows[0]?.n === "0") return;
      if (Date.now() > deadline) throw new Error("the killed writer's session never ended");
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await client.end();
  }
}

function raceSuite(
  name: string,
  makeStore: () => Promise<{ store: WorkerStore; drop(): Promise<void> }>,
) {
  describe(`${name}: concurrent writers in separate processes`, { timeout: 600_000 }, () => {
    it(`${WRITERS} writers x ${APPENDS} appends, half racing on expected_version: exactly once, dense, chained`, async () => {
      const scratch = await makeStore();
      const { store } = scratch;
      const drop = () => scratch.drop();
      try {
        const workers = Array.from({ length: WRITERS }, (_, w) =>
          startWorker(store, w, APPENDS, w < WRITERS / 2 ? "race" : "own"),
        );
        const exits = await Promise.all(workers.map((w) => w.done));
        workers.forEach((w, i) =>
          expect(exits[i]?.code, w.stderr() + JSON.stringify(w.lines.filter((l) => l.error))).toBe(
            0,
          ),
        );
        const lines = workers.flatMap((w) => w.lines);
        expect(lines.filter((l) => l.error !== undefined)).toEqual([]);
        const acks = lines.filter((l) => l.ack !== undefined);
        expect(acks).toHaveLength(WRITERS * APPENDS);
        // Every loser was told the real current version, which differed from its expectation.
        for (const lost of lines.filter((l) => l.lost !== undefined))
          expect(lost.current).not.toBe(lost.expected);
        const adapter = await openWorkerStore(store);
        try {
          const shared = await verifyStream(
            adapter,
            SHARED_AGGREGATE,
            acks.filter((a) => a.aggregate === SHARED_AGGREGATE),
          );
          expect(shared).toHaveLength((WRITERS / 2) * APPENDS);
          for (let w = WRITERS / 2; w < WRITERS; w++) {
            const own = await verifyStream(
              adapter,
              `own-${w}`,
              acks.filter((a) => a.aggregate === `own-${w}`),
            );
            expect(own).toHaveLength(APPENDS);
          }
        } finally {
          await adapter.close();
        }
      } finally {
        await drop();
      }
    });

    it("a writer killed with SIGKILL mid-stream leaves no torn event and a matching head", async () => {
      const scratch = await makeStore();
      const { store } = scratch;
      const drop = () => scratch.drop();
      try {
        const worker = startWorker(store, 99, 0, "own");
        const deadline = Date.now() + 30_000;
        while (worker.lines.filter((l) => l.ack).length < 50 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 10));
        }
        worker.child.kill("SIGKILL");
        const exit = await worker.done;
        expect(exit.signal).toBe("SIGKILL");
        const acks = worker.lines.filter((l) => l.ack !== undefined);
        expect(acks.length).toBeGreaterThanOrEqual(50);
        await settled(store);
        const adapter = await openWorkerStore(store);
        try {
          const events = await verifyStream(adapter, "own-99", acks);
          // At most the one append in flight at the kill may have committed unacknowledged.
          expect(events.length - acks.length).toBeLessThanOrEqual(1);
          const next = await runOnAdapter(
            adapter,
            "append_event",
            {
              data_source_ref: RACE_SOURCE,
              resource: RACE_RESOURCE,
              aggregate_id: "own-99",
              expected_version: events.length,
              idempotency_key: "after-crash",
              event: { type: "resumed" },
            },
            { now },
          );
          expect(next.status).toBe("committed");
        } finally {
          await adapter.close();
        }
      } finally {
        await drop();
      }
    });
  });
}

raceSuite("sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "runx-data-race-"));
  return Promise.resolve({
    store: { kind: "sqlite", path: join(dir, "race.sqlite") },
    drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  });
});

raceSuite("postgres", async () => {
  const db = await scratchPostgres();
  return {
    store: { kind: "postgres", endpoint: db.endpoint, user: PG_USER },
    drop: () => db.drop(),
  };
});

raceSuite("redis", () => {
  const scratch = scratchRedisPrefix();
  return Promise.resolve({
    store: { kind: "redis", endpoint: REDIS_URL, prefix: scratch.prefix },
    drop: () => scratch.drop(),
  });
});
