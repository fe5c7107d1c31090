/** Verification services behind `runx verify`: tree mode over a store, or one receipt. */
import {
  localDevelopmentPolicy,
  productionPolicy,
  receiptVerdict,
  ReceiptStore,
  verifyTree,
} from "../receipts/index.js";
import type {
  ReceiptVerifier,
  SignatureMode,
  SignaturePolicy,
  TreeReport,
  VerifyVerdict,
} from "../receipts/index.js";

/** `runx verify` tree-mode report (spec §4.5), plus per-tree signature status. */
export interface StoreVerification {
  receipt_dir: string;
  signature_mode: SignatureMode;
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

/** Verifies every tree in a receipt store (optionally only the tree containing `rootId`). */
export async function verifyReceiptStore(opts: {
  dir: string;
  label: string;
  policy: SignaturePolicy;
  rootId?: string;
}): Promise<StoreVerification> {
  const store = new ReceiptStore({ dir: opts.dir, policy: opts.policy, label: opts.label });
  const { receipts, unreadable } = await store.scan();
  const reports = verifyTree(receipts, {
    policy: opts.policy,
    ...(opts.rootId !== undefined ? { rootId: opts.rootId } : {}),
  });
  const trees = reports.map((tree) => {
    const root = receipts.find((r) => r.id === tree.root_receipt_id);
    const realSignature = root !== undefined && !root.signature.value.startsWith("sig:");
    const status: "verified" | "unverified" | "invalid" = !tree.valid
      ? "invalid"
      : realSignature && opts.policy.verifier !== undefined
        ? "verified"
        : "unverified";
    return { ...tree, status };
  });
  return {
    receipt_dir: opts.label,
    signature_mode: opts.policy.mode,
    trees,
    unreadable_files: unreadable,
    valid: unreadable.length === 0 && trees.every((t) => t.valid),
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
