/** The run journal: hash-chained ledger entries through the state store. */
import { hashCanonical } from "../receipts/index.js";
import type { AsyncStateOperations } from "../store/port.js";
import { LEDGER_GENESIS_HASH } from "../store/types.js";

/** What a ledger event records. */
export interface RunEvent {
  kind: string;
  status: string;
  stepId?: string | null;
  detail: Record<string, unknown>;
  producer: { skill: string; runner: string };
  createdAt: string;
  receiptId?: string | null;
}

/**
 * Appends one `runx.ledger.entry.v1` line to the run's chain:
 * entry_hash = H({version: "runx.ledger.chain-payload.v1", index, previous_hash, entry}).
 */
export async function appendRunEvent(
  state: Pick<AsyncStateOperations, "getLedgerTail" | "appendLedgerEntry">,
  runId: string,
  event: RunEvent,
): Promise<string> {
  const tail = await state.getLedgerTail(runId);
  const index = tail === undefined ? 0 : tail.idx + 1;
  const previousHash = tail === undefined ? LEDGER_GENESIS_HASH : tail.entryHash;
  const data = {
    kind: event.kind,
    status: event.status,
    step_id: event.stepId ?? null,
    detail: event.detail,
  };
  const entry = {
    type: "run_event",
    version: "1",
    data,
    meta: {
      run_id: runId,
      step_id: event.stepId ?? null,
      producer: event.producer,
      created_at: event.createdAt,
      hash: hashCanonical(data),
      receipt_id: event.receiptId ?? null,
      redacted: true,
    },
  };
  const entryHash = hashCanonical({
    version: "runx.ledger.chain-payload.v1",
    index,
    previous_hash: previousHash,
    entry,
  });
  const line = {
    schema_version: "runx.ledger.entry.v1",
    chain: {
      version: "runx.ledger.chain.v1",
      algorithm: "sha256",
      canonicalization: "runx.stable-json.v1",
      index,
      previous_hash: previousHash,
      entry_hash: entryHash,
    },
    entry,
  };
  await state.appendLedgerEntry(runId, {
    kind: event.kind,
    status: event.status,
    stepId: event.stepId ?? null,
    entry: line,
    entryHash,
    previousHash,
    index,
  });
  return entryHash;
}
