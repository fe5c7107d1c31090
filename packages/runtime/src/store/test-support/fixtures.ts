/** Shared helpers of the store tests: temp databases, a settable clock, sample runs. */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveMigrationsDir } from "../migrations.js";
import type { NewRun } from "../state-store.js";

/** A temp directory that `cleanup()` removes. */
export interface TempDir {
  dir: string;
  dbPath: string;
  cleanup(): void;
}

/** Creates a fresh temp directory; `dbPath` points at a not-yet-existing nested file. */
export function tempDir(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), "runx-store-"));
  return {
    dir,
    dbPath: join(dir, "nested", ".runx", "state.sqlite"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A clock tests move by hand. */
export interface FakeClock {
  now: () => Date;
  set(ms: number): void;
}

/** Starts at 2026-01-01T00:00:00.000Z. */
export function fakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let current = startMs;
  return { now: () => new Date(current), set: (ms) => (current = ms) };
}

/** A run with the required fields filled; `overrides` win. */
export function sampleRun(id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    skillName: "echo",
    runner: "default",
    skillRef: "skills/echo",
    packageDir: "skills/echo",
    packageDigest: `sha256:${"a".repeat(64)}`,
    inputsDigest: `sha256:${"b".repeat(64)}`,
    ...overrides,
  };
}

/** `run_default_<16hex>` from a number, so ids sort independently of creation order. */
export function runId(n: number): string {
  const scrambled = (n * 2654435761) % 2 ** 32;
  return `run_default_${scrambled.toString(16).padStart(8, "0")}${n.toString(16).padStart(8, "0")}`;
}

/** The run fields a row written before migration 0006 (no `outcome` column) carries. */
export interface LegacyRunRow {
  status?: string;
  disposition?: string | null;
  requestsJson?: string | null;
  skillName?: string;
  createdMs?: number;
}

/**
 * Inserts a run as a store at an older migration wrote it, with the columns every migration
 * up to 0005 has: the current store writes columns such a database lacks.
 */
export function insertLegacyRun(
  sqlite: { prepare(sql: string): { run(...params: unknown[]): unknown } },
  id: string,
  row: LegacyRunRow = {},
): void {
  const createdMs = row.createdMs ?? Date.UTC(2026, 0, 1);
  const at = new Date(createdMs).toISOString();
  const skill = row.skillName ?? "echo";
  sqlite
    .prepare(
      `INSERT INTO runs (id, skill_name, runner, skill_ref, package_dir, package_digest, status,
         disposition, requests_json, inputs_digest, created_at, updated_at, created_ms)
       VALUES (?, ?, 'default', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      id,
      skill,
      `skills/${skill}`,
      `skills/${skill}`,
      `sha256:${"a".repeat(64)}`,
      row.status ?? "running",
      row.disposition ?? null,
      row.requestsJson ?? null,
      `sha256:${"b".repeat(64)}`,
      at,
      at,
      createdMs,
    );
}

/** A copy (in `dir`) of the committed migrations that stops after the one tagged `lastTag`. */
export function migrationsUpTo(dir: string, lastTag: string): string {
  cpSync(resolveMigrationsDir(), dir, { recursive: true });
  const path = join(dir, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(path, "utf8")) as { entries: Array<{ tag: string }> };
  const last = journal.entries.findIndex((e) => e.tag === lastTag);
  if (last < 0) throw new Error(`no migration ${lastTag}`);
  journal.entries = journal.entries.slice(0, last + 1);
  writeFileSync(path, JSON.stringify(journal));
  return dir;
}
