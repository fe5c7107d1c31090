/**
 * Maps driver failures to `RuntimeError`. Messages name the store by its label (never by
 * its absolute path) and never repeat bound parameters: drizzle's query errors embed the
 * SQL and its parameters, which may hold run results, so only the SQLite cause is used.
 */
import { RuntimeError } from "../errors.js";

/** A SQLite (better-sqlite3) failure: an extended result code such as `SQLITE_BUSY`. */
interface SqliteFailure {
  code: string;
  message: string;
}

/** Finds the SQLite error under drizzle's wrapper (`DrizzleQueryError.cause`), if any. */
export function sqliteFailure(err: unknown): SqliteFailure | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 4 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (current.name === "SqliteError" && typeof code === "string") {
      return { code, message: current.message };
    }
    current = current.cause;
  }
  return undefined;
}

/** Replaces anything that looks like an absolute path, so messages stay location-free. */
function scrubPaths(message: string): string {
  return message.replace(/(?:[A-Za-z]:\\|\/)[^\s'"`:,)]*/g, "<path>");
}

/**
 * Wraps an unknown failure as STORE_ERROR `"<label>: <action> failed …"`. RuntimeErrors pass
 * through unchanged; filesystem errors contribute only their errno code.
 */
export function toStoreError(err: unknown, label: string, action: string): RuntimeError {
  if (err instanceof RuntimeError) return err;
  const sqlite = sqliteFailure(err);
  if (sqlite !== undefined) {
    return new RuntimeError(
      "STORE_ERROR",
      `${label}: ${action} failed: ${scrubPaths(sqlite.message)}`,
      { label, sqliteCode: sqlite.code },
    );
  }
  const errno = err instanceof Error ? (err as NodeJS.ErrnoException).code : undefined;
  if (typeof errno === "string") {
    return new RuntimeError("STORE_ERROR", `${label}: ${action} failed (${errno})`, {
      label,
      errno,
    });
  }
  return new RuntimeError("STORE_ERROR", `${label}: ${action} failed`, { label });
}
