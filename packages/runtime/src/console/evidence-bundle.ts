/**
 * Writing a run's evidence bundle (`runx.evidence_bundle.v1`) as a stream of text, for runs
 * of any size. Two passes over the run's receipt files: the first walks the run's graph
 * breadth first from its root (lineage children and the paused receipt a continuation
 * resumes), keeping only each receipt's slim tree node and proof findings, which give the
 * index and the verification transcript; the second reads each receipt again as the
 * `receipts` member is written. The text is what JSON.stringify gives for the whole bundle,
 * member for member, so the bundle's format and every digest in it are the same as when it
 * was built in memory; memory holds the slim nodes, never the receipts.
 */
import { RuntimeError } from "../errors.js";
import {
  RECEIPT_STORE_INDEX_SCHEMA,
  referencedReceiptId,
  serializeReceipt,
  verifyReceiptProof,
} from "../receipts/index.js";
import type { SignaturePolicy, TreeReport } from "../receipts/index.js";
import { receiptFileName } from "../receipts/store-files.js";
import { bytesDigest, nodeOf } from "../receipts/stored-receipt.js";
import type { CheckedNode } from "../receipts/stored-receipt.js";
import type { ReceiptFinding } from "../receipts/verify.js";
import { verifyRunReceipts } from "../services/verify.js";
import { loadReceipt } from "./dag-page.js";
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

/** Text handed out at a time (several receipts' worth). */
const PIECE_CHARS = 256 * 1024;

/** What writing a run's bundle needs. */
export interface BundleSource {
  receiptDir: string;
  runId: string;
  rootId: string;
  policy: SignaturePolicy;
  generatedAt: string;
  /** The run's decisions (read once the receipts are written). */
  approvals: () => DecisionView[];
}

function linkedIds(node: CheckedNode): string[] {
  const refs = [...(node.lineage?.children ?? [])];
  if (node.lineage?.previous !== undefined) refs.push(node.lineage.previous);
  return refs.flatMap((ref) => {
    const id = referencedReceiptId(ref);
    return id === undefined ? [] : [id];
  });
}

/**
 * The first pass: the run's readable receipts in breadth-first order, as slim nodes with
 * their proof findings. A receipt missing from the store or unreadable is left out (the
 * bundle's tree checks then report it as missing).
 */
async function walkRun(
  src: BundleSource,
): Promise<{ nodes: CheckedNode[]; proofOf: Map<CheckedNode, readonly ReceiptFinding[]> }> {
  const nodes: CheckedNode[] = [];
  const proofOf = new Map<CheckedNode, readonly ReceiptFinding[]>();
  const seen = new Set([src.rootId]);
  for (let i = 0, queue = [src.rootId]; i < queue.length; i++) {
    const id = queue[i] as string;
    const { receipt } = await loadReceipt(src.receiptDir, id);
    if (receipt === undefined) continue;
    const node = nodeOf(receipt, bytesDigest(Buffer.from(serializeReceipt(receipt), "utf8")));
    nodes.push(node);
    // loadReceipt returned decodeReceipt's own result: the proof skips a decode.
    proofOf.set(node, verifyReceiptProof(receipt, src.policy, true));
    for (const next of linkedIds(node)) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return { nodes, proofOf };
}

/** The bundle of the run `src` names, as JSON text in pieces. */
export async function* evidenceBundleText(src: BundleSource): AsyncGenerator<string> {
  const { nodes, proofOf } = await walkRun(src);
  const verification = verifyRunReceipts(
    nodes,
    src.rootId,
    src.policy,
    (node) => proofOf.get(node) ?? [],
  ).trees;
  const entries = nodes
    .map((n) => ({ receipt_id: n.id, file_name: receiptFileName(n.id), created_at: n.created_at }))
    .sort((a, b) => (a.receipt_id < b.receipt_id ? -1 : 1));
  let piece =
    `{"schema":"runx.evidence_bundle.v1","run_id":${JSON.stringify(src.runId)}` +
    `,"root_receipt_id":${JSON.stringify(src.rootId)}` +
    `,"generated_at":${JSON.stringify(src.generatedAt)}` +
    `,"index":{"schema":${JSON.stringify(RECEIPT_STORE_INDEX_SCHEMA)},"entries":[`;
  for (const [i, entry] of entries.entries()) {
    piece += `${i === 0 ? "" : ","}${JSON.stringify(entry)}`;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = "";
    }
  }
  piece += `]},"receipts":{`;
  let first = true;
  for (const node of nodes) {
    const { receipt } = await loadReceipt(src.receiptDir, node.id);
    // Gone or changed since the first pass: left out, and the index's entry for it then
    // makes the bundle fail verification, as it should.
    if (receipt === undefined || receipt.id !== node.id) continue;
    const name = receiptFileName(node.id);
    piece += `${first ? "" : ","}${JSON.stringify(name)}:${JSON.stringify(serializeReceipt(receipt))}`;
    first = false;
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = "";
    }
  }
  piece += `},"approvals":${JSON.stringify(src.approvals())}`;
  piece += `,"verification":${JSON.stringify(verification)}}`;
  yield piece;
}

/** The bundle of a run whose root receipt is `rootId`: RECEIPT_NOT_FOUND without one. */
export function bundleRoot(runId: string, rootId: string | null): string {
  if (rootId === null) {
    throw new RuntimeError("RECEIPT_NOT_FOUND", `run ${runId} has no receipt yet`, { runId });
  }
  return rootId;
}
