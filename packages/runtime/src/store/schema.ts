/**
 * Drizzle schema of the durable run state store (one SQLite file per project).
 *
 * The receipts themselves live in the receipt file store; this database holds the
 * mutable run state, a queryable projection of the receipt index and the hash-chained
 * run ledger. Changing this file means running `npm run db:generate -w @runx/runtime`
 * and committing the new migration under `packages/runtime/drizzle/`.
 */
import { sql } from "drizzle-orm";
import {
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { DETAILED_OUTCOMES } from "../contracts/envelope.js";

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
    /**
     * What status, disposition and pending requests mean together (`deriveDetailedOutcome`,
     * contracts/envelope.ts), written by the state store with every change of those three, so the
     * console filters and counts by outcome from an index.
     */
    outcome: text("outcome", { enum: DETAILED_OUTCOMES }).notNull().default("running"),
  },
  (t) => [
    index("runs_created_ms_id_idx").on(t.createdMs, t.id),
    index("runs_status_idx").on(t.status, t.createdMs, t.id),
    index("runs_skill_name_idx").on(t.skillName, t.createdMs, t.id),
    /** The console's live-update feed (runs changed since a time). */
    index("runs_updated_at_idx").on(t.updatedAt, t.id),
    /** The console's outcome filter and its count, newest first. */
    index("runs_outcome_idx").on(t.outcome, t.createdMs, t.id),
    /** Skill (exact, or the names a skill search matched) with or without an outcome. */
    index("runs_skill_outcome_idx").on(t.skillName, t.outcome, t.createdMs, t.id),
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

/** Operator roles, least to most privileged. */
export const OPERATOR_ROLES = ["viewer", "approver", "admin"] as const;

/**
 * A person who signs in to the console. The password is stored only as a scrypt hash with
 * its own salt and cost parameters, so parameters can be raised later without a rehash pass.
 */
export const operators = sqliteTable(
  "operators",
  {
    id: text("id").primaryKey(),
    username: text("username").notNull(),
    role: text("role", { enum: OPERATOR_ROLES }).notNull(),
    passwordHash: text("password_hash").notNull(),
    passwordSalt: text("password_salt").notNull(),
    /** JSON `{N, r, p, keylen}` of the scrypt call that produced `password_hash`. */
    passwordParams: text("password_params").notNull(),
    disabled: integer("disabled", { mode: "boolean" }).notNull().default(false),
    createdAt: text("created_at").notNull(),
  },
  (t) => [
    uniqueIndex("operators_username_idx").on(t.username),
    check("operators_role_check", sql`${t.role} in ('viewer', 'approver', 'admin')`),
  ],
);

/** Automation tokens; only the sha256 of the token is kept (the token is shown once). */
export const apiTokens = sqliteTable(
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
 * Who started a run through the console or API (separation of duties needs it), and whether
 * they granted its adapter dispatches spawn authority when starting it (deny by default).
 */
export const runInitiators = sqliteTable("run_initiators", {
  runId: text("run_id").primaryKey(),
  operatorId: text("operator_id").notNull(),
  username: text("username").notNull(),
  createdAt: text("created_at").notNull(),
  allowSpawn: integer("allow_spawn", { mode: "boolean" }).notNull().default(false),
});

/**
 * Approval policy as data: the first matching row (skill and gate, `*` = any) decides how
 * many distinct approvals a gate needs and whether the run's initiator may approve it.
 */
export const gatePolicies = sqliteTable(
  "gate_policies",
  {
    skillName: text("skill_name").notNull(),
    gateId: text("gate_id").notNull(),
    requiredApprovals: integer("required_approvals").notNull().default(1),
    forbidInitiator: integer("forbid_initiator", { mode: "boolean" }).notNull().default(true),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.skillName, t.gateId] })],
);

/**
 * One authenticated human decision on one gate of one paused run, tied to the pause it was
 * made on: a gate id can pause again in the same run (an adapter dispatch retried after its
 * questions, a graph looping back through the gate), and each pause is decided afresh. Only
 * decisions of the run's current pause count (console/approvals.ts); an earlier pause's were
 * spent by its release, which is recorded in the signed receipts, not here.
 */
export const approvalDecisions = sqliteTable(
  "approval_decisions",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id, { onDelete: "cascade" }),
    gateId: text("gate_id").notNull(),
    /**
     * The pause decided: the id of the `deferred` receipt it sealed (its checkpoint's
     * `paused_receipt.id`, the `receipt_id` of its `resolution_requested` ledger entry).
     */
    pauseReceiptId: text("pause_receipt_id").notNull(),
    operatorId: text("operator_id").notNull(),
    username: text("username").notNull(),
    decision: text("decision", { enum: ["approve", "deny"] }).notNull(),
    reason: text("reason").notNull(),
    decidedAt: text("decided_at").notNull(),
    /** The bindings the decision was made against (the run's checkpoint at decision time). */
    packageDigest: text("package_digest").notNull(),
    executionClosureDigest: text("execution_closure_digest").notNull(),
  },
  (t) => [
    /** One vote per operator on each pause of a gate. */
    uniqueIndex("approval_decisions_vote_idx").on(
      t.runId,
      t.gateId,
      t.pauseReceiptId,
      t.operatorId,
    ),
    index("approval_decisions_run_idx").on(t.runId, t.gateId),
  ],
);

/**
 * Console sign-in sessions, one row per session cookie (its JWT's `jti`), so a session can
 * end on the server: signing out revokes it, disabling the operator revokes all of theirs.
 * Every authenticated request checks its row (apps/api/src/server.ts).
 */
export const consoleSessions = sqliteTable(
  "console_sessions",
  {
    id: text("id").primaryKey(),
    operatorId: text("operator_id")
      .notNull()
      .references(() => operators.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    /** Updated at most once a minute (a write per request would serialise readers). */
    lastSeenAt: text("last_seen_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
  },
  (t) => [
    index("console_sessions_operator_idx").on(t.operatorId),
    index("console_sessions_expires_at_idx").on(t.expiresAt),
  ],
);
