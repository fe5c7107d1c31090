/**
 * Opens (creating when needed) the SQLite run state store and brings its schema up to date.
 */
import { existsSync, mkdirSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import Database from "better-sqlite3";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { RuntimeError } from "../errors.js";
import { applyMigrations, resolveMigrationsDir } from "./migrations.js";
import { createStateStore } from "./state-store.js";
import type { StateStore } from "./state-store.js";
import { toStoreError } from "./store-errors.js";

/** Default wait for another connection's write lock before SQLITE_BUSY surfaces. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

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
    if (!inMemory) mkdirSync(dirname(options.path), { recursive: true });
    sqlite = new Database(options.path, { nativeBinding: nativeBindingPath() });
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
    sqlite.pragma("foreign_keys = ON");
    retryBusy(() => applyMigrations(db, migrationsDir, label), busyTimeoutMs);
    return createStateStore(sqlite, { label, clock: options.clock ?? (() => new Date()) });
  } catch (err) {
    if (sqlite?.open === true) sqlite.close();
    throw toStoreError(err, label, "open");
  }
}

/**
 * The better-sqlite3 native addon, located through normal module resolution. Passing it
 * explicitly lets the CLI bundle better-sqlite3's JavaScript (one less module tree to load at
 * start-up) while the addon stays where npm built it.
 */
export function nativeBindingPath(): string {
  // First the node_modules lookup Node's resolver would make, without its realpath and
  // package.json work (~0.7 ms of every command): the nearest node_modules/better-sqlite3
  // above this module. Anything else (NODE_PATH, global folders) goes through the resolver.
  const addon = join("node_modules", "better-sqlite3", "build", "Release", "better_sqlite3.node");
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, addon);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) break;
  }
  const pkg = createRequire(import.meta.url).resolve("better-sqlite3/package.json");
  return join(dirname(pkg), "build", "Release", "better_sqlite3.node");
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
