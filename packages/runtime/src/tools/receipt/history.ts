/**
 * Read access to the run's receipt history for the receipt tools (and the rows `runx history`
 * lists): newest-first top-level receipts with upstream's history row projection, and the
 * runs paused for an agent or an approval. Harness receipts and lineage children are left
 * out, as the default history surface leaves them out.
 */
import type { Receipt, ReceiptStatus, ReceiptStore } from "../../receipts/index.js";
import { receiptStatus } from "../../receipts/index.js";
import type { AsyncStateOperations } from "../../store/port.js";
import type { RunRecord } from "../../store/types.js";

/** One receipt row of the history (upstream's local history row). */
export interface HistoryRow {
  id: string;
  receipt_ref: string;
  name: string;
  status: string;
  created_at: string;
  harness_id: string;
  harness_state: "sealed" | "deferred";
  summary: string;
  source_type: string;
  actors: string[];
  artifact_types: string[];
  verification: { status: ReceiptStatus };
}

/** A paused run (camelCase, as upstream projects it). */
export interface PendingRun {
  id: string;
  name: string;
  kind: string;
  status: string;
  startedAt: string;
  selectedRunner: string;
  packageDigest: string;
  executionClosureDigest: string | null;
  requests: unknown;
}

/** What the receipt tools read of the history. */
export interface ReceiptHistory {
  /** The store's display label (never a host path). */
  label(): string;
  /** `production` when the store's policy can report a receipt as verified. */
  signatureMode(): "production" | "local-development";
  /** Newest-first rows `accept` admits, at most `limit` (ties broken by id). */
  receipts(limit: number, accept: (row: HistoryRow) => boolean): Promise<HistoryRow[]>;
  /** Paused runs, newest first. */
  pendingRuns(): Promise<PendingRun[]>;
}

function nameOf(receipt: Receipt): string {
  const uri = receipt.subject.ref.uri;
  const m = /^hrn_(.+)_[^_]+$/.exec(uri);
  return m?.[1] ?? uri;
}

/** Labels of the artifacts a receipt's acts name (`artifact` when unlabelled), sorted. */
function artifactTypes(receipt: Receipt): string[] {
  const types = new Set<string>();
  for (const ref of receipt.acts.flatMap((act) => act.artifact_refs)) {
    if (ref.type === "artifact")
      types.add(ref.label !== undefined && ref.label !== "" ? ref.label : "artifact");
  }
  return [...types].sort();
}

/** The history row of one receipt under `policy`. */
export function historyRow(
  receipt: Receipt,
  policy: Parameters<typeof receiptStatus>[1],
): HistoryRow {
  return {
    id: receipt.id,
    receipt_ref: `runx:receipt:${receipt.id}`,
    name: nameOf(receipt),
    status: receipt.seal.disposition,
    created_at: receipt.created_at,
    harness_id: receipt.subject.ref.uri,
    harness_state: receipt.seal.disposition === "deferred" ? "deferred" : "sealed",
    summary: receipt.seal.summary,
    source_type: receipt.subject.kind,
    actors: [receipt.authority.actor_ref.uri],
    artifact_types: artifactTypes(receipt),
    verification: { status: receiptStatus(receipt, policy) },
  };
}

function parseJson(text: string | null): unknown {
  return text === null ? null : (JSON.parse(text) as unknown);
}

/** A paused run as history lists it. */
export function toPending(run: RunRecord): PendingRun {
  return {
    id: run.id,
    name: run.skillName,
    kind: "skill",
    status: run.status,
    startedAt: run.createdAt,
    selectedRunner: run.runner,
    packageDigest: run.packageDigest,
    executionClosureDigest: run.executionClosureDigest,
    requests: parseJson(run.requestsJson),
  };
}

/** What the history reads of the run state store. */
type HistoryState = Pick<AsyncStateOperations, "findIndexedReceipts" | "listRuns">;

/** Paused runs (needs_agent / needs_approval), newest first, with their pending requests. */
export async function pendingRuns(state: HistoryState): Promise<PendingRun[]> {
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

/** The history of `store`, with harness flags and paused runs from `state` (both opened lazily). */
export function storeHistory(
  store: () => ReceiptStore,
  state: () => Promise<HistoryState>,
): ReceiptHistory {
  return {
    label: () => store().label,
    signatureMode: () =>
      store().policy.mode === "production" ? "production" : "local-development",
    async receipts(limit, accept) {
      const opened = store();
      const rows = new Map<string, HistoryRow>();
      const page = await opened.newestFirst({
        limit,
        includeChildren: false,
        accept: async (entries) => {
          const harness = new Set(
            (await (await state()).findIndexedReceipts(entries.map((e) => e.receipt_id)))
              .filter((entry) => entry.harness)
              .map((entry) => entry.receiptId),
          );
          const verdicts: boolean[] = [];
          for (const entry of entries) {
            let receipt: Receipt | undefined;
            try {
              receipt = harness.has(entry.receipt_id)
                ? undefined
                : await opened.find(entry.receipt_id);
            } catch {
              // A receipt that does not verify is not history the tools may answer from.
              receipt = undefined;
            }
            const row = receipt === undefined ? undefined : historyRow(receipt, opened.policy);
            if (row !== undefined) rows.set(row.id, row);
            verdicts.push(row !== undefined && accept(row));
          }
          return verdicts;
        },
      });
      return page.map((entry) => rows.get(entry.receipt_id) as HistoryRow);
    },
    pendingRuns: async () => pendingRuns(await state()),
  };
}
