/** `runx history`: sealed receipts (newest first) and paused runs, for humans and machines. */
import { receiptLookup } from "../store/receipt-lookup.js";
import { checkListedReceipt, listedVerification, ReceiptStore } from "../receipts/index.js";
import { listedRows, listingCache, toPending } from "../tools/receipt/history.js";
import type { HistoryRow, PendingRun } from "../tools/receipt/history.js";
import type {
  ListedVerification,
  RebuildProgress,
  Receipt,
  ReceiptFinding,
  SignaturePolicy,
} from "../receipts/index.js";
import { RuntimeError } from "../errors.js";
import type { AsyncStateOperations } from "../store/port.js";
import type { RunRecord, StepRecord } from "../store/types.js";
import { runEffects } from "./history-effects.js";
import type { HistoryEffect } from "./history-effects.js";
import { receiptView } from "./receipt-view.js";
import type { SignedReceipt, SignedView, UnsignedView } from "./receipt-view.js";

/** One receipt row of the history list: upstream's row plus the run that sealed it. */
export type HistoryReceipt = HistoryRow & { run_id: string | null };

export type { PendingRun } from "../tools/receipt/history.js";

/** `runx history --json`. */
export interface HistoryListing {
  projector_id: "runx-runtime.local-history.v1";
  store_label: string;
  receipts: HistoryReceipt[];
  pendingRuns: PendingRun[];
}

function parseJson(text: string | null): unknown {
  return text === null ? null : (JSON.parse(text) as unknown);
}

/** Paused runs (needs_agent / needs_approval), newest first, with their pending requests. */
export async function pendingRuns(
  state: Pick<AsyncStateOperations, "listRuns">,
): Promise<PendingRun[]> {
  const pending: PendingRun[] = [];
  for (const status of ["needs_agent", "needs_approval"] as const) {
    let cursor: string | null = null;
    do {
      const page = await state.listRuns({ limit: 500, status, cursor });
      pending.push(...page.runs.map(toPending));
      cursor = page.nextCursor;
    } while (cursor !== null);
  }
  return pending.sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1));
}

/** Lists receipts (children hidden unless `includeInternal`) and paused runs. */
export async function listHistory(deps: {
  receiptDir: string;
  storeLabel: string;
  policy: SignaturePolicy;
  state: Pick<AsyncStateOperations, "findIndexedReceipts" | "listRuns">;
  limit: number;
  includeInternal: boolean;
  /** Also list receipts produced by `runx harness` (hidden by default). */
  includeHarness?: boolean;
  /** Start after this position (the `created_at` and id of the previous page's last row). */
  before?: { created_at: string; receipt_id: string };
  /** Told how far a rebuild of a missing or damaged index has got. */
  progress?: RebuildProgress;
  /** The workspace's `.runx`, which holds the listing cache (receipts/verified-cache.ts). */
  runxDir?: string;
}): Promise<HistoryListing> {
  const store = new ReceiptStore({
    dir: deps.receiptDir,
    policy: deps.policy,
    label: deps.storeLabel,
  });
  // Only the journal lines of the page (and the receipt files of its candidates) are read:
  // the cost follows the page, not the store. A candidate is asked about in rank order; the
  // harness filter refuses it before the page is cut to `limit`, as a full scan would. A
  // receipt whose file no longer verifies (or no longer decodes) is listed as invalid.
  const rows = new Map<string, HistoryRow>();
  const cache = listingCache(store, deps.runxDir);
  const runByReceipt = new Map<string, string | null>();
  const page = await store.newestFirst({
    limit: deps.limit,
    includeChildren: deps.includeInternal,
    ...(deps.before !== undefined ? { before: deps.before } : {}),
    ...(deps.progress !== undefined ? { progress: deps.progress } : {}),
    accept: async (entries) => {
      const harness = new Set<string>();
      for (const entry of await deps.state.findIndexedReceipts(entries.map((e) => e.receipt_id))) {
        runByReceipt.set(entry.receiptId, entry.runId);
        if (entry.harness) harness.add(entry.receiptId);
      }
      const shown = entries.filter(
        (e) => deps.includeHarness === true || !harness.has(e.receipt_id),
      );
      for (const row of listedRows(store, shown, cache)) rows.set(row.id, row);
      return entries.map((e) => rows.has(e.receipt_id));
    },
  });
  cache?.save();
  const listed = page.map((entry): HistoryReceipt => {
    const { id, receipt_ref, name, ...rest } = rows.get(entry.receipt_id) as HistoryRow;
    return { id, receipt_ref, name, run_id: runByReceipt.get(id) ?? null, ...rest };
  });
  const pending = await pendingRuns(deps.state);
  return {
    projector_id: "runx-runtime.local-history.v1",
    store_label: deps.storeLabel,
    receipts: listed,
    pendingRuns: pending,
  };
}

