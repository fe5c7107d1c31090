/**
 * The asynchronous run state store port: what callers will use once the state store can be
 * PostgreSQL as well as SQLite (docs/decisions/0010-cluster-state-store.md). Same operations,
 * records and errors as the synchronous `StateStore` (./types.ts), returning promises; a
 * transaction hands its function a transaction-scoped handle instead of relying on ambient
 * state, because an async transaction spans awaits during which other requests run.
 */
import type {
  LedgerAppend,
  LedgerEntryRecord,
  ListIndexedReceiptsOptions,
  ListRunsOptions,
  NewRun,
  ReceiptIndexEntry,
  ReceiptIndexRecord,
  RunPage,
  RunPatch,
  RunRecord,
  StepRecord,
  StepUpsert,
} from "./types.js";

/**
 * Receipts kept in the state store itself: PostgreSQL's receipts table, one row per receipt
 * holding the exact bytes of its file form (./pg/receipts.ts). Written in the handle's
 * transaction, so a receipt commits with its index row, ledger line and run update.
 */
export interface ReceiptRows {
  /** Stores `bytes` under `id`; an identical rewrite is a no-op, other bytes RECEIPT_ALREADY_EXISTS. */
  put(id: string, bytes: string): Promise<{ written: boolean }>;
  /** The stored bytes of `id`, or undefined when there is no row. */
  get(id: string): Promise<Buffer | undefined>;
}

/** The operations available inside and outside a transaction. */
export interface AsyncStateOperations {
  /** Store name used in messages (never an absolute path or a URL with credentials). */
  readonly label: string;
  /**
   * The store's receipt rows (PostgreSQL), or undefined where receipts live only in the
   * receipt file store (SQLite, ../receipts/store.ts).
   */
  readonly receiptRows: ReceiptRows | undefined;
  /** Inserts a run; an existing id is STORE_ERROR (`details.reason: "run_exists"`). */
  createRun(run: NewRun): Promise<RunRecord>;
  /** Applies a patch and bumps `updatedAt`; RUN_NOT_FOUND when absent. */
  updateRun(id: string, patch: RunPatch): Promise<RunRecord>;
  /** The run with this id; RUN_NOT_FOUND when absent. */
  getRun(id: string): Promise<RunRecord>;
  /** Runs newest first (created_ms desc, id desc), keyset-paginated. */
  listRuns(options: ListRunsOptions): Promise<RunPage>;
  /** Inserts or updates a step; RUN_NOT_FOUND when the run is absent. */
  upsertStep(step: StepUpsert): Promise<StepRecord>;
  /** Steps of a run in first-write order (empty for an unknown run). */
  listSteps(runId: string): Promise<StepRecord[]>;
  /** Idempotently indexes a receipt. */
  indexReceipt(entry: ReceiptIndexEntry): Promise<ReceiptIndexRecord>;
  /** Indexed receipts newest first (created_at desc, receipt_id desc). */
  listIndexedReceipts(options: ListIndexedReceiptsOptions): Promise<ReceiptIndexRecord[]>;
  /** The index rows of exactly these receipts (ids without a row are skipped). */
  findIndexedReceipts(receiptIds: readonly string[]): Promise<ReceiptIndexRecord[]>;
  /** Appends to a run's hash chain atomically; a stale `previousHash` is refused. */
  appendLedgerEntry(runId: string, append: LedgerAppend): Promise<LedgerEntryRecord>;
  /** The last ledger entry of a run, if any. */
  getLedgerTail(runId: string): Promise<LedgerEntryRecord | undefined>;
  /** The whole ledger of a run, by index. */
  readLedger(runId: string): Promise<LedgerEntryRecord[]>;
}

/** A transaction's handle; refused with STORE_ERROR once its transaction has ended. */
export type AsyncStateTransaction = AsyncStateOperations;

/** The asynchronous run state store. */
export interface AsyncStateStore extends AsyncStateOperations {
  /**
   * Runs `fn` in one transaction: everything done through `tx` commits together when `fn`
   * resolves, or not at all when it throws (the error is rethrown). Inside `fn`, use `tx`:
   * calling the store itself there is refused (it would wait for the transaction it is in).
   */
  transaction<T>(fn: (tx: AsyncStateTransaction) => Promise<T>): Promise<T>;
  /** Closes the store after pending work; further calls raise STORE_ERROR. Idempotent. */
  close(): Promise<void>;
}
