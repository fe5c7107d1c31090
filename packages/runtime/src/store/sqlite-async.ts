/**
 * The SQLite adapter of the asynchronous store port (./port.ts) over today's synchronous
 * store (docs/decisions/0010-cluster-state-store.md, "How SQLite fits the async port").
 *
 * Single operations run synchronously and resolve at once. A transaction is the one real
 * change: better-sqlite3 transactions are synchronous functions, so `transaction(fn)` issues
 * BEGIN IMMEDIATE and COMMIT/ROLLBACK itself around an async `fn`. The connection is shared
 * by every request of the process, so an in-process async mutex keeps other requests'
 * statements out of an open transaction (and their reads from seeing uncommitted rows);
 * every top-level operation queues on it. Inside `fn` the `tx` handle runs statements
 * directly; the store's own atomic operations (a ledger append) nest as savepoints, as they
 * do in the synchronous store's transactions. Exclusion between processes is still SQLite's
 * write lock with its busy timeout.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RuntimeError } from "../errors.js";
import type { AsyncStateOperations, AsyncStateStore, AsyncStateTransaction } from "./port.js";
import type { StateStore, StoreConnection } from "./types.js";

/** The extension that hands out the store's connection (built once per store). */
const connectionOf = (connection: StoreConnection): StoreConnection => connection;

type SyncOperations = Omit<AsyncStateOperations, "label" | "receiptRows">;
const OPERATIONS = [
  "createRun",
  "updateRun",
  "getRun",
  "listRuns",
  "upsertStep",
  "listSteps",
  "indexReceipt",
  "listIndexedReceipts",
  "findIndexedReceipts",
  "appendLedgerEntry",
  "getLedgerTail",
  "readLedger",
] as const satisfies ReadonlyArray<keyof SyncOperations>;

/** Operations bound to `store`, each passed through `wrap` (which may refuse the call). */
function operations(store: StateStore, wrap: <T>(fn: () => T) => Promise<T>): AsyncStateOperations {
  // Receipts stay files in the embedded default (the receipt store writes them).
  const ops: Record<string, unknown> = { label: store.label, receiptRows: undefined };
  const methods = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of OPERATIONS) {
    ops[name] = (...args: unknown[]) => wrap(() => methods[name]?.(...args));
  }
  return ops as unknown as AsyncStateOperations;
}

/** The connection's async mutex (see `sqliteExclusive`). */
interface SqliteMutex {
  exclusive: <T>(fn: () => Promise<T> | T) => Promise<T>;
  /** The transaction whose `fn` this async context runs in, if any. */
  inside: AsyncLocalStorage<{ open: boolean }>;
}

/** One mutex per connection, shared by every async adapter over it (built once per store). */
const mutexOf = ({ label }: StoreConnection): SqliteMutex => {
  /** The tail of the mutex queue: resolves when the last queued holder is done. */
  let tail: Promise<void> = Promise.resolve();
  const inside = new AsyncLocalStorage<{ open: boolean }>();
  return {
    inside,
    exclusive: <T>(fn: () => Promise<T> | T): Promise<T> => {
      if (inside.getStore()?.open === true) {
        return Promise.reject(
          new RuntimeError(
            "STORE_ERROR",
            `${label}: inside a transaction, use its handle, not the store`,
            { label, reason: "transaction_reentry" },
          ),
        );
      }
      const run = tail.then(fn);
      tail = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
  };
};

/**
 * Queues `fn` on the async mutex of `store`'s connection: every async adapter over one
 * SQLite connection (the state store port, the console's identity tables) shares it, so none
 * of their statements lands inside another's open async transaction.
 */
export function sqliteExclusive(store: StateStore): <T>(fn: () => Promise<T> | T) => Promise<T> {
  return store.attach(mutexOf).exclusive;
}

/** Wraps a synchronous SQLite store as the asynchronous port; closing the port closes it. */
export function asyncSqliteStateStore(store: StateStore): AsyncStateStore {
  const { sqlite, guard, label } = store.attach(connectionOf);
  const { exclusive, inside } = store.attach(mutexOf);

  const top = operations(store, (fn) => exclusive(fn));

  async function transaction<T>(fn: (tx: AsyncStateTransaction) => Promise<T>): Promise<T> {
    return exclusive(async () => {
      const state = { open: true };
      const tx = operations(store, (op) =>
        state.open
          ? Promise.resolve().then(op)
          : Promise.reject(
              new RuntimeError("STORE_ERROR", `${label}: the transaction has ended`, {
                label,
                reason: "transaction_ended",
              }),
            ),
      );
      guard("transaction", () => sqlite.exec("BEGIN IMMEDIATE"));
      try {
        const result = await inside.run(state, () => fn(tx));
        guard("transaction", () => sqlite.exec("COMMIT"));
        return result;
      } catch (err) {
        if (sqlite.open && sqlite.inTransaction) sqlite.exec("ROLLBACK");
        throw err;
      } finally {
        state.open = false;
      }
    });
  }

  return {
    ...top,
    transaction,
    close: () => exclusive(() => store.close()),
  };
}
