/**
 * Sealing (spec B.3): placeholder signature, issuer, content id, body digest, signature.
 * Production signatures are verified before the receipt is returned, and a receipt that
 * commits children is sealed only when its whole tree verifies.
 */
import { RuntimeError } from "../errors.js";
import { RECEIPT_CANONICALIZATION } from "./canonical.js";
import { decodedBodyDigest, decodedContentId } from "./identity.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";
import { productionIssuerProblem } from "./signer.js";
import type { ReceiptSigner } from "./signer.js";
import { verifyReceiptTree } from "./tree.js";
import { isPseudoSignature, localDevelopmentPolicy, productionPolicy } from "./verifier.js";
import type { ReceiptVerifier } from "./verifier.js";

/** A receipt before sealing: the envelope members are filled in by `sealReceipt`. */
export type UnsealedReceipt = Omit<Receipt, "id" | "issuer" | "signature" | "digest"> &
  Partial<Pick<Receipt, "id" | "issuer" | "signature" | "digest">>;

/** Options of `sealReceipt`. */
export interface SealOptions {
  /** Verifies production signatures right after signing; defaults to the signer's own. */
  verifier?: ReceiptVerifier;
  /** Child (and deeper) receipts the new receipt commits; the tree must verify. */
  children?: readonly Receipt[];
}

/** Signature placeholder while the body is hashed. */
export const PENDING_SIGNATURE = "sig:pending";

function sealError(message: string, details: Record<string, unknown> = {}): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", message, details);
}

/** Seals `unsealed` with `signer`; throws RECEIPT_INVALID when any step fails. */
export function sealReceipt(
  unsealed: UnsealedReceipt,
  signer: ReceiptSigner,
  options: SealOptions = {},
): Receipt {
  const production = signer.mode === "production";
  const verifier = options.verifier ?? signer.verifier;
  if (production) {
    const problem = productionIssuerProblem(signer.issuer);
    if (problem !== undefined) throw sealError(problem);
    if (verifier === undefined) throw sealError("production receipt signing requires a verifier");
  }
  const draft: Receipt = decodeReceipt({
    ...unsealed,
    id: "sha256:pending",
    canonicalization: unsealed.canonicalization || RECEIPT_CANONICALIZATION,
    issuer: { ...signer.issuer },
    signature: { alg: "Ed25519", value: PENDING_SIGNATURE },
    digest: "sha256:pending",
  });
  draft.id = decodedContentId(draft);
  const digest = decodedBodyDigest(draft);
  draft.digest = digest;
  const value = signer.sign(digest);
  draft.signature = { alg: "Ed25519", value };
  if (production && verifier !== undefined) {
    if (isPseudoSignature(value)) {
      throw sealError("production receipt signer returned a local pseudo signature");
    }
    const failure = verifier.verify(draft.issuer, draft.signature, digest);
    if (failure !== undefined) {
      throw sealError(`production receipt signature did not verify: ${failure}`, { failure });
    }
  } else if (value !== `sig:${digest}`) {
    throw sealError("local development signatures must be sig:<body digest>");
  }
  if (options.children !== undefined && options.children.length > 0) {
    const policy = production ? productionPolicy(verifier) : localDevelopmentPolicy(verifier);
    const report = verifyReceiptTree(draft, options.children, { policy });
    if (!report.valid) {
      throw sealError("receipt tree does not verify", { findings: report.findings });
    }
  }
  return draft;
}
