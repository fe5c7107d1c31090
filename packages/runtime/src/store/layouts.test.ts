import { getTableColumns, getTableName } from "drizzle-orm";
import type { Column, Table } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { RECEIPT_INDEX, RUNS, RUN_LEDGER, STEPS } from "./layouts.js";
import type { ColumnKind, TableLayout } from "./layouts.js";
import { receiptIndex, runLedger, runs, steps } from "./schema.js";
import { tableCodec } from "./statements.js";

/** The layout drizzle's schema implies, or an error for a column kind layouts cannot map. */
function layoutOf(table: Table): { name: string; columns: Array<[string, string, ColumnKind]> } {
  const kinds: Record<string, ColumnKind> = {
    SQLiteText: "text",
    SQLiteInteger: "integer",
    SQLiteBoolean: "boolean",
  };
  return {
    name: getTableName(table),
    columns: Object.entries(getTableColumns(table) as Record<string, Column>).map(
      ([key, column]) => {
        const kind = kinds[column.columnType];
        if (kind === undefined) {
          throw new Error(`${getTableName(table)}.${key}: ${column.columnType} has no layout kind`);
        }
        return [key, column.name, kind];
      },
    ),
  };
}

describe("table layouts", () => {
  it.each([
    ["runs", RUNS, runs],
    ["steps", STEPS, steps],
    ["receipt_index", RECEIPT_INDEX, receiptIndex],
    ["run_ledger", RUN_LEDGER, runLedger],
  ] as Array<[string, TableLayout<unknown>, Table]>)(
    "%s equals the drizzle schema (names, order, value mapping)",
    (_, layout, table) => {
      expect({ name: layout.name, columns: layout.columns }).toEqual(layoutOf(table));
    },
  );

  it("maps values as drizzle does in both directions", () => {
    const codec = tableCodec(RECEIPT_INDEX);
    for (const [key, column] of Object.entries(getTableColumns(receiptIndex))) {
      const k = key as keyof typeof receiptIndex.$inferSelect;
      const samples = column.columnType === "SQLiteBoolean" ? [true, false] : ["x", ""];
      for (const value of samples) {
        expect(codec.toDriver(k, value)).toEqual(column.mapToDriverValue(value));
      }
    }
    const decoded = codec.decode({
      receipt_id: "sha256:1",
      run_id: null,
      skill_name: "echo",
      disposition: "closed",
      created_at: "2026-01-01T00:00:00Z",
      file_name: "f.json",
      is_child: 1,
      harness: 0,
    });
    expect(decoded).toEqual({
      receiptId: "sha256:1",
      runId: null,
      skillName: "echo",
      disposition: "closed",
      createdAt: "2026-01-01T00:00:00Z",
      fileName: "f.json",
      isChild: true,
      harness: false,
    });
  });

  it("refuses a property the layout does not have", () => {
    const codec = tableCodec(RUNS);
    expect(() => codec.column("nope" as "id")).toThrow(/unknown column nope of runs/);
  });
});
