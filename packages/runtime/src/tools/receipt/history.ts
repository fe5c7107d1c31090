/**
 * Read access to the run's receipt history for the receipt tools (and the rows `runx history`
 * lists): newest-first top-level receipts with upstream's history row projection, and the
 * runs paused for an agent or an approval. Harness receipts and lineage children are left
 * out, as the default history surface leaves them out. A receipt whose file no longer
 * verifies is listed with `verification.status` `invalid` and the reason, never left out
 * (receipts/listed.ts); one that no longer decodes has only the fields its index line holds.
 */
import type { JournalEntry, Receipt, ReceiptStore } from "../../receipts/index.js";
import { checkListedReceipt, ListingCache } from "../../receipts/index.js";
import type { ListedCache, ListedReceipt, ListedVerification } from "../../receipts/index.js";
import type { AsyncStateOperations } from "../../store/port.js";
import type { RunRecord } from "../../store/types.js";

/**
 * One receipt row of the history (upstream's local history row). The fields read from the
 * receipt are null when its file no longer decodes (`verification.status` is then
 * `invalid`); `verification.reason` is present exactly when the status is `invalid`.
 */
export interface HistoryRow {
  id: string;
  receipt_ref: string;
  name: string | null;
  status: string | null;
  created_at: string;
  harness_id: string | null;
  harness_state: "sealed" | "deferred" | null;
  summary: string | null;
  source_type: string | null;
  actors: string[];
  artifact_types: string[];
  verification: ListedVerification;
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

/**
 * The history row of the receipt an index line names, from what `checkListedReceipt` found:
 * a receipt that no longer decodes keeps the id and `created_at` of its index line.
 */
export function historyRow(entry: JournalEntry, listed: ListedReceipt): HistoryRow {
  const receipt = listed.receipt;
  const id = receipt?.id ?? entry.receipt_id;
  return {
    id,
    receipt_ref: `runx:receipt:${id}`,
    name: receipt === null ? null : nameOf(receipt),
    status: receipt?.seal.disposition ?? null,
    created_at: receipt?.created_at ?? entry.created_at,
    harness_id: receipt?.subject.ref.uri ?? null,
    harness_state:
      receipt === null ? null : receipt.seal.disposition === "deferred" ? "deferred" : "sealed",
    summary: receipt?.seal.summary ?? null,
    source_type: receipt?.subject.kind ?? null,
    actors: receipt === null ? [] : [receipt.authority.actor_ref.uri],
    artifact_types: receipt === null ? [] : artifactTypes(receipt),
    verification: listed.verification,
  };
}

/**
 * The rows of a page's index lines, each receipt checked under the store's policy; `cache`
 * (a listing cache, receipts/verified-cache.ts) spares re-verifying unchanged files.
 */
export function listedRows(
  store: ReceiptStore,
  entries: readonly JournalEntry[],
  cache: ListedCache | undefined,
): HistoryRow[] {
  return entries.map((entry) =>
    historyRow(
      entry,
      checkListedReceipt({
        dir: store.dir,
        label: store.label,
        policy: store.policy,
        id: entry.receipt_id,
        ...(cache !== undefined ? { verified: cache } : {}),
      }),
    ),
  );
}

/** The listing cache of `store` under `runxDir`, or none without a workspace. */
export function listingCache(
  store: ReceiptStore,
  runxDir: string | undefined,
): ListingCache | undefined {
  return runxDir === undefined ? undefined : new ListingCache(runxDir, store.dir, store.policy);
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

/** Paused runs (needs_agent / needs_approval), newest first, with their pending requests. */
/** What the history reads of the run state store. */
type HistoryState = Pick<AsyncStateOperations, "findIndexedReceipts" | "listRuns">;

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

/**
 * The history of `store`, with harness flags and paused runs from `state` (both opened
 * lazily); `runxDir` holds the listing cache.
 */
export function storeHistory(
  store: () => ReceiptStore,
  state: () => Promise<HistoryState>,
  runxDir?: string,
): ReceiptHistory {
  return {
    label: () => store().label,
    signatureMode: () =>
      store().policy.mode === "production" ? "production" : "local-development",
    async receipts(limit, accept) {
      const opened = store();
      const rows = new Map<string, HistoryRow>();
      const cache = listingCache(opened, runxDir);
      const page = await opened.newestFirst({
        limit,
        includeChildren: false,
        accept: async (entries) => {
          const harness = new Set(
            (await (await state()).findIndexedReceipts(entries.map((e) => e.receipt_id)))
              .filter((entry) => entry.harness)
              .map((entry) => entry.receiptId),
          );
          // A receipt that no longer verifies is still history: the tools see it as invalid.
          const shown = entries.filter((entry) => !harness.has(entry.receipt_id));
          for (const row of listedRows(opened, shown, cache)) rows.set(row.id, row);
          return entries.map((entry) => {
            const row = rows.get(entry.receipt_id);
            return row !== undefined && accept(row);
          });
        },
      });
      cache?.save();
      return page.map((entry) => rows.get(entry.receipt_id) as HistoryRow);
    },
    pendingRuns: async () => pendingRuns(await state()),
  };
}
