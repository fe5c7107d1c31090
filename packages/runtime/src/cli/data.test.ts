import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { recomputeChain } from "../data/model.js";
import type { EventRecord } from "../data/model.js";
import { hashCanonical } from "../receipts/canonical.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

/** A v0 (JS-era) store: 9 event columns, no data_source_ref, an old heads table. */
function legacyStore(path: string, scoped = false): void {
  const db = new Database(path);
  db.exec(
    `CREATE TABLE runx_events (${scoped ? "data_source_ref TEXT," : ""} resource TEXT, aggregate_id TEXT, version INTEGER, idempotency_key TEXT, event_ref TEXT, event_type TEXT, event_digest TEXT, event_json TEXT, committed_at TEXT)`,
  );
  db.exec(
    "CREATE TABLE runx_stream_heads (resource TEXT, aggregate_id TEXT, version INTEGER, event_ref TEXT, event_type TEXT, event_digest TEXT, idempotency_key TEXT, event_json TEXT, committed_at TEXT, projection TEXT)",
  );
  db.exec("CREATE TABLE runx_data_store_migrations (version INTEGER, applied_at TEXT)");
  const insert = db.prepare(
    `INSERT INTO runx_events VALUES (${scoped ? "?, " : ""}?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const [aggregate, count] of [
    ["posting-1", 3],
    ["posting-2", 2],
  ] as const) {
    for (let v = 1; v <= count; v++) {
      const event = { type: v === 1 ? "posting.created" : "posting.updated", v };
      const values = [
        "board_events",
        aggregate,
        v,
        `${aggregate}:${v}`,
        `board_events:${aggregate}:${v}`,
        event.type,
        hashCanonical(event),
        JSON.stringify(event),
        `2026-07-0${v}T00:00:00.000Z`,
      ];
      insert.run(
        ...(scoped ? [aggregate === "posting-1" ? "" : "tenant://other/board", ...values] : values),
      );
    }
  }
  db.close();
}

describe("runx data", () => {
  let ws: Workspace;
  beforeEach(() => {
    ws = makeWorkspace("runx-data-cli-");
  });
  afterEach(() => ws.cleanup());

  it("migrates a legacy store with a verified backup, then answers current without a new backup", async () => {
    ws.write(".runx/data/.keep", "");
    legacyStore(join(ws.root, ".runx/data/board.sqlite"));
    const first = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/board.sqlite",
      "--source",
      "tenant://acme/board",
      "--json",
    ]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const proof = first.json<{ result: Record<string, unknown> }>().result;
    expect(proof).toMatchObject({
      schema: "runx.event_store_migration_proof.v1",
      status: "migrated",
      source_schema: "v0_unscoped",
      target_schema_version: 1,
      backup_path: ".runx/data/board.sqlite.v0.backup.sqlite",
      event_count: 5,
      stream_count: 2,
      verified: true,
    });
    expect(proof.source_digest).toBe(proof.result_digest);
    const backup = join(ws.root, ".runx/data/board.sqlite.v0.backup.sqlite");
    expect(proof.backup_digest).toBe(`sha256:${sha(backup)}`);

    // The migrated store serves the operations: tail reads the events and the chain verifies.
    const binding = {
      data_sources: {
        "tenant://acme/board": { adapter: "data.sqlite", database_path: ".runx/data/board.sqlite" },
      },
    };
    ws.write(".runx/data-sources.json", JSON.stringify(binding));
    const tail = await runx(ws, [
      "data",
      "tail",
      "tenant://acme/board",
      "board_events",
      "posting-1",
      "--json",
    ]);
    expect(tail.code, tail.stderr).toBe(0);
    const read = tail.json<{
      result: { events: EventRecord[]; after_version: number; projection_digest: string };
    }>().result;
    expect(read.events.map((e) => e.version)).toEqual([1, 2, 3]);
    expect(read.projection_digest).toBe(recomputeChain(read.events));

    const again = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/board.sqlite",
      "--source",
      "tenant://acme/board",
      "--json",
    ]);
    expect(again.code, again.stdout).toBe(0);
    expect(again.json<{ result: Record<string, unknown> }>().result).toMatchObject({
      status: "current",
      backup_path: null,
      backup_digest: null,
      source_digest: proof.result_digest,
    });
    // The first backup is untouched and still holds the legacy layout and rows.
    expect(`sha256:${sha(backup)}`).toBe(proof.backup_digest);
    const copy = new Database(backup, { readonly: true });
    expect(copy.pragma("user_version", { simple: true })).toBe(0);
    expect(copy.prepare("SELECT count(*) AS n FROM runx_events").get()).toEqual({ n: 5 });
    expect(copy.prepare("PRAGMA table_info(runx_events)").all().length).toBe(9);
    copy.close();
  });

  it("keeps scoped rows' own refs and fills blank ones from --source", async () => {
    ws.write(".runx/data/.keep", "");
    legacyStore(join(ws.root, ".runx/data/scoped.sqlite"), true);
    const r = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/scoped.sqlite",
      "--source",
      "tenant://acme/board",
      "--json",
    ]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.json<{ result: Record<string, unknown> }>().result).toMatchObject({
      status: "migrated",
      source_schema: "v0_scoped",
    });
    const db = new Database(join(ws.root, ".runx/data/scoped.sqlite"), { readonly: true });
    const refs = db
      .prepare("SELECT DISTINCT data_source_ref AS r FROM runx_events ORDER BY r")
      .all();
    db.close();
    expect(refs).toEqual([{ r: "tenant://acme/board" }, { r: "tenant://other/board" }]);
  });

  it("leaves an unknown schema byte-identical, creates no backup and says how to recover", async () => {
    const path = ws.write(".runx/data/odd.sqlite", "");
    const db = new Database(path);
    db.exec(
      "CREATE TABLE runx_events (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO runx_events (body) VALUES ('x')",
    );
    db.close();
    const before = sha(path);
    const r = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/odd.sqlite",
      "--source",
      "tenant://a",
      "--json",
    ]);
    expect(r.code).toBe(1);
    const failure = r.json<{
      status: string;
      error: { reason: string; message: string; kind: string };
    }>();
    expect(failure).toMatchObject({
      status: "failure",
      error: { reason: "DATA_SOURCE_INVALID", kind: "event_store_migration" },
    });
    expect(failure.error.message).toContain("not modified");
    expect(failure.error.message).toContain("Recovery");
    expect(sha(path)).toBe(before);
    expect(existsSync(`${path}.v0.backup.sqlite`)).toBe(false);
  });

  it("refuses a partially migrated store (leftover staging table) untouched", async () => {
    ws.write(".runx/data/.keep", "");
    const path = join(ws.root, ".runx/data/partial.sqlite");
    legacyStore(path);
    const db = new Database(path);
    db.exec("CREATE TABLE runx_events_migration_v0 (x TEXT)");
    db.close();
    const before = sha(path);
    const r = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/partial.sqlite",
      "--source",
      "tenant://a",
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("runx_events_migration_v0");
    expect(sha(path)).toBe(before);
  });

  it("refuses paths outside the workspace and an existing backup target", async () => {
    const outside = await runx(ws, [
      "data",
      "migrate",
      "--database",
      "../x.sqlite",
      "--source",
      "tenant://a",
      "--json",
    ]);
    expect(outside.code).toBe(1);
    ws.write(".runx/data/.keep", "");
    legacyStore(join(ws.root, ".runx/data/b.sqlite"));
    ws.write("taken.sqlite", "occupied");
    const taken = await runx(ws, [
      "data",
      "migrate",
      "--database",
      ".runx/data/b.sqlite",
      "--source",
      "tenant://a",
      "--backup",
      "taken.sqlite",
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("choose a new --backup path");
    expect(ws.read("taken.sqlite")).toBe("occupied");
    const usage = await runx(ws, ["data", "migrate", "--database", ".runx/data/b.sqlite"]);
    expect(usage.code).toBe(64);
  });

  it("lists configured sources without secrets and refuses a bad binding by file and field", async () => {
    ws.write(
      ".runx/data-sources.json",
      JSON.stringify({
        data_sources: {
          "tenant://acme/cache": {
            adapter: "data.redis",
            endpoint: "redis://127.0.0.1:6379/0",
            key_prefix: "runx:{acme}",
          },
        },
      }),
    );
    const r = await runx(ws, ["data", "sources", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json<{ sources: unknown[] }>().sources).toEqual([
      {
        data_source_ref: "tenant://acme/cache",
        adapter: "data.redis",
        origin: ".runx/data-sources.json",
        endpoint: "redis://127.0.0.1:6379/0",
        key_prefix: "runx:{acme}",
      },
    ]);
    const human = await runx(ws, ["data", "sources"]);
    expect(human.stdout).toContain("tenant://acme/cache");
    ws.write(
      ".runx/data-sources.json",
      JSON.stringify({
        data_sources: {
          "tenant://x": { adapter: "data.sqlite", database_path: "a.sqlite", password: "hunter2" },
        },
      }),
    );
    const bad = await runx(ws, ["data", "sources"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(".runx/data-sources.json");
    expect(bad.stderr).toContain("data_sources.tenant://x.password");
    expect(bad.stderr).not.toContain("hunter2");
  });

  it("tails a stream in bounded form and refuses an out-of-range limit", async () => {
    const append = (v: number) =>
      runx(ws, [
        "skill",
        join(ws.root, "skills/data-store"),
        "-i",
        "data_source_ref=local://dev",
        "-i",
        "resource=r",
        "-i",
        "aggregate_id=a",
        "--input-json",
        `expected_version=${v}`,
        "-i",
        `idempotency_key=k${v}`,
        "--input-json",
        `event={"type":"t${v}"}`,
        "--json",
      ]);
    ws.addBundledSkill("data-store");
    for (let v = 0; v < 3; v++) expect((await append(v)).code).toBe(0);
    const human = await runx(ws, ["data", "tail", "local://dev", "r", "a", "--limit", "2"]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("version 3");
    expect(human.stdout).toContain("t2");
    expect(human.stdout).not.toContain("t0");
    expect(human.stdout).toContain("showing the newest 2 of 3");
    expect((await runx(ws, ["data", "tail", "local://dev", "r", "a", "--limit", "501"])).code).toBe(
      64,
    );
  });
});
