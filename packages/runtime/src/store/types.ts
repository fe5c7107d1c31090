/**
 * Records, inputs and the `StateStore` port of the run state store. Row types are derived
 * from the drizzle schema, so a schema change shows up here (and in every caller) at once.
 */
import type BetterSqlite3 from "better-sqlite3";
import type { RUN_STATUSES, receiptIndex, runs, steps } from "./schema.js";

/**
 * `previous_hash` of the first ledger entry (index 0) of every run: "sha256:" and 64 zeros.
 * Ledger writers hash index 0 against this value; the store refuses anything else there.
 */
export const LEDGER_GENESIS_HASH = `sha256:${"0".repeat(64)}`;

/** Largest page `listRuns` / `listIndexedReceipts` return. */
export const MAX_PAGE_SIZE = 500;

/** A run status (`running` until the run seals, pauses or fails). */
export type RunStatus = (typeof RUN_STATUSES)[number];
/** One row of `runs`. */
export type RunRecord = typeof runs.$inferSelect;
/** One row of `steps`. */
export type StepRecord = typeof steps.$inferSelect;
/** One row of `receipt_index`. */
export type ReceiptIndexRecord = typeof receiptIndex.$inferSelect;

/** One ledger line as stored: the caller's entry object with its chain position and hashes. */
export interface LedgerEntryRecord {
  runId: string;
  idx: number;
  kind: string;
  status: string;
  stepId: string | null;
  entry: unknown;
  previousHash: string;
  entryHash: string;
  createdAt: string;
}

/**
 * Fields of a new run; timestamps come from the store's clock, status defaults to running, and
 * the outcome is derived by the store.
 */
export type NewRun = Omit<
  typeof runs.$inferInsert,
  "status" | "createdAt" | "updatedAt" | "createdMs" | "outcome"
> & { status?: RunStatus };

/** Mutable fields of a run; `undefined` leaves a field alone, `null` clears it. */
export type RunPatch = Partial<
  Pick<
    RunRecord,
    | "status"
    | "disposition"
    | "receiptId"
    | "resultJson"
    | "requestsJson"
    | "errorJson"
    | "executionClosureDigest"
  >
>;

/** Filters and page of `listRuns`. */
export interface ListRunsOptions {
  /** 1–500. */
  limit: number;
  /** `nextCursor` of the previous page. */
  cursor?: string | null;
  status?: RunStatus;
  skillName?: string;
}

/** One page of runs, newest first; `nextCursor` is null on the last page. */
export interface RunPage {
  runs: RunRecord[];
  nextCursor: string | null;
}

/** A step state to write; on update, `undefined` fields keep their stored value. */
export interface StepUpsert {
  runId: string;
  stepId: string;
  status: string;
  attempt?: number;
  receiptId?: string | null;
  outputJson?: string | null;
  startedAt?: string | null;
  finishedAt?: string | null;
}

/** A receipt to index; flags default to false. */
export type ReceiptIndexEntry = Omit<ReceiptIndexRecord, "runId" | "isChild" | "harness"> & {
  runId?: string | null;
  isChild?: boolean;
  harness?: boolean;
};

/** Filters of `listIndexedReceipts` (children and harness receipts are hidden by default). */
export interface ListIndexedReceiptsOptions {
  /** 1–500. */
  limit: number;
  includeChildren?: boolean;
  includeHarness?: boolean;
}

/** A ledger line to append; hashes are computed by the caller over the chain payload. */
export interface LedgerAppend {
  kind: string;
  status: string;
  stepId?: string | null;
  /** The JSON-serializable ledger line (stored with JSON.stringify). */
  entry: unknown;
  entryHash: string;
  /** Must equal the tail's `entryHash`, or LEDGER_GENESIS_HASH for the first entry. */
  previousHash: string;
  /** When given, must equal the index the entry lands at (the index the caller hashed). */
  index?: number;
}

/** What a store extension is built over: the open connection and the store's failure guard. */
export interface StoreConnection {
  readonly sqlite: BetterSqlite3.Database;
  /** Runs `fn`, mapping driver failures to STORE_ERROR naming `action` (see state-store.ts). */
  readonly guard: <T>(action: string, fn: () => T, runId?: string) => T;
  readonly label: string;
}

/** Builds an extension of the state store (called once per store). */
export type StoreExtension<T> = (connection: StoreConnection) => T;

/** The durable run state store. */
export interface StateStore {
  /** Store name used in messages (never an absolute path). */
  readonly label: string;
  /**
   * The value `extension` builds over this store's connection, built on first use and kept
   * for the store's lifetime (e.g. the console's tables: console/index.ts). Extensions live
   * outside this module so that a run never loads what only they need (drizzle).
   */
  attach<T>(extension: StoreExtension<T>): T;
  /** Inserts a run; an existing id is STORE_ERROR (`details.reason: "run_exists"`). */
  createRun(run: NewRun): RunRecord;
  /** Applies a patch and bumps `updatedAt`; RUN_NOT_FOUND when absent. */
  updateRun(id: string, patch: RunPatch): RunRecord;
  /** The run with this id; RUN_NOT_FOUND when absent. */
  getRun(id: string): RunRecord;
  /** Runs newest first (created_ms desc, id desc), keyset-paginated. */
  listRuns(options: ListRunsOptions): RunPage;
  /** Inserts or updates a step; RUN_NOT_FOUND when the run is absent. */
  upsertStep(step: StepUpsert): StepRecord;
  /** Steps of a run in first-write order (empty for an unknown run). */
  listSteps(runId: string): StepRecord[];
  /** Idempotently indexes a receipt (see the implementation note on merges). */
  indexReceipt(entry: ReceiptIndexEntry): ReceiptIndexRecord;
  /** Indexed receipts newest first (created_at desc, receipt_id desc). */
  listIndexedReceipts(options: ListIndexedReceiptsOptions): ReceiptIndexRecord[];
  /** The index rows of exactly these receipts (any number; ids without a row are skipped). */
  findIndexedReceipts(receiptIds: readonly string[]): ReceiptIndexRecord[];
  /** Appends to a run's hash chain atomically; a stale `previousHash` is refused. */
  appendLedgerEntry(runId: string, append: LedgerAppend): LedgerEntryRecord;
  /** The last ledger entry of a run, if any. */
  getLedgerTail(runId: string): LedgerEntryRecord | undefined;
  /** The whole ledger of a run, by index. */
  readLedger(runId: string): LedgerEntryRecord[];
  /**
   * Runs `fn` in one IMMEDIATE transaction: every operation inside commits together or not at
   * all (nested store transactions become savepoints). `fn` must be synchronous.
   */
  transaction<T>(fn: () => T): T;
  /** Closes the connection; further calls raise STORE_ERROR. Idempotent. */
  close(): void;
}
