/**
 * Drizzle pg-core schema of the PostgreSQL state store (several API instances sharing one
 * database; docs/decisions/0010-cluster-state-store.md). Run columns mirror the SQLite schema
 * (../schema.ts) so one port can serve both; the additions are what a cluster needs: the
 * claimable-job columns of a run, receipts as exact bytes, hashed bootstrap tokens and the
 * gapless change sequence behind live updates. Changing this file means running
 * `npm run db:generate:pg -w @runx/runtime` and committing the migration under
 * `packages/runtime/drizzle-pg/`.
 *
 * Lease times are `timestamptz` written with the database clock (`now()`), never a
 * process clock: instances whose clocks disagree still agree on when a lease expired.
 */
import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from "drizzle-orm/pg-core";
import { DETAILED_OUTCOMES } from "../../contracts/envelope.js";
import { OPERATOR_ROLES, RUN_STATUSES } from "../schema.js";

/** Exact bytes (a receipt file's contents); `bytea` on the wire, a Buffer in Node. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType: () => "bytea",
});

/**
 * Where a run stands as a job: `local` (executed by the process that created it, e.g. the
 * CLI; never claimed), `queued` (claimable), `leased` (an instance holds it; claimable again
 * once `lease_expires_at` passes), `parked` (paused for an agent or an approval; a decision
 * re-queues it), `done` (sealed or failed; never claimed again).
 */
export const JOB_STATES = ["local", "queued", "leased", "parked", "done"] as const;

