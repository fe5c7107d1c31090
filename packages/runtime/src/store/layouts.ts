/**
 * The SQL layout of the tables every run writes (runs, steps, receipt index, run ledger), as
 * plain data. A run reads and writes them through prepared statements built from these layouts
 * (./statements.ts), so a CLI command never loads drizzle; schema.ts stays the source of truth
 * for migrations and for the console's queries, and `layouts.test.ts` fails when the two
 * disagree on a table, a column, its SQL name, order or value mapping.
 */
import type { receiptIndex, runLedger, runs, steps } from "./schema.js";

/** How a column's value maps to SQLite: as is, or a boolean stored as 0/1. */
export type ColumnKind = "text" | "integer" | "boolean";

/** One table: its SQL name and its columns as [property, SQL name, kind], in schema order. */
export interface TableLayout<Row> {
  readonly name: string;
  readonly columns: ReadonlyArray<readonly [keyof Row & string, string, ColumnKind]>;
}

export const RUNS: TableLayout<typeof runs.$inferSelect> = {
  name: "runs",
  columns: [
    ["id", "id", "text"],
    ["skillName", "skill_name", "text"],
    ["runner", "runner", "text"],
    ["skillRef", "skill_ref", "text"],
    ["packageDir", "package_dir", "text"],
    ["packageDigest", "package_digest", "text"],
    ["executionClosureDigest", "execution_closure_digest", "text"],
    ["status", "status", "text"],
    ["disposition", "disposition", "text"],
    ["receiptId", "receipt_id", "text"],
    ["inputsDigest", "inputs_digest", "text"],
    ["resultJson", "result_json", "text"],
    ["requestsJson", "requests_json", "text"],
    ["errorJson", "error_json", "text"],
    ["createdAt", "created_at", "text"],
    ["updatedAt", "updated_at", "text"],
    ["createdMs", "created_ms", "integer"],
    ["outcome", "outcome", "text"],
  ],
};

export const STEPS: TableLayout<typeof steps.$inferSelect> = {
  name: "steps",
  columns: [
    ["runId", "run_id", "text"],
    ["stepId", "step_id", "text"],
    ["status", "status", "text"],
    ["attempt", "attempt", "integer"],
    ["receiptId", "receipt_id", "text"],
    ["outputJson", "output_json", "text"],
    ["startedAt", "started_at", "text"],
    ["finishedAt", "finished_at", "text"],
  ],
};

export const RECEIPT_INDEX: TableLayout<typeof receiptIndex.$inferSelect> = {
  name: "receipt_index",
  columns: [
    ["receiptId", "receipt_id", "text"],
    ["runId", "run_id", "text"],
    ["skillName", "skill_name", "text"],
    ["disposition", "disposition", "text"],
    ["createdAt", "created_at", "text"],
    ["fileName", "file_name", "text"],
    ["isChild", "is_child", "boolean"],
    ["harness", "harness", "boolean"],
  ],
};

export const RUN_LEDGER: TableLayout<typeof runLedger.$inferSelect> = {
  name: "run_ledger",
  columns: [
    ["runId", "run_id", "text"],
    ["idx", "idx", "integer"],
    ["kind", "kind", "text"],
    ["status", "status", "text"],
    ["stepId", "step_id", "text"],
    ["entryJson", "entry_json", "text"],
    ["previousHash", "previous_hash", "text"],
    ["entryHash", "entry_hash", "text"],
    ["createdAt", "created_at", "text"],
  ],
};
