/**
 * The typed operations of the run state store. This module (with `migrations.ts`) is the only
 * place in the runtime that talks to the database; everything else goes through
 * `StateStore`. Methods are synchronous (better-sqlite3) and raise only RuntimeError.
 */
import type BetterSqlite3 from "better-sqlite3";
import { RuntimeError } from "../errors.js";
import { checkLimit, outcomeOf } from "./record-rules.js";
import { RECEIPT_INDEX, RUNS, RUN_LEDGER, STEPS } from "./layouts.js";
import { decodeRunCursor, encodeRunCursor } from "./run-cursor.js";
import { statementCache, tableCodec, writtenRow } from "./statements.js";
import { sqliteFailure, toStoreError } from "./store-errors.js";
import { LEDGER_GENESIS_HASH } from "./types.js";
import type {
  LedgerEntryRecord,
  ReceiptIndexRecord,
  StateStore,
  StoreConnection,
  StoreExtension,
} from "./types.js";
import { isoTimestamp } from "../time.js";

export { LEDGER_GENESIS_HASH, MAX_PAGE_SIZE } from "./types.js";
export type * from "./types.js";

/** Dependencies of `createStateStore`. */
export interface StateStoreDeps {
  label: string;
  /** Source of `createdAt`/`updatedAt`/`created_ms`. */
  clock: () => Date;
}

/** Receipt ids per statement of `findIndexedReceipts`. */
const LOOKUP_SLICE = 500;

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function toLedgerRecord(row: {
  runId: string;
  idx: number;
  kind: string;
  status: string;
  stepId: string | null;
  entryJson: string;
  previousHash: string;
  entryHash: string;
  createdAt: string;
}): LedgerEntryRecord {
  const { entryJson, ...rest } = row;
  return { ...rest, entry: JSON.parse(entryJson) as unknown };
}

