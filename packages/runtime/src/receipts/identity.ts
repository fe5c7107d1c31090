/**
 * The three receipt hashes, each SHA-256 over the canonical JSON of the normalised receipt:
 *
 * - content id (`id`): minus id, signature, digest, metadata and lineage. Leaving lineage
 *   out lets children get their ids before a parent wires them in.
 * - body digest (`digest`, and what is signed): minus signature, digest and metadata.
 * - full digest: the whole receipt (harness `receipt_digest`, oracles, benchmarks).
 */
import { hashCanonical } from "./canonical.js";
import type { Receipt } from "./model.js";
import { decodeReceipt } from "./shape.js";

const ID_OMITS = ["id", "signature", "digest", "metadata", "lineage"] as const;
const BODY_OMITS = ["signature", "digest", "metadata"] as const;

/** A shallow copy of a normalised receipt without `omit`. */
function without(normalised: Receipt, omit: readonly string[]): Record<string, unknown> {
  const copy = { ...(normalised as unknown as Record<string, unknown>) };
  for (const key of omit) delete copy[key];
  return copy;
}

/** The content address `sha256:<hex>` that `id` must equal. */
export function receiptContentId(receipt: Receipt): string {
  return decodedContentId(decodeReceipt(receipt));
}

/** The body digest that `digest` must equal and that the signature covers. */
export function receiptBodyDigest(receipt: Receipt): string {
  return decodedBodyDigest(decodeReceipt(receipt));
}

// The two functions below take `decodeReceipt`'s own result (normalised; since then at most
// `id`, `digest` or `signature` assigned, which neither hash includes as such) and skip the
// second decode: sealing and storing a receipt decoded it several times over otherwise.

/** {@link receiptContentId} of a receipt that `decodeReceipt` returned. */
export function decodedContentId(decoded: Receipt): string {
  return hashCanonical(without(decoded, ID_OMITS));
}

/** {@link receiptBodyDigest} of a receipt that `decodeReceipt` returned. */
export function decodedBodyDigest(decoded: Receipt): string {
  return hashCanonical(without(decoded, BODY_OMITS));
}

/** The digest of the whole receipt, signature and metadata included. */
export function receiptFullDigest(receipt: Receipt): string {
  return hashCanonical(decodeReceipt(receipt));
}

/** The reference a parent uses to commit a child: `runx:receipt:<id>` located at its digest. */
export function childReceiptReference(child: Receipt): {
  type: "receipt";
  uri: string;
  locator: string;
} {
  return { type: "receipt", uri: `${RECEIPT_URI_PREFIX}${child.id}`, locator: child.digest };
}

/** URI prefix of a typed receipt reference. */
export const RECEIPT_URI_PREFIX = "runx:receipt:";

/** The receipt id named by a typed `runx:receipt:<id>` reference, or undefined. */
export function referencedReceiptId(reference: { type: string; uri: string }): string | undefined {
  if (reference.type !== "receipt" || !reference.uri.startsWith(RECEIPT_URI_PREFIX)) {
    return undefined;
  }
  const id = reference.uri.slice(RECEIPT_URI_PREFIX.length);
  return id === "" ? undefined : id;
}
