/**
 * Adapter services of the runtime: the definitions in the workspace and their trust state,
 * trusting one, the dispatch attempts of a run (with each attempt's receipt checked against
 * the document it commits), the attempts in flight, and cancelling a running dispatch from
 * another process.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import {
  hashCanonical,
  parseReceiptDocument,
  receiptStatus,
  verifyReceiptProof,
} from "../receipts/index.js";
import type { Receipt, ReceiptStatus, SignaturePolicy } from "../receipts/index.js";
import { receiptFileNames } from "../receipts/store-files.js";
import type { DispatchReceiptBody } from "../adapters/dispatch.js";
import {
  cancelRequestPath,
  containedRunFile,
  listAttemptRecords,
  requestCancel,
  runPathProblem,
} from "../adapters/records.js";
import { computeSourceDigest, loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
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

/** The signed receipt of an attempt, checked as the receipt page and the DAG check it. */
export interface AttemptReceiptCheck {
  /**
   * `verified` / `unverified` (a local-development signature) as `receiptStatus` reports them;
   * `invalid` when the receipt fails a check or does not commit this attempt's document;
   * `missing` when the store has no such receipt.
   */
  status: ReceiptStatus | "missing";
  /** The first failed check (finding code), null unless `invalid` or `missing`. */
  failed_check: string | null;
}

/** One dispatch attempt as the console shows it. */
export interface DispatchAttemptView {
  receipt_id: string;
  /**
   * The signed receipt exists, passes its checks under the read policy, commits this document,
   * and the document matches its schema.
   */
  verified: boolean;
  /** The receipt's own verification (signature and content address) folded with `verified`. */
  receipt: AttemptReceiptCheck;
  /**
   * The lane the attempt was routed to: from its packet when it launched, else from the run's
   * package when that is still the version the attempt ran (same digest); null when unknown
   * (the dispatch receipt itself carries no lane).
   */
  lane: string | null;
  dispatch: DispatchReceiptBody;
}

/** An attempt that has launched and not yet been recorded. */
export interface RunningDispatch {
  step_id: string;
  attempt: number;
  /** When the packet was written (right before the launch). */
  started_at: string;
}

/** A run's recorded attempts and the ones still in flight. */
export interface DispatchState {
  attempts: DispatchAttemptView[];
  running: RunningDispatch[];
}

/** Where attempts' receipts are read from, and the policy they are checked under. */
export interface AttemptReceiptSource {
  receiptDir: string;
  /** The read policy the receipt page and the DAG use, so all three show the same status. */
  policy: SignaturePolicy;
}

async function readStored(dir: string, id: string): Promise<Receipt | { missing: true } | string> {
  for (const name of receiptFileNames(id)) {
    let text: string;
    try {
      text = await readFile(join(dir, name), "utf8");
    } catch {
      continue;
    }
    const parsed = parseReceiptDocument(text);
    if ("error" in parsed) return "receipt_unreadable";
    return parsed.receipt.id === id ? parsed.receipt : "seal_digest_mismatch";
  }
  return { missing: true };
}

async function checkAttempt(
  source: AttemptReceiptSource,
  record: { receipt_id: string; dispatch: DispatchReceiptBody },
): Promise<{ verified: boolean; receipt: AttemptReceiptCheck }> {
  let stored: Awaited<ReturnType<typeof readStored>>;
  try {
    stored = await readStored(source.receiptDir, record.receipt_id);
  } catch {
    stored = "receipt_unreadable";
  }
  if (typeof stored === "string")
    return { verified: false, receipt: { status: "invalid", failed_check: stored } };
  if (!("schema" in stored))
    return { verified: false, receipt: { status: "missing", failed_check: "receipt_missing" } };
  const status = receiptStatus(stored, source.policy);
  if (status === "invalid") {
    const findings = verifyReceiptProof(stored, source.policy).filter(
      (f) => f.code !== "signature_verifier_missing",
    );
    return {
      verified: false,
      receipt: { status, failed_check: findings[0]?.code ?? "receipt_invalid" },
    };
  }
  const committed = stored.subject.commitments.find((c) => c.scope === "output")?.value;
  if (committed !== hashCanonical(record.dispatch))
    return {
      verified: false,
      receipt: { status: "invalid", failed_check: "dispatch_document_mismatch" },
    };
  if (validateAdaptersDispatchReceipt(record.dispatch) !== true)
    return {
      verified: false,
      receipt: { status: "invalid", failed_check: "dispatch_document_invalid" },
    };
  return { verified: true, receipt: { status, failed_check: null } };
}

/** The dispatch attempts of a run, oldest first, each checked against its signed receipt. */
export async function dispatchAttempts(
  runxDir: string,
  source: AttemptReceiptSource,
  runId: string,
): Promise<DispatchAttemptView[]> {
  const out: DispatchAttemptView[] = [];
  for (const record of listAttemptRecords(runxDir, runId)) {
    const checked = await checkAttempt(source, record);
    out.push({
      receipt_id: record.receipt_id,
      ...checked,
      lane: packetLane(runxDir, record.dispatch),
      dispatch: record.dispatch,
    });
  }
  return out;
}

