/**
 * Opens (creating when needed) the SQLite run state store and brings its schema up to date.
 */
import { basename, dirname } from "node:path";
import type Database from "better-sqlite3";
import { RuntimeError } from "../errors.js";
import { ensureStateDir } from "../workspace.js";
import { applyMigrations, resolveMigrationsDir } from "./migrations.js";
import { createStateStore } from "./state-store.js";
import type { StateStore } from "./state-store.js";
import { openSqliteDatabase } from "./sqlite-native.js";
import { toStoreError } from "./store-errors.js";

/** Default wait for another connection's write lock before SQLITE_BUSY surfaces. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/**
 * WAL pages after which a commit checkpoints. Measured on the CI machine kind: recovering a
 * 1,000-page WAL at open costs ~1.7 ms, a checkpoint of ~240 pages ~2 ms (two fsyncs); with
 * ~18 pages per run, 200 pages (a checkpoint every ~11 runs) costs a command ~0.35 ms on
 * average where 1,000 cost ~0.9 ms (estimated from those two figures).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 200;

/** Options of `openStateStore`. */
export interface OpenStateStoreOptions {
  /** Database file; parent directories are created. `:memory:` is accepted for tests. */
  path: string;
  /** Folder of drizzle-kit migrations; defaults to `<@runx/runtime root>/drizzle`. */
  migrationsDir?: string;
  /** Name used in error messages, e.g. `.runx/state.sqlite`; defaults to the file name. */
  label?: string;
  /** Source of timestamps; defaults to the system clock. */
  clock?: () => Date;
  /** Defaults to DEFAULT_BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number;
}

/**
 * Opens the store: WAL journal, synchronous=NORMAL, busy_timeout, foreign keys on, pending
 * migrations applied. Safe when several processes open the same new file at once. Every
 * failure is a STORE_ERROR whose message names `label`, never the absolute path.
 */
export function openStateStore(options: OpenStateStoreOptions): StateStore {
  const inMemory = options.path === ":memory:";
  const label = options.label ?? (inMemory ? "state store" : basename(options.path));
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  let sqlite: Database.Database | undefined;
  try {
    const migrationsDir = resolveMigrationsDir(options.migrationsDir, label);
    // Component by component: a symlinked `.runx` is refused, never followed.
    if (!inMemory) ensureStateDir(dirname(options.path));
    sqlite = openSqliteDatabase(options.path);
    // busy_timeout first: switching a fresh file to WAL needs a lock another opener may hold.
    sqlite.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    // journal_mode=WAL persists in the file; only a fresh database pays for the switch.
    const db = sqlite;
    if (
      !inMemory &&
      retryBusy(() => db.pragma("journal_mode", { simple: true }), busyTimeoutMs) !== "wal"
    ) {
      // SQLite answers BUSY at once (without the busy handler) when another opener holds the
      // lock during the switch, so retry here within the same budget.
      const mode: unknown = retryBusy(
        () => db.pragma("journal_mode = WAL", { simple: true }),
        busyTimeoutMs,
      );
      if (mode !== "wal") {
        throw new RuntimeError("STORE_ERROR", `${label}: cannot enable WAL journal mode`, {
          label,
          reason: "wal_unavailable",
        });
      }
    }
    sqlite.pragma("synchronous = NORMAL");
    // Checkpoint every WAL_AUTOCHECKPOINT_PAGES instead of SQLite's 1,000. CLI commands leave
    // the store without closing it (no checkpoint at exit), so the next command's open reads
    // and checksums every frame still in the WAL (~1.7 µs per page here; a run writes ~18).
    sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    sqlite.pragma("foreign_keys = ON");
    retryBusy(() => applyMigrations(db, migrationsDir, label), busyTimeoutMs);
    return createStateStore(sqlite, { label, clock: options.clock ?? (() => new Date()) });
  } catch (err) {
    if (sqlite?.open === true) sqlite.close();
    throw toStoreError(err, label, "open");
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Retries `fn` while SQLite reports SQLITE_BUSY, for at most `budgetMs`. */
function retryBusy<T>(fn: () => T, budgetMs: number): T {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    try {
      return fn();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (code !== "SQLITE_BUSY" || Date.now() > deadline) throw err;
      Atomics.wait(sleeper, 0, 0, 5 + Math.floor(Math.random() * 10));
    }
  }
}
