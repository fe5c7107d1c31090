/**
 * A run's receipt DAG (nodes, edges, per-node verification naming the failed check) and its
 * self-verifying evidence bundle (receipts + index + decisions), which `runx verify --bundle`
 * re-verifies offline.
 */
import { RuntimeError } from "../errors.js";
import {
  RECEIPT_STORE_INDEX_SCHEMA,
  referencedReceiptId,
  serializeReceipt,
} from "../receipts/index.js";
import type { Receipt, SignaturePolicy, TreeReport } from "../receipts/index.js";
import { receiptReport } from "../receipts/report.js";
import type { ReceiptReport } from "../receipts/report.js";
import { receiptFileName } from "../receipts/store-files.js";
import { verifyRunReceipts } from "../services/verify.js";
import type { ConsoleStore } from "../store/console-store.js";
import type { AsyncStateOperations } from "../store/port.js";
import { dagNode, dagPage, edgeDigest, loadReceipt, markDigestMismatch } from "./dag-page.js";
import type { DagEdge, DagNode, DagPage, Loaded } from "./dag-page.js";
import { decisionView } from "./runs.js";

export type { DagEdge, DagNode, DagPage } from "./dag-page.js";
import type { DecisionView } from "./runs.js";

/** `runx.evidence_bundle.v1`. */
export interface EvidenceBundle {
  schema: "runx.evidence_bundle.v1";
  run_id: string;
  root_receipt_id: string;
  generated_at: string;
  index: {
    schema: typeof RECEIPT_STORE_INDEX_SCHEMA;
    entries: Array<{ receipt_id: string; file_name: string; created_at: string }>;
  };
  /** Stored receipt documents keyed by file name. */
  receipts: Record<string, string>;
  /** The authenticated decisions (their signed form is in the receipts' authority terms). */
  approvals: DecisionView[];
  verification: TreeReport[];
}

const MAX_NODES = 10_000;

/** Receipts per DAG page unless the caller asks for fewer. */
export const DAG_PAGE_LIMIT = 200;

