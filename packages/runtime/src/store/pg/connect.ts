/**
 * Connecting to the PostgreSQL state store: the `RUNX_STATE_URL` is parsed here, refused when
 * it carries a password (passwords come only from PGPASSWORD or a file, so they never sit in
 * a URL that ends up in process listings or logs), and the pool's schema is migrated before
 * the first caller uses it. Every failure is a STORE_ERROR naming the store by its label
 * (`postgres://host:port/database`), never by a URL with credentials.
 */
import { readFileSync } from "node:fs";
import pg from "pg";
import { RuntimeError } from "../../errors.js";
import { applyPgMigrations } from "./migrate.js";
import { parseStateUrl } from "./state-url.js";

export { parseStateUrl } from "./state-url.js";

/** Anything that runs a query: the pool, a checked-out client, a dedicated client. */
export type Queryable = Pick<pg.ClientBase, "query">;

/** Options of `openPgState`. */
export interface PgStateOptions {
  /** `postgres://user@host:port/database` (no password). */
  url: string;
  /** The password (PGPASSWORD); wins over `passwordFile`. */
  password?: string;
  /** A file holding the password (its trailing newline ignored). */
  passwordFile?: string;
  /** Folder of the drizzle-kit PostgreSQL migrations; defaults to `<@runx/runtime>/drizzle-pg`. */
  migrationsDir?: string;
  /** Pool size; defaults to 10. */
  max?: number;
}

/** An open, migrated PostgreSQL state store connection pool. */
export interface PgState {
  readonly pool: pg.Pool;
  /** `postgres://host:port/database`: safe to print. */
  readonly label: string;
  /** The pool's connection settings (for dedicated clients such as a change listener). */
  readonly config: pg.ClientConfig;
  close(): Promise<void>;
}

function readPasswordFile(path: string): string {
  try {
    return readFileSync(path, "utf8").replace(/\r?\n$/, "");
  } catch (err) {
    const errno = (err as NodeJS.ErrnoException).code ?? "unreadable";
    throw new RuntimeError("CONFIG_INVALID", `the state store password file is ${errno}`, {
      field: "RUNX_STATE_PASSWORD_FILE",
      errno,
    });
  }
}

/** Opens a pool and applies pending migrations (safe when several instances start at once). */
export async function openPgState(options: PgStateOptions): Promise<PgState> {
  const password =
    options.password ??
    (options.passwordFile !== undefined ? readPasswordFile(options.passwordFile) : undefined);
  const { config, label } = parseStateUrl(options.url, password);
  const pool = new pg.Pool({ ...config, max: options.max ?? 10 });
  // An idle client's connection dropping (a database restart) must not crash the process.
  pool.on("error", () => undefined);
  try {
    await applyPgMigrations(pool, { label, migrationsDir: options.migrationsDir });
  } catch (err) {
    await pool.end();
    throw toPgStoreError(err, label, "open");
  }
  return {
    pool,
    label,
    config,
    close: async () => {
      if (!pool.ended) await pool.end();
    },
  };
}

/**
 * Runs `fn` in one READ COMMITTED transaction on a client of its own: committed when `fn`
 * resolves, rolled back when it throws (the error is rethrown unchanged).
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  fn: (tx: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query("BEGIN");
    try {
      const result = await fn(client);
      await client.query("COMMIT");
      return result;
    } catch (err) {
      try {
        await client.query("ROLLBACK");
      } catch {
        broken = true; // the connection is gone: do not return it to the pool
      }
      throw err;
    }
  } finally {
    client.release(broken);
  }
}

/** The SQLSTATE of a driver error, if it is one. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return err instanceof Error && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)
    ? code
    : undefined;
}

/**
 * Wraps a failure as STORE_ERROR `"<label>: <action> failed"`. RuntimeErrors pass through;
 * a database error contributes its SQLSTATE and message (which names constraints, never
 * bound values: those sit in `detail`, which is dropped).
 */
export function toPgStoreError(err: unknown, label: string, action: string): RuntimeError {
  if (err instanceof RuntimeError) return err;
  const state = sqlState(err);
  if (state !== undefined) {
    return new RuntimeError(
      "STORE_ERROR",
      `${label}: ${action} failed: ${(err as Error).message}`,
      { label, sqlState: state },
    );
  }
  const errno = (err as NodeJS.ErrnoException | null)?.code;
  return new RuntimeError(
    "STORE_ERROR",
    `${label}: ${action} failed${typeof errno === "string" ? ` (${errno})` : ""}`,
    { label, ...(typeof errno === "string" ? { errno } : {}) },
  );
}
