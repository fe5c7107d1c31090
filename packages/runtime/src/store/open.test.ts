import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import {
  MIGRATIONS_TABLE,
  applyMigrations,
  readMigrations,
  resolveMigrationsDir,
} from "./migrations.js";
import { consoleStoreExtension } from "./console-store.js";
import { WAL_AUTOCHECKPOINT_PAGES, openStateStore } from "./open.js";
import { bundleStoreChild, runTogether } from "./test-support/child-process.js";
import type { BundledChild } from "./test-support/child-process.js";
import { sampleRun, tempDir } from "./test-support/fixtures.js";
import type { TempDir } from "./test-support/fixtures.js";

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
/** Every migration committed under drizzle/ (one row each in drizzle's bookkeeping table). */
const COMMITTED_MIGRATIONS = (
  JSON.parse(readFileSync(join(packageRoot, "drizzle", "meta", "_journal.json"), "utf8")) as {
    entries: unknown[];
  }
).entries.length;

let tmp: TempDir;
let child: BundledChild;

beforeAll(() => {
  child = bundleStoreChild();
});
afterAll(() => child.dispose());
afterEach(() => tmp.cleanup());

function migrationRows(path: string): Array<{ hash: string; created_at: number }> {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.prepare(`SELECT hash, created_at FROM "${MIGRATIONS_TABLE}"`).all() as Array<{
      hash: string;
      created_at: number;
    }>;
  } finally {
    raw.close();
  }
}

