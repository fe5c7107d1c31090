/**
 * The typed operations of the run state store. This module (with `migrations.ts`) is the only
 * place in the runtime that talks to the database; everything else goes through
 * `StateStore`. Methods are synchronous (better-sqlite3) and raise only RuntimeError.
 */
import type BetterSqlite3 from "better-sqlite3";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { RuntimeError } from "../errors.js";
import { decodeRunCursor, encodeRunCursor } from "./run-cursor.js";
import { createConsoleStore } from "./console-store.js";
import { receiptIndex, runLedger, runs, steps } from "./schema.js";
import { sqliteFailure, toStoreError } from "./store-errors.js";
import { LEDGER_GENESIS_HASH, MAX_PAGE_SIZE } from "./types.js";
import type { LedgerEntryRecord, StateStore } from "./types.js";

export { LEDGER_GENESIS_HASH, MAX_PAGE_SIZE } from "./types.js";
export type * from "./types.js";

/** Dependencies of `createStateStore`. */
export interface StateStoreDeps {
  label: string;
  /** Source of `createdAt`/`updatedAt`/`created_ms`. */
  clock: () => Date;
}

function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new RuntimeError("USAGE", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, {
      path: "limit",
    });
  }
  return limit;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function toLedgerRecord(row: typeof runLedger.$inferSelect): LedgerEntryRecord {
  const { entryJson, ...rest } = row;
  return { ...rest, entry: JSON.parse(entryJson) as unknown };
}

