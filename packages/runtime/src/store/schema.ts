/**
 * Drizzle schema of the durable run state store (one SQLite file per project).
 *
 * The receipts themselves live in the receipt file store; this database holds the
 * mutable run state, a queryable projection of the receipt index and the hash-chained
 * run ledger. Changing this file means running `npm run db:generate -w @runx/runtime`
 * and committing the new migration under `packages/runtime/drizzle/`.
 */
import { sql } from "drizzle-orm";
import { check, index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Every status a run can be in; `running` until it seals, pauses or fails. */
export const RUN_STATUSES = [
  "running",
  "sealed",
  "needs_agent",
  "needs_approval",
  "failure",
] as const;

/** One invocation of a skill, keyed by its run id (`run_default_<16hex>`). */
export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    skillName: text("skill_name").notNull(),
    runner: text("runner").notNull(),
    /** The reference the skill was invoked with, as typed. */
    skillRef: text("skill_ref").notNull(),
    /** Workspace-relative when the package sits inside the workspace. */
    packageDir: text("package_dir").notNull(),
    packageDigest: text("package_digest").notNull(),
    executionClosureDigest: text("execution_closure_digest"),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    /** The seal disposition once known (closed, failed, blocked, declined …). */
    disposition: text("disposition"),
    receiptId: text("receipt_id"),
    inputsDigest: text("inputs_digest").notNull(),
    /** Serialized and already redacted by the caller; the store never inspects it. */
    resultJson: text("result_json"),
    requestsJson: text("requests_json"),
    errorJson: text("error_json"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    /** Milliseconds since the epoch of `created_at`; the keyset-pagination key with `id`. */
    createdMs: integer("created_ms").notNull(),
  },
  (t) => [
    index("runs_created_ms_id_idx").on(t.createdMs, t.id),
    index("runs_status_idx").on(t.status, t.createdMs, t.id),
    index("runs_skill_name_idx").on(t.skillName, t.createdMs, t.id),
    check(
      "runs_status_check",
      sql`${t.status} in ('running', 'sealed', 'needs_agent', 'needs_approval', 'failure')`,
    ),
  ],
);

/** The latest state of one step of a run (graph step, or the single step of a skill). */
export const steps = sqliteTable(
  "steps",
  {
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    stepId: text("step_id").notNull(),
    status: text("status").notNull(),
    attempt: integer("attempt").notNull().default(1),
    receiptId: text("receipt_id"),
    outputJson: text("output_json"),
    startedAt: text("started_at"),
    finishedAt: text("finished_at"),
  },
  (t) => [primaryKey({ columns: [t.runId, t.stepId] })],
);

/** Queryable projection of the receipt file store (the files stay the source of truth). */
export const receiptIndex = sqliteTable(
  "receipt_index",
  {
    receiptId: text("receipt_id").primaryKey(),
    runId: text("run_id"),
    skillName: text("skill_name").notNull(),
    disposition: text("disposition").notNull(),
    createdAt: text("created_at").notNull(),
    fileName: text("file_name").notNull(),
    /** True once some other receipt references this one as a child. */
    isChild: integer("is_child", { mode: "boolean" }).notNull().default(false),
    /** True for receipts produced by `runx harness`. */
    harness: integer("harness", { mode: "boolean" }).notNull().default(false),
  },
  (t) => [
    index("receipt_index_created_at_idx").on(t.createdAt, t.receiptId),
    index("receipt_index_run_id_idx").on(t.runId),
  ],
);

/** The hash-chained run journal (checkpoints, pending requests), one row per line. */
export const runLedger = sqliteTable(
  "run_ledger",
  {
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    /** 0-based position in the chain; equals the `chain.index` the caller hashed. */
    idx: integer("idx").notNull(),
    kind: text("kind").notNull(),
    status: text("status").notNull(),
    stepId: text("step_id"),
    entryJson: text("entry_json").notNull(),
    previousHash: text("previous_hash").notNull(),
    entryHash: text("entry_hash").notNull(),
    createdAt: text("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.idx] })],
);
