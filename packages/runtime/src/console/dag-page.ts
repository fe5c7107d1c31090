/**
 * One page of a run's receipt graph, for runs too large to show at once (tens of thousands
 * of receipts). The order is the graph's breadth-first order from the run's root receipt,
 * computed from the receipt store's journal (index.jsonl lines carry each receipt's
 * children and the paused receipt it continues) without opening a receipt file; only the
 * page's receipts, and the parents whose commitments its incoming edges check, are read
 * and verified. The cursor is a position in that order.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import {
  parseReceiptDocument,
  receiptBodyDigest,
  receiptStatus,
  ReceiptStore,
  referencedReceiptId,
  verifyReceiptProof,
} from "../receipts/index.js";
import type { Receipt, ReceiptStatus, SignaturePolicy } from "../receipts/index.js";
import { receiptFileName } from "../receipts/store-files.js";

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

/** A page of a run's receipt graph: its nodes in order and the edges into them. */
export interface DagPage {
  runId: string;
  rootReceiptId: string;
  /** Receipts the run's graph holds in all. */
  total: number;
  nodes: DagNode[];
  edges: DagEdge[];
  /** Where the next page starts, or null on the last page. */
  nextCursor: string | null;
}

/** A receipt read from the store, or why it could not be. */
export interface Loaded {
  receipt?: Receipt;
  error?: string;
}

/** Reads one receipt by id from `receiptDir` (shape-checked, not proof-checked). */
export async function loadReceipt(receiptDir: string, id: string): Promise<Loaded> {
  let text: string;
  try {
    text = await readFile(join(receiptDir, receiptFileName(id)), "utf8");
  } catch {
    return { error: "missing" };
  }
  const parsed = parseReceiptDocument(text);
  return "receipt" in parsed ? { receipt: parsed.receipt } : { error: parsed.error };
}

function approvalsOf(receipt: Receipt): DagNode["approvals"] {
  return receipt.authority.terms.flatMap((term) =>
    term.approvals.map((a) => ({
      approver: a.approved_by_ref?.label ?? a.approved_by_ref?.uri ?? "unknown",
      decision: a.approval_ref.label?.split(":")[0] ?? "unknown",
      at: a.approved_at ?? null,
    })),
  );
}

/** The DAG node of the receipt filed under `id`, verified under `policy`. */
export function dagNode(id: string, loaded: Loaded, policy: SignaturePolicy): DagNode {
  const { receipt, error } = loaded;
  if (receipt === undefined) {
    const code = error === "missing" ? "child_receipt_missing" : "receipt_unreadable";
    return {
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
    };
  }
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
  return {
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
  };
}

/** Marks `node` invalid when the edge into it found a different committed body. */
export function markDigestMismatch(node: DagNode, edge: DagEdge): void {
  if (edge.digestMatches !== false) return;
  node.status = "invalid";
  node.failedCheck ??= "child_receipt_digest_mismatch";
  node.findings.push({
    code: "child_receipt_digest_mismatch",
    path: "lineage",
    message: `receipt ${edge.from} committed a different body for this receipt`,
  });
}

/** Whether `parent`'s ref of kind `kind` to `child` commits `child`'s body. */
export function edgeDigest(
  parent: Receipt | undefined,
  child: Receipt | undefined,
  kind: DagEdge["kind"],
  childId: string,
): boolean | null {
  const ref =
    kind === "child"
      ? parent?.lineage?.children.find((c) => referencedReceiptId(c) === childId)
      : parent?.lineage?.previous;
  return child === undefined || ref?.locator === undefined
    ? null
    : ref.locator === receiptBodyDigest(child);
}

interface Links {
  /** Outgoing links of each receipt, in the order its graph lists them. */
  out: Map<string, Array<{ to: string; kind: DagEdge["kind"] }>>;
}

async function journalLinks(receiptDir: string, policy: SignaturePolicy): Promise<Links> {
  const store = new ReceiptStore({ dir: receiptDir, policy });
  // A missing or damaged journal, or one with lines written before lines named the paused
  // receipt a continuation resumes, is rebuilt from the files first (once: the rebuilt
  // journal's lines are all current).
  const journal = (await store.upgradeJournal()) ?? [];
  const out: Links["out"] = new Map();
  for (const entry of journal) {
    const links: Array<{ to: string; kind: DagEdge["kind"] }> = (entry.children ?? []).map(
      (to) => ({ to, kind: "child" }),
    );
    if (entry.previous !== undefined) links.push({ to: entry.previous, kind: "previous" });
    if (!out.has(entry.receipt_id)) out.set(entry.receipt_id, links);
  }
  return { out };
}

/**
 * The page of the run whose root is `rootId` starting at `cursor` (a position, "0" first),
 * at most `limit` receipts.
 */
export async function dagPage(opts: {
  receiptDir: string;
  policy: SignaturePolicy;
  runId: string;
  rootId: string;
  cursor: string | undefined;
  limit: number;
}): Promise<DagPage> {
  const start = opts.cursor === undefined ? 0 : Number(opts.cursor);
  if (!Number.isSafeInteger(start) || start < 0) {
    throw new RuntimeError("INPUT_INVALID", "the page cursor is not a position", {
      path: "cursor",
    });
  }
  const { out } = await journalLinks(opts.receiptDir, opts.policy);
  // Breadth-first over ids only; `into` keeps each receipt's incoming links.
  const order: string[] = [];
  const into = new Map<string, Array<{ from: string; kind: DagEdge["kind"] }>>();
  const seen = new Set([opts.rootId]);
  for (let i = 0, queue = [opts.rootId]; i < queue.length; i++) {
    const id = queue[i] as string;
    order.push(id);
    for (const link of out.get(id) ?? []) {
      const list = into.get(link.to) ?? [];
      list.push({ from: id, kind: link.kind });
      into.set(link.to, list);
      if (!seen.has(link.to)) {
        seen.add(link.to);
        queue.push(link.to);
      }
    }
  }
  const ids = order.slice(start, start + opts.limit);
  const loaded = new Map<string, Loaded>();
  const load = async (id: string): Promise<Loaded> => {
    const known = loaded.get(id);
    if (known !== undefined) return known;
    const fresh = await loadReceipt(opts.receiptDir, id);
    loaded.set(id, fresh);
    return fresh;
  };
  const nodes: DagNode[] = [];
  const edges: DagEdge[] = [];
  for (const id of ids) {
    const own = await load(id);
    const node = dagNode(id, own, opts.policy);
    for (const link of into.get(id) ?? []) {
      const parent = (await load(link.from)).receipt;
      const edge: DagEdge = {
        from: link.from,
        to: id,
        kind: link.kind,
        digestMatches: edgeDigest(parent, own.receipt, link.kind, id),
      };
      markDigestMismatch(node, edge);
      edges.push(edge);
    }
    nodes.push(node);
  }
  const next = start + ids.length;
  return {
    runId: opts.runId,
    rootReceiptId: opts.rootId,
    total: order.length,
    nodes,
    edges,
    nextCursor: next < order.length ? String(next) : null,
  };
}