function catchError(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

describe("openStateStore", () => {
  it("creates missing parent directories and applies the committed migrations", () => {
    tmp = tempDir();
    const store = openStateStore({ path: tmp.dbPath });
    store.close();
    expect(migrationRows(tmp.dbPath)).toHaveLength(COMMITTED_MIGRATIONS);
    const raw = new Database(tmp.dbPath, { readonly: true });
    const tables = raw
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((row) => (row as { name: string }).name);
    raw.close();
    expect(tables).toEqual(
      expect.arrayContaining(["receipt_index", "run_ledger", "runs", "steps"]),
    );
  });

  it("applies nothing when reopened and keeps the data", () => {
    tmp = tempDir();
    const first = openStateStore({ path: tmp.dbPath });
    first.createRun(sampleRun("run_default_0000000000000001"));
    first.close();
    const before = migrationRows(tmp.dbPath);

    const second = openStateStore({ path: tmp.dbPath });
    expect(second.getRun("run_default_0000000000000001").status).toBe("running");
    second.close();
    expect(migrationRows(tmp.dbPath)).toEqual(before);

    const raw = new Database(tmp.dbPath);
    expect(applyMigrations(raw, resolveMigrationsDir())).toEqual({ applied: 0 });
    raw.close();
  });

  it("recognises a database migrated by drizzle's own migrator", () => {
    tmp = tempDir();
    const path = join(tmp.dir, "drizzle-migrated.sqlite");
    const raw = new Database(path);
    migrate(drizzle({ client: raw }), { migrationsFolder: resolveMigrationsDir() });
    raw.close();
    const store = openStateStore({ path });
    store.createRun(sampleRun("run_default_0000000000000002"));
    store.close();
    expect(migrationRows(path)).toHaveLength(COMMITTED_MIGRATIONS);
  });

  it("leaves the database in WAL journal mode", () => {
    tmp = tempDir();
    const store = openStateStore({ path: tmp.dbPath });
    store.createRun(sampleRun("run_default_0000000000000003"));
    expect(existsSync(`${tmp.dbPath}-wal`)).toBe(true);
    const raw = new Database(tmp.dbPath);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    raw.close();
    store.close();
  });

  it("checkpoints the WAL every few hundred pages, so an open never replays a long one", () => {
    tmp = tempDir();
    const store = openStateStore({ path: tmp.dbPath });
    // ~8 pages per run record: far more than 1,000 WAL pages without checkpoints.
    for (let i = 0; i < 200; i++) {
      store.createRun(sampleRun(`run_default_${i.toString(16).padStart(16, "0")}`));
    }
    // The WAL file is reused from its start after each checkpoint: its size is the longest
    // the WAL has been.
    const pages = (statSync(`${tmp.dbPath}-wal`).size - 32) / (4096 + 24);
    expect(pages).toBeGreaterThan(WAL_AUTOCHECKPOINT_PAGES / 2);
    expect(pages).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES + 50);
    store.close();
  });

  it("checkpoints the WAL under the console's writes too", () => {
    tmp = tempDir();
    const store = openStateStore({ path: tmp.dbPath });
    const consoleStore = store.attach(consoleStoreExtension);
    for (let i = 0; i < 400; i++) {
      consoleStore.upsertGatePolicy({
        skillName: `skill-${i}-${"x".repeat(200)}`,
        gateId: "deploy",
        requiredApprovals: 1,
        forbidInitiator: false,
        updatedAt: new Date(0).toISOString(),
      });
    }
    const pages = (statSync(`${tmp.dbPath}-wal`).size - 32) / (4096 + 24);
    expect(pages).toBeLessThan(WAL_AUTOCHECKPOINT_PAGES + 50);
    store.close();
  });

  it("enforces foreign keys on the connection it returns", () => {
    tmp = tempDir();
    const store = openStateStore({ path: tmp.dbPath });
    const err = catchError(() =>
      store.upsertStep({ runId: "run_default_ffffffffffffffff", stepId: "s", status: "ok" }),
    );
    expect(err.code).toBe("RUN_NOT_FOUND");
    store.close();
  });

  it("lets two processes open the same fresh database at once and migrates it once", async () => {
    for (let round = 0; round < 3; round += 1) {
      tmp = tempDir();
      const results = await runTogether(child.file, [
        ["open", tmp.dbPath, "run_default_00000000000000a1"],
        ["open", tmp.dbPath, "run_default_00000000000000a2"],
      ]);
      expect(results).toEqual([{ ok: true }, { ok: true }]);
      expect(migrationRows(tmp.dbPath)).toHaveLength(COMMITTED_MIGRATIONS);
      const store = openStateStore({ path: tmp.dbPath });
      expect(
        store
          .listRuns({ limit: 10 })
          .runs.map((r) => r.id)
          .sort(),
      ).toEqual(["run_default_00000000000000a1", "run_default_00000000000000a2"]);
      store.close();
      tmp.cleanup();
    }
  });

  it("reads the migration files exactly as drizzle's migrator does (statements, timestamps, hashes)", () => {
    tmp = tempDir();
    const dir = resolveMigrationsDir();
    const ours = readMigrations(dir);
    const theirs = readMigrationFiles({ migrationsFolder: dir });
    expect(ours).toHaveLength(COMMITTED_MIGRATIONS);
    expect(ours).toEqual(
      theirs.map((m) => ({ sql: m.sql, folderMillis: m.folderMillis, hash: m.hash })),
    );
  });

  it("refuses a journal whose tag is not a plain file name", () => {
    tmp = tempDir();
    const dir = join(tmp.dir, "migrations");
    mkdirSync(join(dir, "meta"), { recursive: true });
    writeFileSync(join(tmp.dir, "escape.sql"), "CREATE TABLE escaped (x);");
    writeFileSync(
      join(dir, "meta", "_journal.json"),
      JSON.stringify({ entries: [{ tag: "../escape", when: 1 }] }),
    );
    const err = catchError(() => openStateStore({ path: tmp.dbPath, migrationsDir: dir }));
    expect(err.code).toBe("STORE_ERROR");
    expect(err.details.reason).toBe("migrations_missing");
  });

  it("finds the migrations folder at the package root by default", () => {
    tmp = tempDir();
    expect(resolveMigrationsDir()).toBe(join(packageRoot, "drizzle"));
    expect(existsSync(join(resolveMigrationsDir(), "meta", "_journal.json"))).toBe(true);
  });

  it("reports a missing migrations folder as STORE_ERROR without absolute paths", () => {
    tmp = tempDir();
    const err = catchError(() =>
      openStateStore({ path: tmp.dbPath, migrationsDir: join(tmp.dir, "nowhere") }),
    );
    expect(err.code).toBe("STORE_ERROR");
    expect(err.details.reason).toBe("migrations_missing");
    expect(err.message).not.toContain(tmp.dir);
  });

  it("reports an unopenable location as STORE_ERROR naming only the label", () => {
    tmp = tempDir();
    const blocker = join(tmp.dir, "file");
    writeFileSync(blocker, "not a directory");
    const err = catchError(() =>
      openStateStore({ path: join(blocker, "state.sqlite"), label: ".runx/state.sqlite" }),
    );
    expect(err.code).toBe("STORE_ERROR");
    expect(err.message).toContain(".runx/state.sqlite");
    expect(err.message).not.toContain(tmp.dir);
    expect(JSON.stringify(err.details)).not.toContain(tmp.dir);
  });

  it("reports a file that is not a database as STORE_ERROR", () => {
    tmp = tempDir();
    const path = join(tmp.dir, "garbage.sqlite");
    writeFileSync(path, "this is not a sqlite database, just text that is long enough".repeat(20));
    const err = catchError(() => openStateStore({ path }));
    expect(err.code).toBe("STORE_ERROR");
    expect(err.details.sqliteCode).toBe("SQLITE_NOTADB");
    expect(err.message).not.toContain(tmp.dir);
  });
});