/**
 * `runx history --detail <run-id|receipt-id>`. `run` and `steps` are the state store's
 * record of the run (local state, not signed); `receipt` is the signed document (without
 * `metadata`), `signed` what its signature covers read for display (its steps from their
 * own signed receipts), and `unsigned` the receipt's `metadata`, which the signature does not
 * cover (services/receipt-view.ts).
 */
export interface HistoryDetail {
  kind: "run" | "receipt";
  run:
    | (Omit<RunRecord, "resultJson" | "requestsJson" | "errorJson"> & {
        result: unknown;
        requests: unknown;
        error: unknown;
      })
    | null;
  steps: StepRecord[];
  receipt: SignedReceipt | null;
  /** `reason` and `findings` name what failed when the status is `invalid`. */
  verification: (ListedVerification & { findings?: ReceiptFinding[] }) | null;
  signed: SignedView | null;
  unsigned: UnsignedView | null;
  /** The run's provider effects, each with its evidence (services/history-effects.ts). */
  effects: HistoryEffect[];
}

/** Inspects one run (by run id) or one receipt (by `sha256:` id). */
export async function historyDetail(deps: {
  receiptDir: string;
  storeLabel: string;
  policy: SignaturePolicy;
  state: Pick<AsyncStateOperations, "findIndexedReceipts" | "getRun" | "listSteps" | "receiptRows">;
  id: string;
}): Promise<HistoryDetail> {
  // Receipts from the database on PostgreSQL (any instance may have sealed them), else files.
  const store = receiptLookup(
    new ReceiptStore({ dir: deps.receiptDir, policy: deps.policy, label: deps.storeLabel }),
    deps.state.receiptRows,
  );
  const loadReceipt = async (id: string) => {
    const found = await store.find(id);
    if (found === undefined) {
      throw new RuntimeError("RECEIPT_NOT_FOUND", `no receipt ${id} in store ${deps.storeLabel}`, {
        receipt_id: id,
      });
    }
    return found;
  };
  const view = async (receipt: Receipt | null) => {
    if (receipt === null)
      return { receipt: null, verification: null, signed: null, unsigned: null };
    const { signed, unsigned } = await receiptView(
      receipt,
      (id) => store.find(id),
      (r) => listedVerification(r, deps.policy).verification.status,
    );
    const { verification, findings } = listedVerification(receipt, deps.policy);
    return {
      receipt: signed.receipt,
      verification: findings.length > 0 ? { ...verification, findings } : verification,
      signed,
      unsigned,
    };
  };
  const find = (id: string) => store.find(id);
  if (deps.id.startsWith("sha256:")) {
    const receipt = await loadReceipt(deps.id);
    // A run's own receipt also shows that run's effects (its steps are in the state store).
    const runId = (await deps.state.findIndexedReceipts([deps.id]))[0]?.runId ?? null;
    const steps = runId !== null ? await deps.state.listSteps(runId) : [];
    const ownRun = runId !== null && (await deps.state.getRun(runId)).receiptId === deps.id;
    return {
      kind: "receipt",
      run: null,
      steps: [],
      ...(await view(receipt)),
      effects: ownRun ? await runEffects(steps, find) : [],
    };
  }
  const run = await deps.state.getRun(deps.id);
  // A run whose receipt file no longer decodes (or is gone) still shows its record, with
  // the receipt reported invalid and why (receipts/listed.ts).
  const listed =
    run.receiptId === null
      ? null
      : checkListedReceipt({
          dir: deps.receiptDir,
          label: deps.storeLabel,
          policy: deps.policy,
          id: run.receiptId,
        });
  // On PostgreSQL the run's receipt may be a database row with no file in this workspace.
  const fromRow =
    listed !== null && listed.receipt === null && deps.state.receiptRows !== undefined
      ? await deps.state.receiptRows.get(run.receiptId as string)
      : undefined;
  const shown =
    fromRow !== undefined
      ? await view((await store.find(run.receiptId as string)) ?? null)
      : listed !== null && listed.receipt === null
        ? { receipt: null, verification: listed.verification, signed: null, unsigned: null }
        : await view(listed?.receipt ?? null);
  const { resultJson, requestsJson, errorJson, ...rest } = run;
  const steps = await deps.state.listSteps(run.id);
  return {
    kind: "run",
    run: {
      ...rest,
      result: parseJson(resultJson),
      requests: parseJson(requestsJson),
      error: parseJson(errorJson),
    },
    steps,
    ...shown,
    effects: await runEffects(steps, find),
  };
}