/** Evidence services. */
export function evidenceServices(deps: {
  receiptDir: string;
  /** Run state through the async port (SQLite or the shared PostgreSQL store). */
  state: () => Promise<Pick<AsyncStateOperations, "getRun" | "findIndexedReceipts">>;
  store: () => ConsoleStore;
  policy: () => SignaturePolicy;
  now: () => Date;
}) {
  const load = (id: string): Promise<Loaded> => loadReceipt(deps.receiptDir, id);

  /** Collects the run's receipts: the root, its children (transitively) and paused predecessors. */
  async function walk(runId: string) {
    const run = await (await deps.state()).getRun(runId);
    if (run.receiptId === null) {
      throw new RuntimeError("RECEIPT_NOT_FOUND", `run ${runId} has no receipt yet`, { runId });
    }
    const nodes = new Map<string, DagNode>();
    const receipts = new Map<string, Receipt>();
    const edges: DagEdge[] = [];
    const queue = [run.receiptId];
    const policy = deps.policy();
    while (queue.length > 0 && nodes.size < MAX_NODES) {
      const id = queue.shift() as string;
      if (nodes.has(id)) continue;
      const loaded = await load(id);
      nodes.set(id, dagNode(id, loaded, policy));
      const receipt = loaded.receipt;
      if (receipt === undefined) continue;
      receipts.set(id, receipt);
      for (const ref of receipt.lineage?.children ?? []) {
        const child = referencedReceiptId(ref);
        if (child === undefined) continue;
        edges.push({ from: id, to: child, kind: "child", digestMatches: null });
        queue.push(child);
      }
      const previous = receipt.lineage?.previous;
      const prevId = previous === undefined ? undefined : referencedReceiptId(previous);
      if (prevId !== undefined) {
        edges.push({ from: id, to: prevId, kind: "previous", digestMatches: null });
        queue.push(prevId);
      }
    }
    // Edge checks: the parent's locator must equal the child's body digest.
    for (const edge of edges) {
      edge.digestMatches = edgeDigest(
        receipts.get(edge.from),
        receipts.get(edge.to),
        edge.kind,
        edge.to,
      );
      const node = nodes.get(edge.to);
      if (node !== undefined) markDigestMismatch(node, edge);
    }
    return {
      run,
      root: run.receiptId,
      nodes: [...nodes.values()],
      edges,
      receipts,
      truncated: queue.length > 0,
    };
  }

  return {
    /**
     * One page of a run's receipt DAG (dag-page.ts): `limit` receipts from `cursor` in
     * breadth-first order and the edges into them, however many receipts the run has.
     */
    async page(runId: string, opts: { cursor?: string; limit?: number } = {}): Promise<DagPage> {
      const run = await (await deps.state()).getRun(runId);
      if (run.receiptId === null) {
        throw new RuntimeError("RECEIPT_NOT_FOUND", `run ${runId} has no receipt yet`, { runId });
      }
      return dagPage({
        receiptDir: deps.receiptDir,
        policy: deps.policy(),
        runId,
        rootId: run.receiptId,
        cursor: opts.cursor,
        limit: opts.limit ?? DAG_PAGE_LIMIT,
      });
    },

    /** The receipt DAG of a run with per-node verification. */
    async dag(runId: string) {
      const { root, nodes, edges, truncated } = await walk(runId);
      return { runId, rootReceiptId: root, nodes, edges, truncated };
    },

    /**
     * One receipt's report (`runx.receipt_report.v1`): signer, commitments and each check
     * by name, the links to its parent (found through the run the index files it under),
     * children and the paused receipt it continues resolved in the same store.
     */
    async report(receiptId: string): Promise<ReceiptReport> {
      const own = await load(receiptId);
      if (own.error === "missing") {
        throw new RuntimeError("RECEIPT_NOT_FOUND", `no receipt ${receiptId} in the store`, {
          receipt_id: receiptId,
        });
      }
      const [indexed] = await (await deps.state()).findIndexedReceipts([receiptId]);
      const parentIds =
        indexed?.runId === undefined || indexed.runId === null
          ? []
          : await walk(indexed.runId).then(
              ({ edges }) =>
                edges.filter((e) => e.kind === "child" && e.to === receiptId).map((e) => e.from),
              // A run without a root receipt yet (or gone from the state store) lists no parent.
              () => [],
            );
      const receipt = own.receipt;
      const linkedIds = new Set(parentIds);
      for (const ref of [
        ...(receipt?.lineage?.children ?? []),
        ...(receipt?.lineage?.previous === undefined ? [] : [receipt.lineage.previous]),
        ...(receipt?.lineage?.parent === undefined ? [] : [receipt.lineage.parent]),
      ]) {
        const id = referencedReceiptId(ref);
        if (id !== undefined) linkedIds.add(id);
      }
      const linked = new Map<string, Receipt | undefined>();
      for (const id of linkedIds) linked.set(id, (await load(id)).receipt);
      return receiptReport({
        id: receiptId,
        document: receipt !== undefined ? { receipt } : { error: own.error ?? "unreadable" },
        policy: deps.policy(),
        linked,
        parentIds: [...new Set(parentIds)],
        runId: indexed?.runId ?? null,
        now: deps.now(),
      });
    },

    /** The evidence bundle of a run (re-verifiable offline with `runx verify --bundle`). */
    async bundle(runId: string): Promise<EvidenceBundle> {
      const { run, root, receipts } = await walk(runId);
      const all = [...receipts.values()];
      const files: Record<string, string> = {};
      for (const receipt of all) files[receiptFileName(receipt.id)] = serializeReceipt(receipt);
      return {
        schema: "runx.evidence_bundle.v1",
        run_id: run.id,
        root_receipt_id: root,
        generated_at: deps.now().toISOString(),
        index: {
          schema: RECEIPT_STORE_INDEX_SCHEMA,
          entries: all
            .map((r) => ({
              receipt_id: r.id,
              file_name: receiptFileName(r.id),
              created_at: r.created_at,
            }))
            .sort((a, b) => (a.receipt_id < b.receipt_id ? -1 : 1)),
        },
        receipts: files,
        approvals: deps.store().listDecisions(run.id).map(decisionView),
        // Every tree the run's graph shows (a continuation's paused receipt roots its own).
        verification: verifyRunReceipts(all, root, deps.policy()).trees,
      };
    },
  };
}

/** The evidence services' surface. */
export type EvidenceServices = ReturnType<typeof evidenceServices>;