/** One invocation of a skill; the SQLite `runs` columns plus the claimable-job columns. */
export const runs = pgTable(
  "runs",
  {
    id: text("id").primaryKey(),
    skillName: text("skill_name").notNull(),
    runner: text("runner").notNull(),
    skillRef: text("skill_ref").notNull(),
    packageDir: text("package_dir").notNull(),
    packageDigest: text("package_digest").notNull(),
    executionClosureDigest: text("execution_closure_digest"),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    disposition: text("disposition"),
    receiptId: text("receipt_id"),
    inputsDigest: text("inputs_digest").notNull(),
    resultJson: text("result_json"),
    requestsJson: text("requests_json"),
    errorJson: text("error_json"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    createdMs: bigint("created_ms", { mode: "number" }).notNull(),
    outcome: text("outcome", { enum: DETAILED_OUTCOMES }).notNull().default("running"),
    jobState: text("job_state", { enum: JOB_STATES }).notNull().default("local"),
    /** When the run became claimable (claim order: oldest first). */
    queuedAt: timestamp("queued_at", { withTimezone: true, precision: 6 }),
    /** The instance holding the lease (`null` unless `job_state` is `leased`). */
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: timestamp("lease_expires_at", { withTimezone: true, precision: 6 }),
    /**
     * The fencing token: raised by every claim, so a write conditioned on the value a holder
     * claimed with fails once anyone else has claimed the run since (store/pg/lease.ts).
     */
    fence: bigint("fence", { mode: "bigint" })
      .notNull()
      .default(sql`0`),
    /** How many times the run has been claimed for execution (the attempt number). */
    attempt: integer("attempt").notNull().default(0),
    /** Set by a cancel on any instance; the holder sees it with its next heartbeat. */
    cancelRequestedAt: timestamp("cancel_requested_at", { withTimezone: true, precision: 6 }),
  },
  (t) => [
    index("runs_created_ms_id_idx").on(t.createdMs, t.id),
    index("runs_status_idx").on(t.status, t.createdMs, t.id),
    index("runs_skill_name_idx").on(t.skillName, t.createdMs, t.id),
    index("runs_updated_at_idx").on(t.updatedAt, t.id),
    index("runs_outcome_idx").on(t.outcome, t.createdMs, t.id),
    /** The claim scan: queued runs and expired leases, oldest first. */
    index("runs_claimable_idx")
      .on(t.queuedAt, t.id)
      .where(sql`${t.jobState} in ('queued', 'leased')`),
    check(
      "runs_status_check",
      sql`${t.status} in ('running', 'sealed', 'needs_agent', 'needs_approval', 'failure')`,
    ),
    check(
      "runs_job_state_check",
      sql`${t.jobState} in ('local', 'queued', 'leased', 'parked', 'done')`,
    ),
    check(
      "runs_lease_check",
      sql`(${t.jobState} = 'leased') = (${t.leaseOwner} is not null and ${t.leaseExpiresAt} is not null)`,
    ),
  ],
);

/** The latest state of one step of a run (as in SQLite). */
export const steps = pgTable(
  "steps",
  {
    /** First-write order (SQLite's rowid): an upsert keeps the row, and so its place. */
    ord: bigint("ord", { mode: "number" }).generatedAlwaysAsIdentity(),
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

/** The hash-chained run journal; `fence` records which lease wrote each line. */
export const runLedger = pgTable(
  "run_ledger",
  {
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    idx: integer("idx").notNull(),
    kind: text("kind").notNull(),
    status: text("status").notNull(),
    stepId: text("step_id"),
    entryJson: text("entry_json").notNull(),
    previousHash: text("previous_hash").notNull(),
    entryHash: text("entry_hash").notNull(),
    createdAt: text("created_at").notNull(),
    fence: bigint("fence", { mode: "bigint" }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.runId, t.idx] })],
);

/**
 * Receipts as the exact bytes of their file form, keyed by content address. Rows are never
 * updated or deleted: an identical rewrite is a no-op, different bytes are refused
 * (store/pg/receipts.ts).
 */
export const receipts = pgTable(
  "receipts",
  {
    id: text("id").primaryKey(),
    bytes: bytea("bytes").notNull(),
    storedAt: timestamp("stored_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [check("receipts_id_check", sql`${t.id} ~ '^sha256:[0-9a-f]{64}$'`)],
);

/** Queryable projection of the receipts (as in SQLite). */
export const receiptIndex = pgTable(
  "receipt_index",
  {
    receiptId: text("receipt_id").primaryKey(),
    runId: text("run_id"),
    skillName: text("skill_name").notNull(),
    disposition: text("disposition").notNull(),
    createdAt: text("created_at").notNull(),
    fileName: text("file_name").notNull(),
    isChild: boolean("is_child").notNull().default(false),
    harness: boolean("harness").notNull().default(false),
  },
  (t) => [
    index("receipt_index_created_at_idx").on(t.createdAt, t.receiptId),
    index("receipt_index_run_id_idx").on(t.runId),
  ],
);

/** Console operators (as in SQLite); the first admin comes from a bootstrap token. */
export const operators = pgTable(
  "operators",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    role: text("role", { enum: OPERATOR_ROLES }).notNull(),
    passwordHash: text("password_hash").notNull(),
    passwordSalt: text("password_salt").notNull(),
    passwordParams: text("password_params").notNull(),
    disabled: boolean("disabled").notNull().default(false),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("operators_username_idx").on(t.username),
    check("operators_role_check", sql`${t.role} in ('viewer', 'approver', 'admin')`),
  ],
);

/** API tokens (as in SQLite): only the sha256 of a token is kept. */
export const apiTokens = pgTable(
  "api_tokens",
  {
    id: text("id").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    tokenHash: text("token_hash").notNull(),
    createdAt: text("created_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [uniqueIndex("api_tokens_token_hash_idx").on(t.tokenHash)],
);

/**
 * Console sign-in sessions (as in SQLite). Every instance reads them, so a cookie issued by
 * one instance (signed with the shared session secret) is honoured, and ended, on all.
 */
export const consoleSessions = pgTable(
  "console_sessions",
  {
    id: text("id").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    lastSeenAt: text("last_seen_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [
    index("console_sessions_operator_idx").on(t.operatorId),
    index("console_sessions_expires_at_idx").on(t.expiresAt),
  ],
);

/**
 * One-time tokens that create the first admin. Only the sha256 of a token is kept; a token
 * is spent by the transaction that creates the admin (store/pg/bootstrap.ts).
 */
export const bootstrapTokens = pgTable("bootstrap_tokens", {
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique("bootstrap_tokens_token_hash_key"),
  createdAt: timestamp("created_at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  expiresAt: timestamp("expires_at", { withTimezone: true, precision: 6 }).notNull(),
  redeemedAt: timestamp("redeemed_at", { withTimezone: true, precision: 6 }),
  redeemedBy: text("redeemed_by"),
});

/**
 * The change feed behind live updates: one row per published change, `seq` gapless and in
 * commit order (taken from `change_counter` under its row lock; store/pg/changes.ts).
 */
export const changes = pgTable(
  "changes",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey(),
    kind: text("kind").notNull(),
    runId: text("run_id").notNull(),
    status: text("status").notNull(),
    at: timestamp("at", { withTimezone: true, precision: 6 }).notNull().defaultNow(),
  },
  (t) => [index("changes_run_id_idx").on(t.runId, t.seq)],
);

/** The single row holding the last `changes.seq` handed out. */
export const changeCounter = pgTable(
  "change_counter",
  {
    id: integer("id").primaryKey(),
    seq: bigint("seq", { mode: "number" }).notNull(),
  },
  (t) => [check("change_counter_single_row", sql`${t.id} = 1`)],
);
