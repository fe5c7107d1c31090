/**
 * The console's tables (operators, API tokens, run initiators, gate policies, approval
 * decisions) and the filtered run listing. Like `state-store.ts`, the only code that talks
 * to them; callers see plain records and RuntimeError.
 */
import { and, asc, count, eq, gte, inArray, isNull, lt, ne, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { RuntimeError } from "../errors.js";
import { listRunsFiltered } from "./run-listing.js";
import type { FilteredRunPage, RunFilter } from "./run-listing.js";
import {
  apiTokens,
  approvalDecisions,
  consoleSessions,
  gatePolicies,
  operators,
  receiptIndex,
  runInitiators,
  runs,
} from "./schema.js";
import type { OPERATOR_ROLES } from "./schema.js";
import { writtenRow } from "./statements.js";
import { sqliteFailure } from "./store-errors.js";
import { MAX_PAGE_SIZE } from "./types.js";
import type { ReceiptIndexRecord, RunRecord, StoreExtension } from "./types.js";

/** viewer < approver < admin. */
export type OperatorRole = (typeof OPERATOR_ROLES)[number];
/** One row of `operators` (includes the password hash: never hand it to a caller). */
export type OperatorRecord = typeof operators.$inferSelect;
/** One row of `api_tokens`. */
export type ApiTokenRecord = typeof apiTokens.$inferSelect;
/** One row of `console_sessions`. */
export type ConsoleSessionRecord = typeof consoleSessions.$inferSelect;
/** One row of `approval_decisions`. */
export type ApprovalDecisionRecord = typeof approvalDecisions.$inferSelect;
/** One row of `gate_policies`. */
export type GatePolicyRecord = typeof gatePolicies.$inferSelect;
/** One row of `run_initiators`. */
export type RunInitiatorRecord = typeof runInitiators.$inferSelect;

export type { AwaitingFilter, FilteredRunPage, RunFilter } from "./run-listing.js";

/** The console's tables. Every method is synchronous. */
export interface ConsoleStore {
  countOperators(): number;
  insertOperator(row: OperatorRecord): OperatorRecord;
  findOperatorByName(username: string): OperatorRecord | undefined;
  getOperator(id: string): OperatorRecord | undefined;
  listOperators(): OperatorRecord[];
  /**
   * Disables or re-enables an operator in one IMMEDIATE transaction: LAST_ADMIN when it would
   * leave no enabled admin (checked under the write lock, so two concurrent calls cannot both
   * pass); disabling also revokes every session and API token of theirs (at `at`).
   */
  setOperatorDisabled(id: string, disabled: boolean, at: string): OperatorRecord | undefined;
  /**
   * Changes an operator's role in one IMMEDIATE transaction: LAST_ADMIN when it would leave no
   * enabled admin (checked under the write lock, like disabling). Sessions and tokens stay:
   * every request reads the role from this row, so the new role holds from the next request.
   */
  setOperatorRole(id: string, role: OperatorRole): OperatorRecord | undefined;
  /** The newest sign-in (session start) of each operator, among the sessions still kept. */
  lastSignIns(): Map<string, string>;
  insertApiToken(row: ApiTokenRecord): ApiTokenRecord;
  /** An unrevoked token by its hash. */
  findApiToken(tokenHash: string): ApiTokenRecord | undefined;
  /** Tokens (revoked ones too) of one operator, or of everyone, oldest first. */
  listApiTokens(operatorId?: string): ApiTokenRecord[];
  getApiToken(id: string): ApiTokenRecord | undefined;
  /** Sets `revoked_at` unless already set; the row afterwards (undefined when absent). */
  revokeApiToken(id: string, at: string): ApiTokenRecord | undefined;
  /** Inserts a session and drops sessions that expired before `row.createdAt`. */
  insertSession(row: ConsoleSessionRecord): ConsoleSessionRecord;
  getSession(id: string): ConsoleSessionRecord | undefined;
  touchSession(id: string, at: string): void;
  revokeSession(id: string, at: string): void;
  recordInitiator(row: RunInitiatorRecord): void;
  getInitiator(runId: string): RunInitiatorRecord | undefined;
  /** The initiators recorded for these runs (runs without one are left out). */
  listInitiators(runIds: readonly string[]): RunInitiatorRecord[];
  upsertGatePolicy(row: GatePolicyRecord): GatePolicyRecord;
  /** The most specific policy for (skill, gate): exact, skill+*, *+gate, *+*. */
  findGatePolicy(skillName: string, gateId: string): GatePolicyRecord | undefined;
  /** POLICY_DENIED (`already_decided`) for a second vote of an operator on the same pause. */
  insertDecision(row: ApprovalDecisionRecord): ApprovalDecisionRecord;
  /**
   * Decisions of a run, oldest first; of one gate, and of one pause of it (the pause's
   * `deferred` receipt id, see `approvalDecisions` in schema.ts) when given.
   */
  listDecisions(runId: string, gateId?: string, pauseReceiptId?: string): ApprovalDecisionRecord[];
  /** Receipts indexed for a run (steps, pauses and the run's own), oldest first. */
  listRunReceipts(runId: string): ReceiptIndexRecord[];
  /**
   * Runs newest first with the console filters, keyset pages both ways and the count of
   * matching runs (run-listing.ts).
   */
  listRunsFiltered(filter: RunFilter): FilteredRunPage;
  /**
   * Runs whose `updated_at` is at or after `since` (ISO time), oldest change first, at most
   * `limit` (the live-update feed; served by the `runs_updated_at_idx` index).
   */
  listRunsUpdatedSince(since: string, limit: number): RunRecord[];
}

type Guard = <T>(action: string, fn: () => T) => T;

/**
 * LAST_ADMIN when `row` is an enabled admin and no other enabled admin exists: disabling or
 * demoting them would leave nobody able to manage operators. Runs inside the caller's
 * IMMEDIATE transaction, so two concurrent changes cannot both pass.
 */
function refuseLastAdmin(
  tx: Pick<BetterSQLite3Database, "select">,
  row: OperatorRecord,
  action: "disable" | "demote",
): void {
  if (row.role !== "admin" || row.disabled) return;
  const others =
    tx
      .select({ n: count() })
      .from(operators)
      .where(
        and(eq(operators.role, "admin"), eq(operators.disabled, false), ne(operators.id, row.id)),
      )
      .get()?.n ?? 0;
  if (others > 0) return;
  throw new RuntimeError(
    "LAST_ADMIN",
    action === "disable"
      ? `${row.username} is the last enabled admin; add or enable another admin first`
      : `${row.username} is the last enabled admin and keeps the admin role; add or enable another admin first`,
    { username: row.username },
  );
}

/** The console's tables as a state-store extension: `state.attach(consoleStoreExtension)`. */
export const consoleStoreExtension: StoreExtension<ConsoleStore> = ({ sqlite, guard, label }) =>
  createConsoleStore(drizzle({ client: sqlite }), guard, label);

/** Builds the console store over a drizzle handle and the state store's failure guard. */
export function createConsoleStore(
  db: BetterSQLite3Database,
  guard: Guard,
  label: string,
): ConsoleStore {
  const conflict = (err: unknown, message: string, reason: string): never => {
    const code = sqliteFailure(err)?.code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY") {
      throw new RuntimeError(
        reason === "operator_exists" ? "OPERATOR_EXISTS" : "POLICY_DENIED",
        message,
        {
          label,
          reason,
        },
      );
    }
    throw err;
  };
  return {
    countOperators() {
      return guard(
        "count operators",
        () => db.select({ n: count() }).from(operators).get()?.n ?? 0,
      );
    },
    insertOperator(row) {
      return guard("create operator", () => {
        try {
          return writtenRow(db.insert(operators).values(row).returning().all());
        } catch (err) {
          return conflict(err, `operator ${row.username} already exists`, "operator_exists");
        }
      });
    },
    findOperatorByName(username) {
      return guard("read operator", () =>
        db.select().from(operators).where(eq(operators.username, username)).get(),
      );
    },
    getOperator(id) {
      return guard("read operator", () =>
        db.select().from(operators).where(eq(operators.id, id)).get(),
      );
    },
    listOperators() {
      return guard("list operators", () =>
        db.select().from(operators).orderBy(asc(operators.username)).all(),
      );
    },
    setOperatorDisabled(id, disabled, at) {
      return guard("update operator", () =>
        db.transaction(
          (tx) => {
            const row = tx.select().from(operators).where(eq(operators.id, id)).get();
            if (row === undefined) return undefined;
            if (disabled) refuseLastAdmin(tx, row, "disable");
            // .all(), not .get(): see writtenRow.
            const updated = tx
              .update(operators)
              .set({ disabled })
              .where(eq(operators.id, id))
              .returning()
              .all()[0];
            if (disabled) {
              tx.update(consoleSessions)
                .set({ revokedAt: at })
                .where(and(eq(consoleSessions.operatorId, id), isNull(consoleSessions.revokedAt)))
                .run();
              tx.update(apiTokens)
                .set({ revokedAt: at })
                .where(and(eq(apiTokens.operatorId, id), isNull(apiTokens.revokedAt)))
                .run();
            }
            return updated;
          },
          { behavior: "immediate" },
        ),
      );
    },
    setOperatorRole(id, role) {
      return guard("update operator", () =>
        db.transaction(
          (tx) => {
            const row = tx.select().from(operators).where(eq(operators.id, id)).get();
            if (row === undefined) return undefined;
            if (role !== "admin") refuseLastAdmin(tx, row, "demote");
            // .all(), not .get(): see writtenRow.
            return tx
              .update(operators)
              .set({ role })
              .where(eq(operators.id, id))
              .returning()
              .all()[0];
          },
          { behavior: "immediate" },
        ),
      );
    },
    lastSignIns() {
      return guard("read sessions", () => {
        const rows = db
          .select({
            operatorId: consoleSessions.operatorId,
            at: sql<string>`max(${consoleSessions.createdAt})`,
          })
          .from(consoleSessions)
          .groupBy(consoleSessions.operatorId)
          .all();
        return new Map(rows.map((r) => [r.operatorId, r.at]));
      });
    },
    insertApiToken(row) {
      return guard("create api token", () =>
        writtenRow(db.insert(apiTokens).values(row).returning().all()),
      );
    },
    findApiToken(tokenHash) {
      return guard("read api token", () =>
        db
          .select()
          .from(apiTokens)
          .where(and(eq(apiTokens.tokenHash, tokenHash), isNull(apiTokens.revokedAt)))
          .get(),
      );
    },
    listApiTokens(operatorId) {
      return guard("list api tokens", () =>
        db
          .select()
          .from(apiTokens)
          .where(operatorId === undefined ? undefined : eq(apiTokens.operatorId, operatorId))
          .orderBy(asc(apiTokens.createdAt), asc(apiTokens.id))
          .all(),
      );
    },
    getApiToken(id) {
      return guard("read api token", () =>
        db.select().from(apiTokens).where(eq(apiTokens.id, id)).get(),
      );
    },
    revokeApiToken(id, at) {
      return guard("revoke api token", () => {
        db.update(apiTokens)
          .set({ revokedAt: at })
          .where(and(eq(apiTokens.id, id), isNull(apiTokens.revokedAt)))
          .run();
        return db.select().from(apiTokens).where(eq(apiTokens.id, id)).get();
      });
    },
    insertSession(row) {
      return guard("create session", () => {
        db.delete(consoleSessions).where(lt(consoleSessions.expiresAt, row.createdAt)).run();
        return writtenRow(db.insert(consoleSessions).values(row).returning().all());
      });
    },
    getSession(id) {
      return guard("read session", () =>
        db.select().from(consoleSessions).where(eq(consoleSessions.id, id)).get(),
      );
    },
    touchSession(id, at) {
      guard("touch session", () =>
        db.update(consoleSessions).set({ lastSeenAt: at }).where(eq(consoleSessions.id, id)).run(),
      );
    },
    revokeSession(id, at) {
      guard("revoke session", () =>
        db
          .update(consoleSessions)
          .set({ revokedAt: at })
          .where(and(eq(consoleSessions.id, id), isNull(consoleSessions.revokedAt)))
          .run(),
      );
    },
    recordInitiator(row) {
      guard("record initiator", () =>
        db.insert(runInitiators).values(row).onConflictDoNothing().run(),
      );
    },
    getInitiator(runId) {
      return guard("read initiator", () =>
        db.select().from(runInitiators).where(eq(runInitiators.runId, runId)).get(),
      );
    },
    listInitiators(runIds) {
      if (runIds.length === 0) return [];
      return guard("read initiators", () =>
        db
          .select()
          .from(runInitiators)
          .where(inArray(runInitiators.runId, [...runIds]))
          .all(),
      );
    },
    upsertGatePolicy(row) {
      return guard("write gate policy", () =>
        writtenRow(
          db
            .insert(gatePolicies)
            .values(row)
            .onConflictDoUpdate({
              target: [gatePolicies.skillName, gatePolicies.gateId],
              set: {
                requiredApprovals: row.requiredApprovals,
                forbidInitiator: row.forbidInitiator,
                updatedAt: row.updatedAt,
              },
            })
            .returning()
            .all(),
        ),
      );
    },
    findGatePolicy(skillName, gateId) {
      const rows = guard("read gate policy", () =>
        db
          .select()
          .from(gatePolicies)
          .where(
            sql`${gatePolicies.skillName} in (${skillName}, '*') and ${gatePolicies.gateId} in (${gateId}, '*')`,
          )
          .all(),
      );
      const rank = (r: GatePolicyRecord): number =>
        (r.skillName === "*" ? 2 : 0) + (r.gateId === "*" ? 1 : 0);
      return rows.sort((a, b) => rank(a) - rank(b))[0];
    },
    insertDecision(row) {
      return guard("record decision", () => {
        try {
          return writtenRow(db.insert(approvalDecisions).values(row).returning().all());
        } catch (err) {
          return conflict(
            err,
            `${row.username} has already decided this pause of gate ${row.gateId} of run ${row.runId}`,
            "already_decided",
          );
        }
      });
    },
    listDecisions(runId, gateId, pauseReceiptId) {
      const where = [eq(approvalDecisions.runId, runId)];
      if (gateId !== undefined) where.push(eq(approvalDecisions.gateId, gateId));
      if (pauseReceiptId !== undefined) {
        where.push(eq(approvalDecisions.pauseReceiptId, pauseReceiptId));
      }
      return guard("list decisions", () =>
        db
          .select()
          .from(approvalDecisions)
          .where(and(...where))
          .orderBy(asc(approvalDecisions.decidedAt), asc(approvalDecisions.id))
          .all(),
      );
    },
    listRunReceipts(runId) {
      return guard("list run receipts", () =>
        db
          .select()
          .from(receiptIndex)
          .where(eq(receiptIndex.runId, runId))
          .orderBy(asc(receiptIndex.createdAt), asc(receiptIndex.receiptId))
          .all(),
      );
    },
    listRunsUpdatedSince(since, limit) {
      return guard("list changed runs", () =>
        db
          .select()
          .from(runs)
          .where(gte(runs.updatedAt, since))
          .orderBy(asc(runs.updatedAt), asc(runs.id))
          .limit(Math.max(1, Math.min(limit, MAX_PAGE_SIZE)))
          .all(),
      );
    },
    listRunsFiltered(filter) {
      return guard("list runs", () => listRunsFiltered(db, filter));
    },
  };
}
