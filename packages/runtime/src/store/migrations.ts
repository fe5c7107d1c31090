/**
 * Applies the committed drizzle-kit migrations (`packages/runtime/drizzle/`) on open.
 *
 * Bookkeeping is drizzle's own: the `__drizzle_migrations` table with one row per applied
 * migration (`hash` = sha256 of the SQL file, `created_at` = the journal's `when`), and a
 * migration is pending when its `when` is newer than the newest recorded one. A database
 * migrated here is therefore current for drizzle's migrator too, and vice versa.
 *
 * Drizzle's `migrate()` itself is not called: it reads the last applied migration outside
 * its transaction and then opens a DEFERRED one, so two processes opening a fresh database
 * both decide to migrate and the loser fails ("table already exists" or SQLITE_BUSY). Here
 * the decision is re-made inside BEGIN IMMEDIATE, which holds the write lock: the second
 * process waits (busy_timeout), then finds nothing pending.
 *
 * The migration files are read here too (drizzle-kit's folder format: `meta/_journal.json`
 * lists each migration's `tag` and `when`; `<tag>.sql` holds statements separated by
 * `--> statement-breakpoint`), so opening the store never loads drizzle.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { sha256Hex } from "../crypto/sha256.js";
import { RuntimeError } from "../errors.js";

/** drizzle's bookkeeping table; the name drizzle-kit's own `migrate` command expects. */
export const MIGRATIONS_TABLE = "__drizzle_migrations";

/** The package whose root holds the `drizzle/` folder. */
const PACKAGE_NAME = "@runx/runtime";

/** What `applyMigrations` did. */
export interface MigrationOutcome {
  /** Migrations applied by this call (0 when the schema was already current). */
  applied: number;
}

/**
 * The migrations folder: `explicit` when given, else `<package root>/<folder>` (`drizzle` for
 * SQLite, `drizzle-pg` for PostgreSQL), where the package root is the nearest ancestor of
 * this module holding `@runx/runtime`'s package.json. That works from `src/store/` (tests,
 * tsx) and from a bundled `dist/*.js`.
 */
export function resolveMigrationsDir(
  explicit?: string,
  label = "state store",
  folder = "drizzle",
): string {
  if (explicit !== undefined) return resolve(explicit);
  let dir = import.meta.dirname;
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && packageName(manifest) === PACKAGE_NAME) {
      return join(dir, folder);
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new RuntimeError(
    "STORE_ERROR",
    `${label}: cannot locate the migrations folder of ${PACKAGE_NAME}; pass migrationsDir`,
    { label, reason: "migrations_missing" },
  );
}

function packageName(manifest: string): unknown {
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name;
  } catch {
    return undefined;
  }
}

/** One journal entry: the migration file's tag and its timestamp. */
interface JournalEntry {
  tag: string;
  when: number;
}

/** The entries of `meta/_journal.json`, checked. */
function readJournal(migrationsDir: string, label: string): JournalEntry[] {
  try {
    const journal = JSON.parse(
      readFileSync(join(migrationsDir, "meta", "_journal.json"), "utf8"),
    ) as { entries?: unknown };
    if (!Array.isArray(journal.entries)) throw new Error("journal without entries");
    return journal.entries.map((entry: { tag?: unknown; when?: unknown }) => {
      if (typeof entry.when !== "number" || typeof entry.tag !== "string") {
        throw new Error("journal entry without tag or when");
      }
      // A tag names a file inside the folder: no separators, no `..`.
      if (!/^[\w-]+$/.test(entry.tag)) throw new Error("journal tag is not a file name");
      return { tag: entry.tag, when: entry.when };
    });
  } catch {
    throw new RuntimeError(
      "STORE_ERROR",
      `${label}: the migrations journal is missing or invalid`,
      {
        label,
        reason: "migrations_missing",
      },
    );
  }
}

/** The newest `when` of the journal: the fast "is the schema current" check. */
function latestJournalMillis(journal: JournalEntry[]): number {
  return journal.reduce((latest, entry) => Math.max(latest, entry.when), 0);
}

/** One migration as drizzle's migrator sees it. */
export interface MigrationFile {
  /** Statements, split at `--> statement-breakpoint`. */
  sql: string[];
  /** The journal's `when`. */
  folderMillis: number;
  /** Lowercase hex SHA-256 of the file's text (drizzle's bookkeeping `hash`). */
  hash: string;
}

/** The journal's migrations in order, each with its statements and hash. */
export function readMigrations(migrationsDir: string, label = "state store"): MigrationFile[] {
  return readJournal(migrationsDir, label).map((entry) => {
    let text: string;
    try {
      text = readFileSync(join(migrationsDir, `${entry.tag}.sql`), "utf8");
    } catch {
      throw new RuntimeError("STORE_ERROR", `${label}: a migration file is missing or unreadable`, {
        label,
        reason: "migrations_missing",
      });
    }
    return {
      sql: text.split("--> statement-breakpoint"),
      folderMillis: entry.when,
      hash: sha256Hex(text),
    };
  });
}

/** `created_at` of the newest applied migration, or -1 when none (or no table yet). */
function latestAppliedMillis(sqlite: BetterSqlite3.Database): number {
  const table = sqlite
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
    .get(MIGRATIONS_TABLE);
  if (table === undefined) return -1;
  const row = sqlite
    .prepare(`SELECT created_at AS at FROM "${MIGRATIONS_TABLE}" ORDER BY created_at DESC LIMIT 1`)
    .get() as { at: number | string } | undefined;
  return row === undefined ? -1 : Number(row.at);
}

/**
 * Applies pending migrations. The common case (schema current) costs one journal read and
 * two indexed queries and takes no write lock.
 */
export function applyMigrations(
  sqlite: BetterSqlite3.Database,
  migrationsDir: string,
  label = "state store",
): MigrationOutcome {
  const journal = readJournal(migrationsDir, label);
  if (latestAppliedMillis(sqlite) >= latestJournalMillis(journal)) {
    return { applied: 0 };
  }
  const migrations = readMigrations(migrationsDir, label);
  // Table rebuilds in generated SQL would otherwise cascade deletes through foreign keys
  // (the PRAGMA lines drizzle-kit emits are no-ops inside a transaction). Integrity is
  // checked with foreign_key_check before commit instead.
  sqlite.pragma("foreign_keys = OFF");
  try {
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      sqlite.exec(
        `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`,
      );
      const since = latestAppliedMillis(sqlite);
      const record = sqlite.prepare(
        `INSERT INTO "${MIGRATIONS_TABLE}" ("hash", "created_at") VALUES (?, ?)`,
      );
      let applied = 0;
      for (const migration of migrations) {
        if (migration.folderMillis <= since) continue;
        for (const statement of migration.sql) {
          if (statement.trim() !== "") sqlite.exec(statement);
        }
        record.run(migration.hash, migration.folderMillis);
        applied += 1;
      }
      const violations = sqlite.pragma("foreign_key_check") as unknown[];
      if (violations.length > 0) {
        throw new RuntimeError("STORE_ERROR", `${label}: a migration broke foreign keys`, {
          label,
          reason: "migration_integrity",
        });
      }
      sqlite.exec("COMMIT");
      return { applied };
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw err;
    }
  } finally {
    sqlite.pragma("foreign_keys = ON");
  }
}