/** Builds the store over an open, migrated connection (see `openStateStore`). */
export function createStateStore(sqlite: BetterSqlite3.Database, deps: StateStoreDeps): StateStore {
  const db = drizzle({ client: sqlite });
  const { label, clock } = deps;

  const notFound = (id: string): RuntimeError =>
    new RuntimeError("RUN_NOT_FOUND", `run ${id} not found`, { runId: id });

  /** Runs `fn`, mapping driver failures; a foreign-key failure means the run is missing. */
  function guard<T>(action: string, fn: () => T, runId?: string): T {
    if (!sqlite.open) {
      throw new RuntimeError("STORE_ERROR", `${label}: ${action} failed: the store is closed`, {
        label,
        reason: "store_closed",
      });
    }
    try {
      return fn();
    } catch (err) {
      const failure = sqliteFailure(err);
      if (runId !== undefined && failure?.code === "SQLITE_CONSTRAINT_FOREIGNKEY") {
        throw notFound(runId);
      }
      throw toStoreError(err, label, action);
    }
  }

  const ledgerRows = (runId: string) =>
    db.select().from(runLedger).where(eq(runLedger.runId, runId));

  let consoleStore: ReturnType<typeof createConsoleStore> | undefined;

  return {
    label,

    get console() {
      return (consoleStore ??= createConsoleStore(db, guard, label));
    },

    createRun(run) {
      return guard("create run", () => {
        const now = clock();
        const at = now.toISOString();
        try {
          return db
            .insert(runs)
            .values({
              id: run.id,
              skillName: run.skillName,
              runner: run.runner,
              skillRef: run.skillRef,
              packageDir: run.packageDir,
              packageDigest: run.packageDigest,
              executionClosureDigest: run.executionClosureDigest ?? null,
              status: run.status ?? "running",
              disposition: run.disposition ?? null,
              receiptId: run.receiptId ?? null,
              inputsDigest: run.inputsDigest,
              resultJson: run.resultJson ?? null,
              requestsJson: run.requestsJson ?? null,
              errorJson: run.errorJson ?? null,
              createdAt: at,
              updatedAt: at,
              createdMs: now.getTime(),
            })
            .returning()
            .get();
        } catch (err) {
          if (sqliteFailure(err)?.code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw err;
          throw new RuntimeError("STORE_ERROR", `${label}: run ${run.id} already exists`, {
            label,
            reason: "run_exists",
            runId: run.id,
          });
        }
      });
    },

    updateRun(id, patch) {
      const row = guard("update run", () =>
        db
          .update(runs)
          .set({
            ...definedOnly({
              status: patch.status,
              disposition: patch.disposition,
              receiptId: patch.receiptId,
              resultJson: patch.resultJson,
              requestsJson: patch.requestsJson,
              errorJson: patch.errorJson,
              executionClosureDigest: patch.executionClosureDigest,
            }),
            updatedAt: clock().toISOString(),
          })
          .where(eq(runs.id, id))
          .returning()
          .get(),
      );
      if (row === undefined) throw notFound(id);
      return row;
    },

    getRun(id) {
      const row = guard("read run", () => db.select().from(runs).where(eq(runs.id, id)).get());
      if (row === undefined) throw notFound(id);
      return row;
    },

    listRuns(options) {
      const limit = checkLimit(options.limit);
      const after =
        options.cursor === undefined || options.cursor === null
          ? undefined
          : decodeRunCursor(options.cursor);
      const where: SQL[] = [];
      if (options.status !== undefined) where.push(eq(runs.status, options.status));
      if (options.skillName !== undefined) where.push(eq(runs.skillName, options.skillName));
      // Row-value comparison lets SQLite seek straight into the (…, created_ms, id) indexes.
      if (after !== undefined) {
        where.push(sql`(${runs.createdMs}, ${runs.id}) < (${after.createdMs}, ${after.id})`);
      }
      const rows = guard("list runs", () =>
        db
          .select()
          .from(runs)
          .where(and(...where))
          .orderBy(desc(runs.createdMs), desc(runs.id))
          .limit(limit + 1)
          .all(),
      );
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const nextCursor =
        rows.length > limit && last !== undefined
          ? encodeRunCursor({ createdMs: last.createdMs, id: last.id })
          : null;
      return { runs: page, nextCursor };
    },

    upsertStep(step) {
      const optional = definedOnly({
        attempt: step.attempt,
        receiptId: step.receiptId,
        outputJson: step.outputJson,
        startedAt: step.startedAt,
        finishedAt: step.finishedAt,
      });
      return guard(
        "write step",
        () =>
          db
            .insert(steps)
            .values({ runId: step.runId, stepId: step.stepId, status: step.status, ...optional })
            .onConflictDoUpdate({
              target: [steps.runId, steps.stepId],
              set: { status: step.status, ...optional },
            })
            .returning()
            .get(),
        step.runId,
      );
    },

    listSteps(runId) {
      // rowid = first-insert order; an upsert keeps the row (and its rowid) in place.
      return guard("list steps", () =>
        db
          .select()
          .from(steps)
          .where(eq(steps.runId, runId))
          .orderBy(sql`rowid`)
          .all(),
      );
    },

    // Receipts are immutable, so the first write of a receipt's own fields wins. Only the
    // derived facts may change later: `isChild`/`harness` can turn on (a parent indexed
    // after its child) and a missing `runId` can be filled in. Re-indexing never fails.
    indexReceipt(entry) {
      return guard("index receipt", () =>
        db
          .insert(receiptIndex)
          .values({
            receiptId: entry.receiptId,
            runId: entry.runId ?? null,
            skillName: entry.skillName,
            disposition: entry.disposition,
            createdAt: entry.createdAt,
            fileName: entry.fileName,
            isChild: entry.isChild ?? false,
            harness: entry.harness ?? false,
          })
          .onConflictDoUpdate({
            target: receiptIndex.receiptId,
            set: {
              runId: sql`coalesce(${receiptIndex.runId}, excluded.run_id)`,
              isChild: sql`max(${receiptIndex.isChild}, excluded.is_child)`,
              harness: sql`max(${receiptIndex.harness}, excluded.harness)`,
            },
          })
          .returning()
          .get(),
      );
    },

    listIndexedReceipts(options) {
      const limit = checkLimit(options.limit);
      const where: SQL[] = [];
      if (options.includeChildren !== true) where.push(eq(receiptIndex.isChild, false));
      if (options.includeHarness !== true) where.push(eq(receiptIndex.harness, false));
      return guard("list receipts", () =>
        db
          .select()
          .from(receiptIndex)
          .where(and(...where))
          .orderBy(desc(receiptIndex.createdAt), desc(receiptIndex.receiptId))
          .limit(limit)
          .all(),
      );
    },

    appendLedgerEntry(runId, append) {
      const entryJson = JSON.stringify(append.entry) as string | undefined;
      if (entryJson === undefined) {
        throw new RuntimeError("USAGE", "ledger entry is not JSON-serializable", {
          path: "entry",
        });
      }
      // IMMEDIATE takes the write lock before the tail is read, so the tail cannot move
      // between the check and the insert, in this process or any other.
      const row = guard(
        "append ledger entry",
        () =>
          db.transaction(
            (tx) => {
              const run = tx.select({ id: runs.id }).from(runs).where(eq(runs.id, runId)).get();
              if (run === undefined) throw notFound(runId);
              const tail = tx
                .select({ idx: runLedger.idx, entryHash: runLedger.entryHash })
                .from(runLedger)
                .where(eq(runLedger.runId, runId))
                .orderBy(desc(runLedger.idx))
                .limit(1)
                .get();
              const idx = tail === undefined ? 0 : tail.idx + 1;
              const expected = tail === undefined ? LEDGER_GENESIS_HASH : tail.entryHash;
              if (
                append.previousHash !== expected ||
                (append.index !== undefined && append.index !== idx)
              ) {
                throw new RuntimeError(
                  "STORE_ERROR",
                  `${label}: ledger append for run ${runId} does not extend the chain tail`,
                  { label, reason: "ledger_chain_mismatch", runId, index: idx },
                );
              }
              return tx
                .insert(runLedger)
                .values({
                  runId,
                  idx,
                  kind: append.kind,
                  status: append.status,
                  stepId: append.stepId ?? null,
                  entryJson,
                  previousHash: append.previousHash,
                  entryHash: append.entryHash,
                  createdAt: clock().toISOString(),
                })
                .returning()
                .get();
            },
            { behavior: "immediate" },
          ),
        runId,
      );
      return toLedgerRecord(row);
    },

    getLedgerTail(runId) {
      const row = guard("read ledger", () =>
        ledgerRows(runId).orderBy(desc(runLedger.idx)).limit(1).get(),
      );
      return row === undefined ? undefined : toLedgerRecord(row);
    },

    readLedger(runId) {
      const rows = guard("read ledger", () => ledgerRows(runId).orderBy(asc(runLedger.idx)).all());
      return rows.map(toLedgerRecord);
    },

    transaction(fn) {
      return guard("transaction", () => sqlite.transaction(fn).immediate());
    },

    close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
