/**
 * Verification services behind `runx verify`: one run's tree or one receipt (the whole
 * store and time ranges: verify-store.ts; an evidence bundle: verify-bundle.ts).
 */
import { receiptLookup } from "../store/receipt-lookup.js";
import { RuntimeError } from "../errors.js";
import type { AsyncStateOperations } from "../store/port.js";
import { receiptFileName } from "../receipts/store-files.js";
import {
  localDevelopmentPolicy,
  productionPolicy,
  receiptVerdict,
  ReceiptStore,
  referencedReceiptId,
  verifyNodeTrees,
  verifyReceiptProof,
} from "../receipts/index.js";
import type {
  NodeProof,
  Receipt,
  ReceiptVerifier,
  SignatureMode,
  SignaturePolicy,
  TreeNode,
  TreeReport,
  VerifyVerdict,
} from "../receipts/index.js";

/** `runx verify` tree-mode report, plus per-tree signature status. */
export interface StoreVerification {
  receipt_dir: string;
  signature_mode: SignatureMode;
  /** Distinct receipts the trees hold (a child shared by several trees counts once). */
  receipt_count: number;
  trees: Array<TreeReport & { status: "verified" | "unverified" | "invalid" }>;
  unreadable_files: Array<{ file_name: string; message: string }>;
  valid: boolean;
}

/**
 * The policy for verification: with a configured verifier, production (pseudo signatures
 * refused unless explicitly allowed); without one, local development.
 */
export function verificationPolicy(
  verifier: ReceiptVerifier | undefined,
  allowLocalDevelopment: boolean,
): SignaturePolicy {
  if (verifier === undefined) return localDevelopmentPolicy();
  return allowLocalDevelopment ? localDevelopmentPolicy(verifier) : productionPolicy(verifier);
}

/**
 * Each tree report with its status: invalid when any check failed; verified when its root
 * carries a real signature and the policy holds a key (the tree checks verified it);
 * unverified otherwise (local-development `sig:` receipts).
 */
export function withStatus<T extends { valid: boolean; root_receipt_id: string }>(
  reports: T[],
  receipts: readonly TreeNode[],
  policy: SignaturePolicy,
): Array<T & { status: "verified" | "unverified" | "invalid" }> {
  const byId = new Map<string, TreeNode>();
  for (const r of receipts) if (!byId.has(r.id)) byId.set(r.id, r);
  return reports.map((tree) => {
    const root = byId.get(tree.root_receipt_id);
    const real = root !== undefined && !root.signature.value.startsWith("sig:");
    const status = !tree.valid
      ? ("invalid" as const)
      : real && policy.verifier !== undefined
        ? ("verified" as const)
        : ("unverified" as const);
    return { ...tree, status };
  });
}

/**
 * Verifies one run's receipts: its sealed receipt and what it reaches through lineage
 * children and `lineage.previous` (verifyRunReceipts), reading only those files, whatever
 * the store's size. A linked receipt the store lacks is reported by the tree checks.
 */
export async function verifyRunStore(opts: {
  dir: string;
  label: string;
  policy: SignaturePolicy;
  state: Pick<AsyncStateOperations, "getRun" | "receiptRows">;
  runId: string;
}): Promise<StoreVerification> {
  const run = await opts.state.getRun(opts.runId);
  if (run.receiptId === null) {
    throw new RuntimeError("RECEIPT_NOT_FOUND", `run ${opts.runId} has no receipt yet`, {
      run_id: opts.runId,
    });
  }
  // On PostgreSQL the run's receipts are read from the database (written there by whichever
  // instance sealed them), else from this workspace's receipt files.
  const store = receiptLookup(
    new ReceiptStore({ dir: opts.dir, policy: opts.policy, label: opts.label }),
    opts.state.receiptRows,
  );
  const receipts: Receipt[] = [];
  const unreadable: Array<{ file_name: string; message: string }> = [];
  const seen = new Set<string>();
  const queue = [run.receiptId];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (seen.has(id)) continue;
    seen.add(id);
    let receipt: Receipt | undefined;
    try {
      receipt = await store.find(id);
    } catch (error) {
      const message = error instanceof RuntimeError ? error.message : "unreadable";
      unreadable.push({ file_name: receiptFileName(id), message });
      continue;
    }
    if (receipt === undefined) continue;
    receipts.push(receipt);
    queue.push(...linkedIds(receipt));
  }
  if (!receipts.some((r) => r.id === run.receiptId) && unreadable.length === 0) {
    throw new RuntimeError(
      "RECEIPT_NOT_FOUND",
      `no receipt ${run.receiptId} in store ${opts.label}`,
      {
        receipt_id: run.receiptId,
      },
    );
  }
  const trees = withStatus(
    verifyRunReceipts(receipts, run.receiptId, opts.policy).trees,
    receipts,
    opts.policy,
  );
  return {
    receipt_dir: opts.label,
    signature_mode: opts.policy.mode,
    receipt_count: receipts.length,
    trees,
    unreadable_files: unreadable,
    valid: unreadable.length === 0 && trees.every((t) => t.valid),
  };
}

