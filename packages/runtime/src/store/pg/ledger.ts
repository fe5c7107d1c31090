/**
 * The run ledger over PostgreSQL, written only under a lease: `appendFencedLedgerEntry` takes
 * the `FencedTx` that `fencedWrite` hands out (the run row locked, the fence checked), so the
 * tail cannot move between the chain check and the insert, and a holder that lost its lease
 * cannot append at all. Each line records the fence it was written under. Same chain rules
 * as the SQLite store (../state-store.ts): the first `previousHash` is LEDGER_GENESIS_HASH,
 * every later one the tail's `entryHash`.
 */
import { RuntimeError } from "../../errors.js";
import { LEDGER_GENESIS_HASH } from "../types.js";
import type { LedgerAppend, LedgerEntryRecord } from "../types.js";
import type { Queryable } from "./connect.js";
import type { FencedTx } from "./lease.js";

interface LedgerRow {
  run_id: string;
  idx: number;
  kind: string;
  status: string;
  step_id: string | null;
  entry_json: string;
  previous_hash: string;
  entry_hash: string;
  created_at: string;
  fence: string;
}

/** A ledger line with the fence of the lease that wrote it. */
export interface FencedLedgerRecord extends LedgerEntryRecord {
  fence: bigint;
}

const COLUMNS = `run_id, idx, kind, status, step_id, entry_json, previous_hash, entry_hash,
  created_at, fence::text AS fence`;

function toRecord(row: LedgerRow): FencedLedgerRecord {
  return {
    runId: row.run_id,
    idx: row.idx,
    kind: row.kind,
    status: row.status,
    stepId: row.step_id,
    entry: JSON.parse(row.entry_json) as unknown,
    previousHash: row.previous_hash,
    entryHash: row.entry_hash,
    createdAt: row.created_at,
    fence: BigInt(row.fence),
  };
}

/** The last line of a run's ledger (where a takeover resumes), if any. */
export async function ledgerTail(
  db: Queryable,
  runId: string,
): Promise<FencedLedgerRecord | undefined> {
  const result = await db.query<LedgerRow>(
    `SELECT ${COLUMNS} FROM run_ledger WHERE run_id = $1 ORDER BY idx DESC LIMIT 1`,
    [runId],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : toRecord(row);
}

/** The whole ledger of a run, by index. */
export async function readLedger(db: Queryable, runId: string): Promise<FencedLedgerRecord[]> {
  const result = await db.query<LedgerRow>(
    `SELECT ${COLUMNS} FROM run_ledger WHERE run_id = $1 ORDER BY idx`,
    [runId],
  );
  return result.rows.map(toRecord);
}

/** Appends to the leased run's chain; a stale `previousHash` or index is refused. */
export async function appendFencedLedgerEntry(
  tx: FencedTx,
  append: LedgerAppend,
  createdAt: string,
): Promise<FencedLedgerRecord> {
  const runId = tx.lease.runId;
  const entryJson = JSON.stringify(append.entry) as string | undefined;
  if (entryJson === undefined) {
    throw new RuntimeError("USAGE", "ledger entry is not JSON-serializable", { path: "entry" });
  }
  const tail = await ledgerTail(tx.client, runId);
  const idx = tail === undefined ? 0 : tail.idx + 1;
  const expected = tail === undefined ? LEDGER_GENESIS_HASH : tail.entryHash;
  if (append.previousHash !== expected || (append.index !== undefined && append.index !== idx)) {
    throw new RuntimeError(
      "STORE_ERROR",
      `ledger append for run ${runId} does not extend the chain tail`,
      { reason: "ledger_chain_mismatch", runId, index: idx },
    );
  }
  const result = await tx.client.query<LedgerRow>(
    `INSERT INTO run_ledger (run_id, idx, kind, status, step_id, entry_json, previous_hash,
       entry_hash, created_at, fence)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::bigint) RETURNING ${COLUMNS}`,
    [
      runId,
      idx,
      append.kind,
      append.status,
      append.stepId ?? null,
      entryJson,
      append.previousHash,
      append.entryHash,
      createdAt,
      tx.lease.fence.toString(),
    ],
  );
  return toRecord(result.rows[0] as LedgerRow);
}
