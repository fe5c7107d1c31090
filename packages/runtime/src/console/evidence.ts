/**
 * A run's receipt DAG (nodes, edges, per-node verification naming the failed check) and its
 * self-verifying evidence bundle (receipts + index + decisions), which `runx verify --bundle`
 * re-verifies offline.
 */
import { RuntimeError } from "../errors.js";
import { ReceiptStore, referencedReceiptId } from "../receipts/index.js";
import type { Receipt, SignaturePolicy } from "../receipts/index.js";
import { receiptReport } from "../receipts/report.js";
import type { ReceiptReport } from "../receipts/report.js";
import type { ConsoleStore } from "../store/console-store.js";
import type { AsyncStateOperations } from "../store/port.js";
import { bundleRoot, evidenceBundleText } from "./evidence-bundle.js";
import type { EvidenceBundle } from "./evidence-bundle.js";
import { dagNode, dagPage, edgeDigest, loadReceipt, markDigestMismatch } from "./dag-page.js";
import type { DagEdge, DagNode, DagPage, Loaded } from "./dag-page.js";
import { decisionView } from "./runs.js";

export type { DagEdge, DagNode, DagPage } from "./dag-page.js";

export type { EvidenceBundle } from "./evidence-bundle.js";

/** Receipts the whole-graph view (`dag`) shows at most; larger runs page (`page`). */
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

  async function* bundleText(runId: string): AsyncGenerator<string> {
    // The run is looked up before the first piece: an unknown run is refused before any byte.
    const run = await (await deps.state()).getRun(runId);
    yield* evidenceBundleText({
      receiptDir: deps.receiptDir,
      runId: run.id,
      rootId: bundleRoot(runId, run.receiptId),
      policy: deps.policy(),
      generatedAt: deps.now().toISOString(),
      approvals: () => deps.store().listDecisions(run.id).map(decisionView),
    });
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
     * by name, the links to its parents (the receipts the store's journal lists it under),
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
      // The receipts whose journal lines list it as a child: read from the journal, not
      // from the run's receipt files, so a receipt deep in a run of any size finds them.
      const journal =
        (await new ReceiptStore({
          dir: deps.receiptDir,
          policy: deps.policy(),
        }).upgradeJournal()) ?? [];
      const parentIds = journal
        .filter((e) => e.children?.includes(receiptId) === true)
        .map((e) => e.receipt_id);
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

    /**
     * The evidence bundle of a run as JSON text in pieces (evidence-bundle.ts), however many
     * receipts it has; re-verifiable offline with `runx verify --bundle`.
     */
    bundleText,

    /** The evidence bundle of a run as one value (the API's query; `bundleText` streams). */
    async bundle(runId: string): Promise<EvidenceBundle> {
      let text = "";
      for await (const piece of bundleText(runId)) text += piece;
      return JSON.parse(text) as EvidenceBundle;
    },
  };
}

/** The evidence services' surface. */
export type EvidenceServices = ReturnType<typeof evidenceServices>;