function linkedIds(receipt: TreeNode): string[] {
  const refs = [...(receipt.lineage?.children ?? [])];
  if (receipt.lineage?.previous !== undefined) refs.push(receipt.lineage.previous);
  return refs.flatMap((ref) => {
    const id = referencedReceiptId(ref);
    return id === undefined ? [] : [id];
  });
}

/** A run's receipts verified as the run's evidence: every tree, and how they link. */
export interface RunReceiptsVerification {
  /** One report per tree: the root's, and one per paused receipt a continuation names. */
  trees: TreeReport[];
  /** Distinct receipts reached from the root (what the run's receipt graph shows). */
  receiptCount: number;
  /** Receipt ids of the set that the root reaches through neither children nor previous. */
  unlinked: string[];
}

/**
 * Verifies the receipts of one run. A resumed run's seal continues its paused receipt
 * (`lineage.previous`), and that receipt roots a tree of its own: the children of the
 * steps that ran before the pause. Checking only the root's tree would leave those
 * receipts unverified and uncounted, so every tree of the set is verified, each
 * continuation must carry its paused receipt's exact digest, and a receipt the root does
 * not reach is reported.
 */
export function verifyRunReceipts(
  receipts: readonly Receipt[],
  rootId: string,
  policy: SignaturePolicy,
  /** Each receipt's proof findings (default: verifyReceiptProof, decoding it again). */
  proof?: NodeProof<Receipt>,
): RunReceiptsVerification;
/** The same over slim tree nodes whose proof findings `proof` supplies. */
export function verifyRunReceipts<R extends TreeNode>(
  receipts: readonly R[],
  rootId: string,
  policy: SignaturePolicy,
  proof: NodeProof<R>,
): RunReceiptsVerification;
export function verifyRunReceipts(
  receipts: readonly TreeNode[],
  rootId: string,
  policy: SignaturePolicy,
  given?: NodeProof<never>,
): RunReceiptsVerification {
  // Without `proof` the nodes are whole receipts (the first signature); with it, of its type.
  const proof = (given ??
    ((receipt: Receipt) => verifyReceiptProof(receipt, policy))) as NodeProof<TreeNode>;
  const byId = new Map<string, TreeNode>();
  for (const receipt of receipts) if (!byId.has(receipt.id)) byId.set(receipt.id, receipt);
  const reached = new Set<string>();
  const queue = byId.has(rootId) ? [rootId] : [];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    if (reached.has(id)) continue;
    reached.add(id);
    const receipt = byId.get(id);
    if (receipt !== undefined) queue.push(...linkedIds(receipt).filter((next) => byId.has(next)));
  }
  const trees = verifyNodeTrees(receipts, { policy }, proof).map((tree) => {
    const findings = [...tree.findings];
    for (const receipt of byId.values()) {
      const previous = receipt.lineage?.previous;
      if (previous === undefined || referencedReceiptId(previous) !== tree.root_receipt_id)
        continue;
      const paused = byId.get(tree.root_receipt_id);
      if (paused !== undefined && previous.locator !== paused.digest) {
        findings.push({
          code: "child_receipt_digest_mismatch",
          path: `receipt[${receipt.id}].lineage.previous.locator`,
          message:
            "a continuation's previous ref must carry the exact digest of the paused receipt",
        });
      }
    }
    return { ...tree, findings, valid: tree.valid && findings.length === tree.findings.length };
  });
  return {
    trees,
    receiptCount: reached.size,
    unlinked: [...byId.keys()].filter((id) => !reached.has(id)).sort(),
  };
}

/** Verifies one receipt document and returns the `runx.verify_verdict.v1` verdict. */
export function verifyReceiptDocument(
  text: string,
  opts: { verifier: ReceiptVerifier | undefined; allowLocalDevelopment: boolean },
): VerifyVerdict {
  return receiptVerdict(text, {
    ...(opts.verifier !== undefined ? { verifier: opts.verifier } : {}),
    allowLocalDevelopment: opts.allowLocalDevelopment || opts.verifier === undefined,
  });
}
