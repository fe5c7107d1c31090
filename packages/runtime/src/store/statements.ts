/**
 * Cached better-sqlite3 statements for the writes and reads every run makes (create run,
 * step upserts, receipt index, ledger, run updates and listings). Building those through
 * drizzle's query builder costs more than executing them, and loading drizzle alone costs a
 * CLI command several milliseconds, so the SQL is built from the plain table layouts of
 * ./layouts.ts (kept equal to the drizzle schema by a test); migrations stay drizzle-kit's.
 */
import type BetterSqlite3 from "better-sqlite3";
import type { TableLayout } from "./layouts.js";

/** One table's columns by property key, with their SQL names and value mapping. */
export interface TableCodec<Row> {
  /** The quoted table name. */
  readonly name: string;
  /** `"col_a", "col_b", …` in schema order (a SELECT or RETURNING list). */
  readonly columnList: string;
  /** The quoted SQL name of a property. */
  column(key: keyof Row & string): string;
  /** `INSERT INTO t (cols of keys) VALUES (?, …)`. */
  insert(keys: ReadonlyArray<keyof Row & string>): string;
  /** A property value as bound to SQLite (e.g. `true` → 1); null and undefined → null. */
  toDriver(key: keyof Row & string, value: unknown): unknown;
  /** A driver row (SQL column names) as the schema's row type. */
  decode(row: Record<string, unknown>): Row;
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}

/** The codec of a table layout. */
export function tableCodec<Row>(layout: TableLayout<Row>): TableCodec<Row> {
  const byKey = new Map<string, (typeof layout.columns)[number]>(
    layout.columns.map((column) => [column[0], column]),
  );
  const columnOf = (key: string) => {
    const column = byKey.get(key);
    if (column === undefined) throw new Error(`unknown column ${key} of ${layout.name}`);
    return column;
  };
  const name = quote(layout.name);
  return {
    name,
    columnList: layout.columns.map(([, sqlName]) => quote(sqlName)).join(", "),
    column: (key) => quote(columnOf(key)[1]),
    insert(keys) {
      const names = keys.map((key) => quote(columnOf(key)[1])).join(", ");
      return `INSERT INTO ${name} (${names}) VALUES (${keys.map(() => "?").join(", ")})`;
    },
    toDriver(key, value) {
      if (value === null || value === undefined) return null;
      return columnOf(key)[2] === "boolean" ? (value ? 1 : 0) : value;
    },
    decode(row) {
      const out: Record<string, unknown> = {};
      for (const [key, sqlName, kind] of layout.columns) {
        const value = row[sqlName];
        out[key] =
          value === null || value === undefined
            ? null
            : kind === "boolean"
              ? Number(value) === 1
              : value;
      }
      return out as Row;
    },
  };
}

/** Prepares each distinct SQL text once per connection. */
export function statementCache(
  sqlite: BetterSqlite3.Database,
): (sql: string) => BetterSqlite3.Statement {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return (sql) => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      statement = sqlite.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
}

/**
 * The row a write's RETURNING clause gave (`rows` from `.all()`); throws when it gave none.
 * Writes read RETURNING with `.all()`, never `.get()`: `.get()` resets the statement after the
 * first row, and SQLite commits a statement reset before it finished without running its WAL
 * hook, so a connection writing outside explicit transactions (the console's API server)
 * never auto-checkpointed and its WAL grew without bound.
 */
export function writtenRow<T>(rows: readonly T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error("a write's RETURNING clause gave no row");
  return row;
}
