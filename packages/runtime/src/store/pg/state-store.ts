/**
 * The PostgreSQL adapter of the asynchronous state store port (../port.ts): the same
 * records, orderings and errors as the SQLite store (../state-store.ts), over the tables of
 * ./schema.ts. Runs created here are `local` jobs (executed by their creator, as the CLI
 * does); claimable runs go through ./lease.ts.
 *
 * Isolation: transactions are READ COMMITTED. Where the SQLite store relies on its single
 * writer (BEGIN IMMEDIATE), this adapter locks the run row instead: a ledger append, and a
 * tail read inside a transaction (read in order to be extended), take `FOR UPDATE` on the
 * run, so writers of one run serialise and writers of different runs do not. Text keys are
 * compared with `COLLATE "C"` so pages come out in SQLite's byte order.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type pg from "pg";
import { RuntimeError } from "../../errors.js";
import { checkLimit, outcomeOf } from "../record-rules.js";
import { isoTimestamp } from "../../time.js";
import type { AsyncStateOperations, AsyncStateStore } from "../port.js";
import { decodeRunCursor, encodeRunCursor } from "../run-cursor.js";
import { LEDGER_GENESIS_HASH } from "../types.js";
import type { LedgerEntryRecord, ReceiptIndexRecord, RunRecord, StepRecord } from "../types.js";
import type { PgState, Queryable } from "./connect.js";
import { inTransaction, sqlState, toPgStoreError } from "./connect.js";
import { readLedger as readLedgerRows, ledgerTail } from "./ledger.js";
import { getReceiptBytes, putReceipt } from "./receipts.js";
import { runRow, RUN_COLUMNS, stepRow, STEP_COLUMNS, indexRow, INDEX_COLUMNS } from "./rows.js";

/** Dependencies of `pgStateStore`. */
export interface PgStateStoreDeps {
  /** Source of `createdAt`/`updatedAt`/`created_ms`; defaults to the system clock. */
  clock?: () => Date;
}

const notFound = (id: string) =>
  new RuntimeError("RUN_NOT_FOUND", `run ${id} not found`, { runId: id });

