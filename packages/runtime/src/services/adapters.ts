/**
 * Adapter services of the runtime: the definitions in the workspace and their trust state,
 * trusting one, the dispatch attempts of a run (with each attempt's receipt checked against
 * the document it commits) and cancelling a running dispatch from another process.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import { hashCanonical } from "../receipts/index.js";
import type { ReceiptStore } from "../receipts/index.js";
import type { DispatchReceiptBody } from "../adapters/dispatch.js";
import { cancelRequestPath, listAttemptRecords, requestCancel } from "../adapters/records.js";
import {
  ADAPTERS_DIR,
  AdapterLoadProblem,
  loadAdapter,
  readTrust,
  trustAdapter,
} from "../adapters/trust.js";
import type { TrustRecord } from "../adapters/trust.js";

/** One adapter definition and whether it is trusted as it stands. */
export interface AdapterListing {
  id: string;
  file: string | null;
  trust: "trusted" | "untrusted" | "digest_mismatch" | "invalid";
  definition_digest: string | null;
  problem: string | null;
}

/** Every definition under `adapters/` with its trust state. */
export function listAdapters(root: string, runxDir: string): AdapterListing[] {
  const dir = join(root, ADAPTERS_DIR);
  if (!existsSync(dir)) return [];
  const trust = readTrust(runxDir);
  const ids = [
    ...new Set(
      readdirSync(dir)
        .filter((f) => /\.(ya?ml|json)$/.test(f))
        .map((f) => f.replace(/\.(ya?ml|json)$/, "")),
    ),
  ].sort();
  return ids.map((id) => {
    try {
      const loaded = loadAdapter(root, id);
      const record = trust[id];
      return {
        id,
        file: loaded.file,
        trust:
          record === undefined
            ? "untrusted"
            : record.definition_digest === loaded.digest
              ? "trusted"
              : "digest_mismatch",
        definition_digest: loaded.digest,
        problem: null,
      };
    } catch (error) {
      if (!(error instanceof AdapterLoadProblem)) throw error;
      return {
        id,
        file: null,
        trust: "invalid",
        definition_digest: null,
        problem: `${error.code}: ${error.message}`,
      };
    }
  });
}

/** Trusts the current definition and payload of `id` for this workspace. */
export function trust(
  root: string,
  runxDir: string,
  id: string,
  principal: string,
  now: Date,
): TrustRecord {
  return trustAdapter(root, runxDir, id, principal, now);
}

/** One dispatch attempt as the console shows it. */
export interface DispatchAttemptView {
  receipt_id: string;
  /** The signed receipt exists, commits this document, and the document matches its schema. */
  verified: boolean;
  dispatch: DispatchReceiptBody;
}

/** The dispatch attempts of a run, oldest first, each checked against its signed receipt. */
export async function dispatchAttempts(
  runxDir: string,
  receipts: ReceiptStore,
  runId: string,
): Promise<DispatchAttemptView[]> {
  const out: DispatchAttemptView[] = [];
  for (const record of listAttemptRecords(runxDir, runId)) {
    let verified = false;
    try {
      const receipt = await receipts.read(record.receipt_id);
      const committed = receipt.subject.commitments.find((c) => c.scope === "output")?.value;
      verified =
        committed === hashCanonical(record.dispatch) &&
        validateAdaptersDispatchReceipt(record.dispatch) === true;
    } catch {
      verified = false;
    }
    out.push({ receipt_id: record.receipt_id, verified, dispatch: record.dispatch });
  }
  return out;
}

/** Asks the running dispatch of `runId` to stop; refuses an unknown run. */
export function cancelDispatch(
  runxDir: string,
  runId: string,
  now: Date,
): { run_id: string; requested: true } {
  const file = cancelRequestPath(runxDir, runId);
  if (!existsSync(join(file, "..", "..", runId))) {
    throw new RuntimeError("RUN_NOT_FOUND", `run ${runId} has no dispatch state to cancel`, {
      run_id: runId,
    });
  }
  requestCancel(runxDir, runId, now);
  return { run_id: runId, requested: true };
}
