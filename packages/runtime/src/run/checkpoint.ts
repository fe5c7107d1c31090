/**
 * Durable pause checkpoints. A paused run's checkpoint is the detail of its latest
 * `resolution_requested` ledger entry; the ledger is hash-chained, and the chain is verified
 * before a checkpoint is trusted.
 */
import { RuntimeError } from "../errors.js";
import { hashCanonical } from "../receipts/index.js";
import type { AsyncStateOperations } from "../store/port.js";
import type { LedgerEntryRecord } from "../store/types.js";
import { LEDGER_GENESIS_HASH } from "../store/types.js";
import type { RunRequest } from "../contracts/envelope.js";

/** Everything needed to continue a paused run in a new process. */
export interface Checkpoint {
  version: "runx.checkpoint.v1";
  /** What the run is waiting for. */
  kind: "inputs" | "agent" | "graph" | "adapter";
  /** Workspace-relative package directory. */
  skill_ref: string;
  runner: string;
  package_digest: string;
  execution_closure_digest: string;
  /** Inputs supplied so far (for `inputs`) or the admitted inputs (otherwise). */
  inputs: Record<string, unknown>;
  /** Names of secret variables to deliver again on resume (values are never stored). */
  secret_env: string[];
  /** The credential profile named by `--profile` (a name only; resume re-reads its material). */
  credential_profile?: string;
  requests: RunRequest[];
  paused_receipt: { id: string; digest: string };
  /** The graph machine's serialised state (graph runs). */
  graph_state?: unknown;
  /**
   * The tool input a managed agent proposed for each gate it paused on (agent runs), keyed by
   * gate id and redacted like the inputs: the console previews the effect from it and checks
   * it against the gate's digests (console/gate-preview.ts). Resuming never reads it; the act
   * runs again and must propose the same plan for the decision to apply.
   */
  gate_inputs?: Record<string, unknown>;
}

interface LedgerLine {
  chain: { index: number; previous_hash: string; entry_hash: string };
  entry: { data: { kind: string; detail: { checkpoint?: Checkpoint } } };
}

/** Reads and verifies a run's ledger chain, returning its latest checkpoint. */
export async function loadCheckpoint(
  state: Pick<AsyncStateOperations, "readLedger">,
  runId: string,
): Promise<Checkpoint> {
  return checkpointOf(runId, await state.readLedger(runId));
}

/**
 * The synchronous form of `loadCheckpoint` for the console's services, which still read the
 * embedded SQLite store directly.
 */
export function readCheckpoint(
  state: { readLedger(runId: string): LedgerEntryRecord[] },
  runId: string,
): Checkpoint {
  return checkpointOf(runId, state.readLedger(runId));
}

/** Verifies a run's ledger chain (its lines by index) and returns its latest checkpoint. */
export function checkpointOf(runId: string, lines: readonly LedgerEntryRecord[]): Checkpoint {
  let previous = LEDGER_GENESIS_HASH;
  let checkpoint: Checkpoint | undefined;
  for (const record of lines) {
    const line = record.entry as LedgerLine;
    const recomputed = hashCanonical({
      version: "runx.ledger.chain-payload.v1",
      index: record.idx,
      previous_hash: previous,
      entry: line.entry,
    });
    if (line.chain.previous_hash !== previous || recomputed !== record.entryHash) {
      throw new RuntimeError(
        "RESUME_REFUSED",
        `the run ledger of ${runId} fails verification at entry ${record.idx}; refusing to resume`,
        { run_id: runId, index: record.idx },
      );
    }
    previous = record.entryHash;
    if (line.entry.data.kind === "resolution_requested" && line.entry.data.detail.checkpoint) {
      checkpoint = line.entry.data.detail.checkpoint;
    }
  }
  if (checkpoint === undefined) {
    throw new RuntimeError("RESUME_REFUSED", `run ${runId} has no pause checkpoint`, {
      run_id: runId,
    });
  }
  return checkpoint;
}
