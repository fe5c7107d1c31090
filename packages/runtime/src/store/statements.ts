/**
 * Cached better-sqlite3 statements for the writes and reads every run makes (create run,
 * step upserts, receipt index, ledger, run updates). Building those through drizzle's query
 * builder costs more than executing them, on every CLI invocation. The SQL is derived from
 * the drizzle schema (table and column names, driver value mapping such as integer
 * booleans), so the schema stays the single source of truth; migrations stay drizzle-kit's.
 */
import type BetterSqlite3 from "better-sqlite3";
import { getTableColumns, getTableName } from "drizzle-orm";
import type { Column, Table } from "drizzle-orm";

/** One table's columns by property key, with their SQL names and value mapping. */
export interface TableCodec<Row> {
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

/** The codec of a drizzle table. */
export function tableCodec<T extends Table>(table: T): TableCodec<T["$inferSelect"]> {
  const columns = Object.entries(getTableColumns(table)) as Array<[string, Column]>;
  const byKey = new Map(columns);
  const sqlName = (key: string): string => {
    const column = byKey.get(key);
    if (column === undefined) throw new Error(`unknown column ${key} of ${getTableName(table)}`);
    return quote(column.name);
  };
  return {
    name: quote(getTableName(table)),
    columnList: columns.map(([, c]) => quote(c.name)).join(", "),
    column: sqlName,
    insert(keys) {
      const names = keys.map(sqlName).join(", ");
      return `INSERT INTO ${quote(getTableName(table))} (${names}) VALUES (${keys.map(() => "?").join(", ")})`;
    },
    toDriver(key, value) {
      if (value === null || value === undefined) return null;
      const column = byKey.get(key);
      if (column === undefined) throw new Error(`unknown column ${key} of ${getTableName(table)}`);
      return column.mapToDriverValue(value);
    },
    decode(row) {
      const out: Record<string, unknown> = {};
      for (const [key, column] of columns) {
        const value = row[column.name];
        out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
      }
      return out;
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