/** Builds the store over an open, migrated connection (see `openStateStore`). */
export function createStateStore(sqlite: BetterSqlite3.Database, deps: StateStoreDeps): StateStore {
  // Statements are prepared directly from the table layouts (store/statements.ts); drizzle's
  // query builder serves only extensions such as the console's tables.
  // Writes read their RETURNING rows with .all() (see writtenRow).
  const prepared = statementCache(sqlite);
  const runCodec = tableCodec(RUNS);
  const stepCodec = tableCodec(STEPS);
  const indexCodec = tableCodec(RECEIPT_INDEX);
  const ledgerCodec = tableCodec(RUN_LEDGER);
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

  /** Binds `values` (by property) in `keys` order. */
  const bind = <Row>(
    codec: { toDriver(key: keyof Row & string, value: unknown): unknown },
    keys: ReadonlyArray<keyof Row & string>,
    values: Partial<Record<keyof Row & string, unknown>>,
  ): unknown[] => keys.map((k) => codec.toDriver(k, values[k]));

  const RUN_KEYS = [
    "id",
    "skillName",
    "runner",
    "skillRef",
    "packageDir",
    "packageDigest",
    "executionClosureDigest",
    "status",
    "disposition",
    "receiptId",
    "inputsDigest",
    "resultJson",
    "requestsJson",
    "errorJson",
    "createdAt",
    "updatedAt",
    "createdMs",
    "outcome",
  ] as const;
  const INDEX_KEYS = [
    "receiptId",
    "runId",
    "skillName",
    "disposition",
    "createdAt",
    "fileName",
    "isChild",
    "harness",
  ] as const;
  const LEDGER_KEYS = [
    "runId",
    "idx",
    "kind",
    "status",
    "stepId",
    "entryJson",
    "previousHash",
    "entryHash",
    "createdAt",
  ] as const;

  const readRun = (id: string) => {
    const row = prepared(
      `SELECT ${runCodec.columnList} FROM ${runCodec.name} WHERE ${runCodec.column("id")} = ?`,
    ).get(id) as Record<string, unknown> | undefined;
    return row === undefined ? undefined : runCodec.decode(row);
  };
  const ledgerTail = (runId: string) => {
    const row = prepared(
      `SELECT ${ledgerCodec.columnList} FROM ${ledgerCodec.name} WHERE ${ledgerCodec.column("runId")} = ? ORDER BY ${ledgerCodec.column("idx")} DESC LIMIT 1`,
    ).get(runId) as Record<string, unknown> | undefined;
    return row === undefined ? undefined : ledgerCodec.decode(row);
  };

  const extensions = new Map<StoreExtension<unknown>, unknown>();
  const connection: StoreConnection = { sqlite, guard, label };
  /** `SELECT <all columns> FROM t [WHERE a AND b …] …rest`, prepared once per text. */
  const selectAll = (
    codec: { name: string; columnList: string },
    where: string[],
    rest: string,
  ): BetterSqlite3.Statement =>
    prepared(
      `SELECT ${codec.columnList} FROM ${codec.name}${where.length > 0 ? ` WHERE ${where.join(" AND ")}` : ""} ${rest}`,
    );

  return {
    label,

    attach<T>(extension: StoreExtension<T>): T {
      if (!extensions.has(extension)) extensions.set(extension, extension(connection));
      return extensions.get(extension) as T;
    },

    createRun(run) {
      return guard("create run", () => {
        const now = clock();
        const at = isoTimestamp(now);
        try {
          const values = {
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
            outcome: "running",
          };
          values.outcome = outcomeOf(values.status, values.disposition, values.requestsJson);
          const row = writtenRow(
            prepared(`${runCodec.insert(RUN_KEYS)} RETURNING ${runCodec.columnList}`).all(
              bind(runCodec, RUN_KEYS, values),
            ) as Array<Record<string, unknown>>,
          );
          return runCodec.decode(row);
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
      const set: Partial<Record<(typeof RUN_KEYS)[number], unknown>> = {
        ...definedOnly({
          status: patch.status,
          disposition: patch.disposition,
          receiptId: patch.receiptId,
          resultJson: patch.resultJson,
          requestsJson: patch.requestsJson,
          errorJson: patch.errorJson,
          executionClosureDigest: patch.executionClosureDigest,
        }),
        updatedAt: isoTimestamp(clock()),
      };
      const touchesOutcome =
        patch.status !== undefined ||
        patch.disposition !== undefined ||
        patch.requestsJson !== undefined;
      const row = guard("update run", () =>
        // The outcome reads the fields the patch leaves alone too: read and write in one
        // transaction (a savepoint inside the caller's), so no other writer comes between.
        sqlite
          .transaction(() => {
            if (touchesOutcome) {
              const current = prepared(
                `SELECT ${runCodec.column("status")}, ${runCodec.column("disposition")}, ${runCodec.column("requestsJson")} FROM ${runCodec.name} WHERE ${runCodec.column("id")} = ?`,
              ).get(id) as
                | { status: string; disposition: string | null; requests_json: string | null }
                | undefined;
              if (current === undefined) return undefined;
              set.outcome = outcomeOf(
                patch.status ?? current.status,
                patch.disposition !== undefined ? patch.disposition : current.disposition,
                patch.requestsJson !== undefined ? patch.requestsJson : current.requests_json,
              );
            }
            const keys = Object.keys(set) as Array<(typeof RUN_KEYS)[number]>;
            const assignments = keys.map((k) => `${runCodec.column(k)} = ?`).join(", ");
            return prepared(
              `UPDATE ${runCodec.name} SET ${assignments} WHERE ${runCodec.column("id")} = ? RETURNING ${runCodec.columnList}`,
            ).all([...bind(runCodec, keys, set), id])[0] as Record<string, unknown> | undefined;
          })
          .immediate(),
      );
      if (row === undefined) throw notFound(id);
      return runCodec.decode(row);
    },

    getRun(id) {
      const row = guard("read run", () => readRun(id));
      if (row === undefined) throw notFound(id);
      return row;
    },

    listRuns(options) {
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
      const c = (k: (typeof RUN_KEYS)[number]) => runCodec.column(k);
      const where: string[] = [];
      const params: unknown[] = [];
      if (options.status !== undefined) {
        where.push(`${c("status")} = ?`);
        params.push(options.status);
      }
      if (options.skillName !== undefined) {
        where.push(`${c("skillName")} = ?`);
        params.push(options.skillName);
      }
      // Row-value comparison lets SQLite seek straight into the (…, created_ms, id) indexes.
      if (after !== undefined) {
        where.push(`(${c("createdMs")}, ${c("id")}) < (?, ?)`);
        params.push(after.createdMs, after.id);
      }
      const rows = guard("list runs", () =>
        (
          selectAll(
            runCodec,
            where,
            `ORDER BY ${c("createdMs")} DESC, ${c("id")} DESC LIMIT ?`,
          ).all(...params, limit + 1) as Array<Record<string, unknown>>
        ).map((row) => runCodec.decode(row)),
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
      const values = { runId: step.runId, stepId: step.stepId, status: step.status, ...optional };
      const keys = Object.keys(values) as Array<keyof typeof values>;
      // On conflict the row keeps its other fields: only the status and the given ones change.
      const updated = (["status", ...Object.keys(optional)] as Array<keyof typeof values>)
        .map((k) => `${stepCodec.column(k)} = excluded.${stepCodec.column(k)}`)
        .join(", ");
      return guard(
        "write step",
        () =>
          stepCodec.decode(
            writtenRow(
              prepared(
                `${stepCodec.insert(keys)} ON CONFLICT (${stepCodec.column("runId")}, ${stepCodec.column("stepId")}) DO UPDATE SET ${updated} RETURNING ${stepCodec.columnList}`,
              ).all(bind(stepCodec, keys, values)) as Array<Record<string, unknown>>,
            ),
          ),
        step.runId,
      );
    },

    listSteps(runId) {
      // rowid = first-insert order; an upsert keeps the row (and its rowid) in place.
      return guard("list steps", () =>
        (
          selectAll(stepCodec, [`${stepCodec.column("runId")} = ?`], "ORDER BY rowid").all(
            runId,
          ) as Array<Record<string, unknown>>
        ).map((row) => stepCodec.decode(row)),
      );
    },

    // Receipts are immutable, so the first write of a receipt's own fields wins. Only the
    // derived facts may change later: `isChild`/`harness` can turn on (a parent indexed
    // after its child) and a missing `runId` can be filled in. Re-indexing never fails.
    indexReceipt(entry) {
      const values = {
        receiptId: entry.receiptId,
        runId: entry.runId ?? null,
        skillName: entry.skillName,
        disposition: entry.disposition,
        createdAt: entry.createdAt,
        fileName: entry.fileName,
        isChild: entry.isChild ?? false,
        harness: entry.harness ?? false,
      };
      const t = indexCodec.name;
      const c = (k: (typeof INDEX_KEYS)[number]) => indexCodec.column(k);
      return guard("index receipt", () =>
        indexCodec.decode(
          writtenRow(
            prepared(
              `${indexCodec.insert(INDEX_KEYS)} ON CONFLICT (${c("receiptId")}) DO UPDATE SET ` +
                `${c("runId")} = coalesce(${t}.${c("runId")}, excluded.${c("runId")}), ` +
                `${c("isChild")} = max(${t}.${c("isChild")}, excluded.${c("isChild")}), ` +
                `${c("harness")} = max(${t}.${c("harness")}, excluded.${c("harness")}) ` +
                `RETURNING ${indexCodec.columnList}`,
            ).all(bind(indexCodec, INDEX_KEYS, values)) as Array<Record<string, unknown>>,
          ),
        ),
      );
    },

    listIndexedReceipts(options) {
      const limit = checkLimit(options.limit);
      const c = (k: (typeof INDEX_KEYS)[number]) => indexCodec.column(k);
      const where: string[] = [];
      if (options.includeChildren !== true) where.push(`${c("isChild")} = 0`);
      if (options.includeHarness !== true) where.push(`${c("harness")} = 0`);
      return guard("list receipts", () =>
        (
          selectAll(
            indexCodec,
            where,
            `ORDER BY ${c("createdAt")} DESC, ${c("receiptId")} DESC LIMIT ?`,
          ).all(limit) as Array<Record<string, unknown>>
        ).map((row) => indexCodec.decode(row)),
      );
    },

    findIndexedReceipts(receiptIds) {
      const found: ReceiptIndexRecord[] = [];
      const c = indexCodec.column("receiptId");
      // In slices, so that no statement exceeds SQLite's limit on bound parameters.
      for (let at = 0; at < receiptIds.length; at += LOOKUP_SLICE) {
        const ids = receiptIds.slice(at, at + LOOKUP_SLICE);
        const rows = guard("find receipts", () =>
          selectAll(indexCodec, [`${c} IN (${ids.map(() => "?").join(", ")})`], "").all(...ids),
        ) as Array<Record<string, unknown>>;
        for (const row of rows) found.push(indexCodec.decode(row));
      }
      return found;
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
          sqlite
            .transaction(() => {
              const run = prepared(
                `SELECT 1 FROM ${runCodec.name} WHERE ${runCodec.column("id")} = ?`,
              ).get(runId);
              if (run === undefined) throw notFound(runId);
              const tail = ledgerTail(runId);
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
              const values = {
                runId,
                idx,
                kind: append.kind,
                status: append.status,
                stepId: append.stepId ?? null,
                entryJson,
                previousHash: append.previousHash,
                entryHash: append.entryHash,
                createdAt: isoTimestamp(clock()),
              };
              return ledgerCodec.decode(
                writtenRow(
                  prepared(
                    `${ledgerCodec.insert(LEDGER_KEYS)} RETURNING ${ledgerCodec.columnList}`,
                  ).all(bind(ledgerCodec, LEDGER_KEYS, values)) as Array<Record<string, unknown>>,
                ),
              );
            })
            .immediate(),
        runId,
      );
      return toLedgerRecord(row);
    },

    getLedgerTail(runId) {
      const row = guard("read ledger", () => ledgerTail(runId));
      return row === undefined ? undefined : toLedgerRecord(row);
    },

    readLedger(runId) {
      return guard("read ledger", () =>
        (
          selectAll(
            ledgerCodec,
            [`${ledgerCodec.column("runId")} = ?`],
            `ORDER BY ${ledgerCodec.column("idx")} ASC`,
          ).all(runId) as Array<Record<string, unknown>>
        ).map((row) => toLedgerRecord(ledgerCodec.decode(row))),
      );
    },

    transaction(fn) {
      return guard("transaction", () => sqlite.transaction(fn).immediate());
    },

    close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
