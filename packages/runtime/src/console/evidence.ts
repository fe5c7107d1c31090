/**
 * A run's receipt DAG (nodes, edges, per-node verification naming the failed check) and its
 * self-verifying evidence bundle (receipts + index + decisions), which `runx verify --bundle`
 * re-verifies offline.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import {
  RECEIPT_STORE_INDEX_SCHEMA,
  parseReceiptDocument,
  receiptBodyDigest,
  receiptStatus,
  referencedReceiptId,
  serializeReceipt,
  verifyReceiptProof,
} from "../receipts/index.js";
import type { Receipt, ReceiptStatus, SignaturePolicy, TreeReport } from "../receipts/index.js";
import { receiptReport } from "../receipts/report.js";
import type { ReceiptReport } from "../receipts/report.js";
import { receiptFileName } from "../receipts/store-files.js";
import { verifyRunReceipts } from "../services/verify.js";
import type { ConsoleStore } from "../store/console-store.js";
import type { StateStore } from "../store/types.js";
import { decisionView } from "./runs.js";
import type { DecisionView } from "./runs.js";

/** One receipt in the DAG. */
export interface DagNode {
  id: string;
  name: string;
  kind: string;
  disposition: string | null;
  createdAt: string | null;
  issuer: string | null;
  status: ReceiptStatus | "missing";
  /** The first failed check (finding code), null when every check passed. */
  failedCheck: string | null;
  findings: Array<{ code: string; path: string; message: string }>;
  /** Host-attested human decisions signed into this receipt. */
  approvals: Array<{ approver: string; decision: string; at: string | null }>;
}

/** A parent → child (or continuation → paused) link. */
export interface DagEdge {
  from: string;
  to: string;
  kind: "child" | "previous";
  /** The parent committed this exact body (its locator equals the child's digest). */
  digestMatches: boolean | null;
}

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

function approvalsOf(receipt: Receipt): DagNode["approvals"] {
  return receipt.authority.terms.flatMap((term) =>
    term.approvals.map((a) => ({
      approver: a.approved_by_ref?.label ?? a.approved_by_ref?.uri ?? "unknown",
      decision: a.approval_ref.label?.split(":")[0] ?? "unknown",
      at: a.approved_at ?? null,
    })),
  );
}

/** Evidence services. */
export function evidenceServices(deps: {
  receiptDir: string;
  state: () => StateStore;
  store: () => ConsoleStore;
  policy: () => SignaturePolicy;
  now: () => Date;
}) {
  const load = async (id: string): Promise<{ receipt?: Receipt; error?: string }> => {
    let text: string;
    try {
      text = await readFile(join(deps.receiptDir, receiptFileName(id)), "utf8");
    } catch {
      return { error: "missing" };
    }
    const parsed = parseReceiptDocument(text);
    return "receipt" in parsed ? { receipt: parsed.receipt } : { error: parsed.error };
  };

  /** Collects the run's receipts: the root, its children (transitively) and paused predecessors. */
  async function walk(runId: string) {
    const run = deps.state().getRun(runId);
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
      const { receipt, error } = await load(id);
      if (receipt === undefined) {
        const code = error === "missing" ? "child_receipt_missing" : "receipt_unreadable";
        nodes.set(id, {
          id,
          name: id,
          kind: "unknown",
          disposition: null,
          createdAt: null,
          issuer: null,
          status: error === "missing" ? "missing" : "invalid",
          failedCheck: code,
          findings: [{ code, path: "$", message: error ?? "missing" }],
          approvals: [],
        });
        continue;
      }
      receipts.set(id, receipt);
      const findings = receipt.id === id ? verifyReceiptProof(receipt, policy) : [];
      if (receipt.id !== id) {
        findings.unshift({
          code: "seal_digest_mismatch",
          path: "id",
          message: "the stored receipt's id differs from the id it is filed under",
        });
      }
      const status = receipt.id === id ? receiptStatus(receipt, policy) : "invalid";
      const hard = findings.filter((f) => f.code !== "signature_verifier_missing");
      nodes.set(id, {
        id,
        name: receipt.subject.ref.uri.replace(/^hrn_/, ""),
        kind: receipt.subject.kind,
        disposition: receipt.seal.disposition,
        createdAt: receipt.created_at,
        issuer: `${receipt.issuer.type}:${receipt.issuer.kid}`,
        status,
        failedCheck: status === "invalid" ? (hard[0]?.code ?? findings[0]?.code ?? null) : null,
        findings,
        approvals: approvalsOf(receipt),
      });
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
      const parent = receipts.get(edge.from);
      const child = receipts.get(edge.to);
      const ref =
        edge.kind === "child"
          ? parent?.lineage?.children.find((c) => referencedReceiptId(c) === edge.to)
          : parent?.lineage?.previous;
      edge.digestMatches =
        child === undefined || ref?.locator === undefined
          ? null
          : ref.locator === receiptBodyDigest(child);
      if (edge.digestMatches === false) {
        const node = nodes.get(edge.to);
        if (node !== undefined) {
          node.status = "invalid";
          node.failedCheck ??= "child_receipt_digest_mismatch";
          node.findings.push({
            code: "child_receipt_digest_mismatch",
            path: "lineage",
            message: `receipt ${edge.from} committed a different body for this receipt`,
          });
        }
      }
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
      const [indexed] = deps.state().findIndexedReceipts([receiptId]);
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
