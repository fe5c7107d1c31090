/**
 * Applies the committed drizzle-kit PostgreSQL migrations (`packages/runtime/drizzle-pg/`).
 *
 * Bookkeeping is drizzle's own for PostgreSQL: `drizzle.__drizzle_migrations` (`hash` =
 * sha256 of the SQL file, `created_at` = the journal's `when`), so drizzle-kit's `migrate`
 * agrees with this code about what is applied. As for SQLite (../migrations.ts), drizzle's
 * `migrate()` is not called: instances starting together would both decide to migrate.
 * Here the decision is made under a session advisory lock, and the migrations apply in one
 * transaction: the second instance waits, then finds nothing pending.
 */
import type pg from "pg";
import { readMigrations, resolveMigrationsDir } from "../migrations.js";

/** Options of `applyPgMigrations`. */
export interface PgMigrateOptions {
  label: string;
  migrationsDir?: string | undefined;
}

/** The advisory lock every migrating instance takes (any constant works; this one is named). */
const MIGRATION_LOCK = "SELECT pg_advisory_lock(hashtextextended('runx.state.migrate', 0))";
const MIGRATION_UNLOCK = "SELECT pg_advisory_unlock(hashtextextended('runx.state.migrate', 0))";

/** Applies pending migrations; returns how many this call applied. */
export async function applyPgMigrations(
  pool: pg.Pool,
  options: PgMigrateOptions,
): Promise<{ applied: number }> {
  const dir = resolveMigrationsDir(options.migrationsDir, options.label, "drizzle-pg");
  const migrations = readMigrations(dir, options.label);
  const client = await pool.connect();
  // A client whose unlock failed goes back to the pool only as a destroyed connection (a
  // session lock lives as long as its connection).
  let broken = false;
  try {
    await client.query(MIGRATION_LOCK);
    try {
      await client.query("BEGIN");
      try {
        await client.query("CREATE SCHEMA IF NOT EXISTS drizzle");
        await client.query(
          "CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)",
        );
        const last = await client.query<{ at: string }>(
          "SELECT created_at AS at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1",
        );
        const since = last.rows[0] === undefined ? -1 : Number(last.rows[0].at);
        let applied = 0;
        for (const migration of migrations) {
          if (migration.folderMillis <= since) continue;
          for (const statement of migration.sql) {
            if (statement.trim() !== "") await client.query(statement);
          }
          await client.query(
            "INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ($1, $2)",
            [migration.hash, migration.folderMillis],
          );
          applied += 1;
        }
        await client.query("COMMIT");
        return { applied };
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    } finally {
      await client.query(MIGRATION_UNLOCK).catch(() => {
        broken = true;
      });
    }
  } finally {
    client.release(broken);
  }
}