/** The operations over one connection (`inTx`: a transaction's client). */
function operations(
  db: Queryable,
  options: {
    label: string;
    clock: () => Date;
    inTx: boolean;
    /** Runs `fn` in a transaction: the caller's own inside one, a new one outside. */
    atomically: <T>(fn: (q: Queryable) => Promise<T>) => Promise<T>;
  },
): AsyncStateOperations {
  const { label, clock, inTx, atomically } = options;
  const guard = async <T>(action: string, fn: () => Promise<T>, runId?: string): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (runId !== undefined && sqlState(err) === "23503") throw notFound(runId);
      throw toPgStoreError(err, label, action);
    }
  };
  const readRun = async (id: string): Promise<RunRecord | undefined> => {
    const r = await db.query(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = $1`, [id]);
    return r.rows[0] === undefined ? undefined : runRow(r.rows[0] as Record<string, unknown>);
  };

  return {
    label,
    receiptRows: {
      put: (id, bytes) => guard("write receipt", () => putReceipt(db, id, bytes)),
      get: (id) => guard("read receipt", () => getReceiptBytes(db, id)),
    },
    createRun: (run) =>
      guard("create run", async () => {
        const now = clock();
        const at = isoTimestamp(now);
        const status = run.status ?? "running";
        const values = [
          run.id,
          run.skillName,
          run.runner,
          run.skillRef,
          run.packageDir,
          run.packageDigest,
          run.executionClosureDigest ?? null,
          status,
          run.disposition ?? null,
          run.receiptId ?? null,
          run.inputsDigest,
          run.resultJson ?? null,
          run.requestsJson ?? null,
          run.errorJson ?? null,
          at,
          now.getTime(),
          outcomeOf(status, run.disposition ?? null, run.requestsJson ?? null),
        ];
        try {
          const r = await db.query(
            `INSERT INTO runs (id, skill_name, runner, skill_ref, package_dir, package_digest,
               execution_closure_digest, status, disposition, receipt_id, inputs_digest,
               result_json, requests_json, error_json, created_at, updated_at, created_ms, outcome)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16, $17)
             RETURNING ${RUN_COLUMNS}`,
            values,
          );
          return runRow(r.rows[0] as Record<string, unknown>);
        } catch (err) {
          if (sqlState(err) !== "23505") throw err;
          throw new RuntimeError("STORE_ERROR", `${label}: run ${run.id} already exists`, {
            label,
            reason: "run_exists",
            runId: run.id,
          });
        }
      }),

    updateRun: (id, patch) =>
      guard("update run", async () => {
        const fields: Array<[string, unknown]> = [];
        const put = (column: string, value: unknown) => {
          if (value !== undefined) fields.push([column, value]);
        };
        put("status", patch.status);
        put("disposition", patch.disposition);
        put("receipt_id", patch.receiptId);
        put("result_json", patch.resultJson);
        put("requests_json", patch.requestsJson);
        put("error_json", patch.errorJson);
        put("execution_closure_digest", patch.executionClosureDigest);
        put("updated_at", isoTimestamp(clock()));
        const touchesOutcome =
          patch.status !== undefined ||
          patch.disposition !== undefined ||
          patch.requestsJson !== undefined;
        // The outcome reads the fields the patch leaves alone too: read (locking the row)
        // and write in one transaction, so no other writer comes between.
        return atomically(async (q) => {
          if (touchesOutcome) {
            const current = await q.query<{
              status: string;
              disposition: string | null;
              requests_json: string | null;
            }>("SELECT status, disposition, requests_json FROM runs WHERE id = $1 FOR UPDATE", [
              id,
            ]);
            const row = current.rows[0];
            if (row === undefined) throw notFound(id);
            put(
              "outcome",
              outcomeOf(
                patch.status ?? row.status,
                patch.disposition !== undefined ? patch.disposition : row.disposition,
                patch.requestsJson !== undefined ? patch.requestsJson : row.requests_json,
              ),
            );
          }
          const assignments = fields.map(([c], i) => `${c} = $${i + 2}`);
          const r = await q.query(
            `UPDATE runs SET ${assignments.join(", ")} WHERE id = $1 RETURNING ${RUN_COLUMNS}`,
            [id, ...fields.map(([, v]) => v)],
          );
          const updated = r.rows[0] as Record<string, unknown> | undefined;
          if (updated === undefined) throw notFound(id);
          return runRow(updated);
        });
      }),

    getRun: (id) =>
      guard("read run", async () => {
        const run = await readRun(id);
        if (run === undefined) throw notFound(id);
        return run;
      }),

    listRuns: (options) =>
      guard("list runs", async () => {
        const limit = checkLimit(options.limit);
        const after =
          options.cursor === undefined || options.cursor === null
            ? undefined
            : decodeRunCursor(options.cursor);
        if (after?.direction === "newer") {
          throw new RuntimeError("USAGE", "listRuns pages only towards older runs (nextCursor)", {
            path: "cursor",
          });
        }
        const where: string[] = [];
        const params: unknown[] = [];
        const param = (v: unknown) => `$${params.push(v)}`;
        if (options.status !== undefined) where.push(`status = ${param(options.status)}`);
        if (options.skillName !== undefined) where.push(`skill_name = ${param(options.skillName)}`);
        if (after !== undefined) {
          where.push(
            `(created_ms, id COLLATE "C") < (${param(after.createdMs)}, ${param(after.id)} COLLATE "C")`,
          );
        }
        const r = await db.query(
          `SELECT ${RUN_COLUMNS} FROM runs ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
            ORDER BY created_ms DESC, id COLLATE "C" DESC LIMIT ${param(limit + 1)}`,
          params,
        );
        const rows = r.rows.map((row) => runRow(row as Record<string, unknown>));
        const page = rows.slice(0, limit);
        const last = page.at(-1);
        const nextCursor =
          rows.length > limit && last !== undefined
            ? encodeRunCursor({ createdMs: last.createdMs, id: last.id })
            : null;
        return { runs: page, nextCursor };
      }),

    upsertStep: (step) =>
      guard(
        "write step",
        async () => {
          const optional: Array<[string, unknown]> = (
            [
              ["attempt", step.attempt],
              ["receipt_id", step.receiptId],
              ["output_json", step.outputJson],
              ["started_at", step.startedAt],
              ["finished_at", step.finishedAt],
            ] as Array<[string, unknown]>
          ).filter(([, v]) => v !== undefined);
          const columns = ["run_id", "step_id", "status", ...optional.map(([c]) => c)];
          const values = [step.runId, step.stepId, step.status, ...optional.map(([, v]) => v)];
          // On conflict the row keeps its other fields: only the status and the given ones change.
          const updated = ["status", ...optional.map(([c]) => c)]
            .map((c) => `${c} = excluded.${c}`)
            .join(", ");
          const r = await db.query(
            `INSERT INTO steps (${columns.join(", ")}) VALUES (${values.map((_, i) => `$${i + 1}`).join(", ")})
             ON CONFLICT (run_id, step_id) DO UPDATE SET ${updated} RETURNING ${STEP_COLUMNS}`,
            values,
          );
          return stepRow(r.rows[0] as Record<string, unknown>);
        },
        step.runId,
      ),

    listSteps: (runId) =>
      guard("list steps", async () => {
        const r = await db.query(
          `SELECT ${STEP_COLUMNS} FROM steps WHERE run_id = $1 ORDER BY ord`,
          [runId],
        );
        return r.rows.map((row): StepRecord => stepRow(row as Record<string, unknown>));
      }),

    // As in SQLite: the first write of a receipt's own fields wins; only the derived facts
    // may change later (flags turn on, a missing run id is filled in).
    indexReceipt: (entry) =>
      guard("index receipt", async () => {
        const r = await db.query(
          `INSERT INTO receipt_index (receipt_id, run_id, skill_name, disposition, created_at,
             file_name, is_child, harness)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (receipt_id) DO UPDATE SET
             run_id = coalesce(receipt_index.run_id, excluded.run_id),
             is_child = receipt_index.is_child OR excluded.is_child,
             harness = receipt_index.harness OR excluded.harness
           RETURNING ${INDEX_COLUMNS}`,
          [
            entry.receiptId,
            entry.runId ?? null,
            entry.skillName,
            entry.disposition,
            entry.createdAt,
            entry.fileName,
            entry.isChild ?? false,
            entry.harness ?? false,
          ],
        );
        return indexRow(r.rows[0] as Record<string, unknown>);
      }),

    listIndexedReceipts: (options) =>
      guard("list receipts", async () => {
        const limit = checkLimit(options.limit);
        const where: string[] = [];
        if (options.includeChildren !== true) where.push("NOT is_child");
        if (options.includeHarness !== true) where.push("NOT harness");
        const r = await db.query(
          `SELECT ${INDEX_COLUMNS} FROM receipt_index ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
            ORDER BY created_at COLLATE "C" DESC, receipt_id COLLATE "C" DESC LIMIT $1`,
          [limit],
        );
        return r.rows.map((row): ReceiptIndexRecord => indexRow(row as Record<string, unknown>));
      }),

    findIndexedReceipts: (receiptIds) =>
      guard("find receipts", async () => {
        if (receiptIds.length === 0) return [];
        const r = await db.query(
          `SELECT ${INDEX_COLUMNS} FROM receipt_index WHERE receipt_id = ANY($1::text[])`,
          [receiptIds],
        );
        return r.rows.map((row): ReceiptIndexRecord => indexRow(row as Record<string, unknown>));
      }),

    appendLedgerEntry: (runId, append) =>
      guard("append ledger entry", async () => {
        const entryJson = JSON.stringify(append.entry) as string | undefined;
        if (entryJson === undefined) {
          throw new RuntimeError("USAGE", "ledger entry is not JSON-serializable", {
            path: "entry",
          });
        }
        // One statement: lock the run, check the tail, insert (no other writer between).
        const r = await db.query<{ run_exists: boolean; idx: number | null }>(
          `WITH run AS (SELECT id, fence FROM runs WHERE id = $1 FOR UPDATE),
                tail AS (SELECT idx, entry_hash FROM run_ledger WHERE run_id = $1
                          AND EXISTS (SELECT 1 FROM run) ORDER BY idx DESC LIMIT 1),
                next AS (SELECT coalesce((SELECT idx + 1 FROM tail), 0) AS idx,
                                coalesce((SELECT entry_hash FROM tail), $7) AS expected),
                ins AS (INSERT INTO run_ledger (run_id, idx, kind, status, step_id, entry_json,
                          previous_hash, entry_hash, created_at, fence)
                        SELECT $1, next.idx, $2, $3, $4, $5, $6, $8, $9, run.fence FROM run, next
                         WHERE next.expected = $6 AND ($10::int IS NULL OR next.idx = $10::int)
                        RETURNING idx)
           SELECT EXISTS (SELECT 1 FROM run) AS run_exists, (SELECT idx FROM ins) AS idx,
                  (SELECT idx FROM next) AS next_idx`,
          [
            runId,
            append.kind,
            append.status,
            append.stepId ?? null,
            entryJson,
            append.previousHash,
            LEDGER_GENESIS_HASH,
            append.entryHash,
            isoTimestamp(clock()),
            append.index ?? null,
          ],
        );
        const row = r.rows[0] as { run_exists: boolean; idx: number | null; next_idx: number };
        if (!row.run_exists) throw notFound(runId);
        if (row.idx === null) {
          throw new RuntimeError(
            "STORE_ERROR",
            `${label}: ledger append for run ${runId} does not extend the chain tail`,
            { label, reason: "ledger_chain_mismatch", runId, index: row.next_idx },
          );
        }
        const tail = await ledgerTail(db, runId);
        return plainLedger(tail as LedgerEntryRecord);
      }),

    getLedgerTail: (runId) =>
      guard("read ledger", async () => {
        // Inside a transaction the tail is read to be extended: lock the run like an append.
        if (inTx) await db.query("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", [runId]);
        const tail = await ledgerTail(db, runId);
        return tail === undefined ? undefined : plainLedger(tail);
      }),

    readLedger: (runId) =>
      guard("read ledger", async () => (await readLedgerRows(db, runId)).map(plainLedger)),
  };
}

/** A ledger record without the fence (the port's record). */
function plainLedger(record: LedgerEntryRecord & { fence?: bigint }): LedgerEntryRecord {
  const { fence: _fence, ...rest } = record;
  return rest;
}

/** The asynchronous state store over an open PostgreSQL state (closing it closes the pool). */
export function pgStateStore(state: PgState, deps: PgStateStoreDeps = {}): AsyncStateStore {
  const clock = deps.clock ?? (() => new Date());
  const inside = new AsyncLocalStorage<{ open: boolean }>();
  let closed = false;
  const refuse = (reason: string, message: string) =>
    new RuntimeError("STORE_ERROR", `${state.label}: ${message}`, { label: state.label, reason });
  /** Refuses a top-level call while closed or from inside one of this store's transactions. */
  const admit = (): RuntimeError | undefined => {
    if (closed) return refuse("store_closed", "the store is closed");
    if (inside.getStore()?.open === true) {
      return refuse("transaction_reentry", "inside a transaction, use its handle, not the store");
    }
    return undefined;
  };
  const topLevel: Queryable = {
    query: ((...args: Parameters<pg.Pool["query"]>) => {
      const refused = admit();
      return refused !== undefined ? Promise.reject(refused) : state.pool.query(...args);
    }) as Queryable["query"],
  };
  const top = operations(topLevel, {
    label: state.label,
    clock,
    inTx: false,
    atomically: (fn) => {
      const refused = admit();
      return refused !== undefined ? Promise.reject(refused) : inTransaction(state.pool, fn);
    },
  });

  return {
    ...top,
    async transaction(fn) {
      const refused = admit();
      if (refused !== undefined) throw refused;
      const client = await state.pool.connect();
      const txState = { open: true };
      const handle: Queryable = {
        query: ((...args: Parameters<pg.PoolClient["query"]>) =>
          txState.open
            ? client.query(...args)
            : Promise.reject(
                refuse("transaction_ended", "the transaction has ended"),
              )) as Queryable["query"],
      };
      let broken = false;
      try {
        await client.query("BEGIN");
        try {
          const result = await inside.run(txState, () =>
            fn(
              operations(handle, {
                label: state.label,
                clock,
                inTx: true,
                atomically: (inner) => inner(handle),
              }),
            ),
          );
          await client.query("COMMIT");
          return result;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {
            broken = true;
          });
          throw err;
        }
      } finally {
        txState.open = false;
        client.release(broken);
      }
    },
    async close() {
      closed = true;
      await state.close();
    },
  };
}
