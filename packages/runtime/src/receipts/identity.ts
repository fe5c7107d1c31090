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

function without(receipt: Receipt, omit: readonly string[]): Record<string, unknown> {
  const normalised = decodeReceipt(receipt) as unknown as Record<string, unknown>;
  for (const key of omit) delete normalised[key];
  return normalised;
}

/** The content address `sha256:<hex>` that `id` must equal. */
export function receiptContentId(receipt: Receipt): string {
  return hashCanonical(without(receipt, ["id", "signature", "digest", "metadata", "lineage"]));
}

/** The body digest that `digest` must equal and that the signature covers. */
export function receiptBodyDigest(receipt: Receipt): string {
  return hashCanonical(without(receipt, ["signature", "digest", "metadata"]));
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