/** How `adapters/records.ts` and `attemptDir` name a step on disk. */
const safeStep = (stepId: string): string => stepId.replace(/[^A-Za-z0-9_-]/g, "_");

/**
 * Attempts of a run that have launched (their packet is written right before the process
 * starts) and have no record yet. A process that died without recording its attempt leaves
 * its packet behind, so callers pair this with the run's own status (`running`).
 */
export function runningDispatches(runxDir: string, runId: string): RunningDispatch[] {
  const recorded = new Set(
    listAttemptRecords(runxDir, runId).map(
      (r) => `${safeStep(r.dispatch.step_id)}/${r.dispatch.attempt}`,
    ),
  );
  const base = join(runxDir, "runs", runId, "dispatch");
  // Nothing is read through a link (attempt directories are never created through one).
  if (!existsSync(base) || runPathProblem(runxDir, runId, "dispatch") !== undefined) return [];
  const out: RunningDispatch[] = [];
  for (const step of readdirSync(base).sort()) {
    const stepDir = join(base, step);
    if (!statSync(stepDir).isDirectory()) continue;
    for (const n of readdirSync(stepDir)) {
      const attempt = Number(n);
      if (!Number.isInteger(attempt) || attempt < 1) continue;
      const packet = join(stepDir, n, "packet.json");
      if (!existsSync(packet) || recorded.has(`${step}/${attempt}`)) continue;
      let stepId = step;
      try {
        const parsed = JSON.parse(readFileSync(packet, "utf8")) as { step_id?: unknown };
        if (typeof parsed.step_id === "string") stepId = parsed.step_id;
      } catch {
        // A packet being written: the directory name stands for the step.
      }
      out.push({ step_id: stepId, attempt, started_at: statSync(packet).mtime.toISOString() });
    }
  }
  return out.sort((a, b) => a.started_at.localeCompare(b.started_at) || a.attempt - b.attempt);
}

/** The lane in an attempt's packet (written only when the attempt launched). */
function packetLane(
  runxDir: string,
  dispatch: Pick<DispatchReceiptBody, "run_id" | "step_id" | "attempt">,
): string | null {
  const file = containedRunFile(
    runxDir,
    dispatch.run_id,
    `dispatch/${safeStep(dispatch.step_id)}/${dispatch.attempt}/packet.json`,
  );
  if (file === undefined) return null;
  try {
    const lane = (JSON.parse(readFileSync(file, "utf8")) as { lane?: unknown }).lane;
    return typeof lane === "string" && lane !== "" ? lane : null;
  } catch {
    return null;
  }
}

/** The lane an adapter runner of the package declares, if the package is still at `digest`. */
async function packageLane(
  root: string,
  packageDir: string,
  digest: string,
  stepId: string,
): Promise<string | null> {
  try {
    const resolved = await resolveSkillRef(packageDir, { workspaceRoot: root });
    if (computeSourceDigest(resolved) !== digest) return null;
    const runner = (await loadSkillPackage(resolved)).runners[stepId];
    if (runner?.type !== "adapter") return null;
    const lane = runner.adapter.lane;
    return typeof lane === "string" && lane !== "" ? lane : null;
  } catch {
    return null;
  }
}

/**
 * A run's recorded attempts and the ones in flight (what the console's run page shows).
 * `run` (the run's workspace root and package directory, when the run is known) lets an
 * attempt that never launched show the lane its package routes it to.
 */
export async function dispatchState(
  runxDir: string,
  source: AttemptReceiptSource,
  runId: string,
  run?: { root: string; packageDir: string },
): Promise<DispatchState> {
  const attempts = await dispatchAttempts(runxDir, source, runId);
  if (run !== undefined) {
    for (const attempt of attempts) {
      attempt.lane ??= await packageLane(
        run.root,
        run.packageDir,
        attempt.dispatch.skill.digest,
        attempt.dispatch.step_id,
      );
    }
  }
  return { attempts, running: runningDispatches(runxDir, runId) };
}

/**
 * Asks the running dispatch of `runId` to stop. Refuses a run with no dispatch state
 * (RUN_NOT_FOUND) and one with no attempt in flight (DISPATCH_NOT_RUNNING): a request left
 * behind would otherwise cancel the run's next attempt the moment it launched.
 */
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
  if (runningDispatches(runxDir, runId).length === 0) {
    throw new RuntimeError(
      "DISPATCH_NOT_RUNNING",
      `run ${runId} has no dispatch in flight (runx adapter attempts ${runId} lists its attempts)`,
      { run_id: runId },
    );
  }
  requestCancel(runxDir, runId, now);
  return { run_id: runId, requested: true };
}
