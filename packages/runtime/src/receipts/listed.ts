/**
 * The check a receipt listing (`runx history`, `receipt.query`, `runx history --detail`)
 * makes of one receipt its index names: read the file, decode it, and verify it under the
 * store's policy, so a receipt whose bytes no longer verify is listed as `invalid` with the
 * reason instead of being left out (docs/receipts.md, "Receipts that no longer verify").
 * A file that is missing or does not decode at all is reported the same way, without a
 * receipt. `verified` (verified-cache.ts `ListingCache`) holds the digests of file bytes an
 * earlier listing found clean under this policy: those bytes are decoded but not verified
 * again, and a changed file has other bytes and is checked in full.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RuntimeError } from "../errors.js";
import type { Receipt } from "./model.js";
import { errnoCode, receiptFileNames } from "./store-files.js";
import { bytesDigest, parseStoredReceipt } from "./stored-receipt.js";
import { isContentAddressed, verifyReceiptProof } from "./verify.js";
import type { ReceiptFinding, ReceiptStatus } from "./verify.js";
import { isPseudoSignature } from "./verifier.js";
import type { SignaturePolicy } from "./verifier.js";

/** A listed receipt's verification: `reason` is set exactly when the status is `invalid`. */
export interface ListedVerification {
  status: ReceiptStatus;
  reason?: string;
}

/** What a listing knows of one receipt: the decoded receipt, or null when it has none. */
export type ListedReceipt =
  | {
      receipt: Receipt;
      verification: ListedVerification;
      /** The failed per-receipt checks (empty unless invalid by proof). */
      findings: ReceiptFinding[];
    }
  | { receipt: null; verification: { status: "invalid"; reason: string }; findings: [] };

/** The digests of file bytes a listing found clean, and a way to record more. */
export interface ListedCache {
  has(key: string): boolean;
  add(key: string): void;
}

function unreadable(reason: string): ListedReceipt {
  return { receipt: null, verification: { status: "invalid", reason }, findings: [] };
}

/** The status of a receipt whose proof is clean (or lacks only a verifier) under `policy`. */
function cleanStatus(receipt: Receipt, policy: SignaturePolicy): ReceiptStatus {
  return policy.verifier !== undefined && !isPseudoSignature(receipt.signature.value)
    ? "verified"
    : "unverified";
}

/**
 * The verification of a decoded receipt under `policy`, with the reason when it fails: the
 * first failed proof check (an edited body fails its digest first), else a content address
 * that is not the receipt's own.
 */
export function listedVerification(
  receipt: Receipt,
  policy: SignaturePolicy,
): { verification: ListedVerification; findings: ReceiptFinding[] } {
  const failed = verifyReceiptProof(receipt, policy).filter(
    (f) => f.code !== "signature_verifier_missing",
  );
  const first = failed[0];
  if (first !== undefined) {
    const reason = `${first.message} (${first.code} at ${first.path})`;
    return { verification: { status: "invalid", reason }, findings: failed };
  }
  if (!isContentAddressed(receipt)) {
    const reason = "receipt id is not its content address";
    return { verification: { status: "invalid", reason }, findings: [] };
  }
  return { verification: { status: cleanStatus(receipt, policy) }, findings: [] };
}

/** Reads and checks the receipt `id` of the store in `dir` (named `label` in messages). */
export function checkListedReceipt(opts: {
  dir: string;
  label: string;
  policy: SignaturePolicy;
  id: string;
  verified?: ListedCache;
}): ListedReceipt {
  let bytes: Buffer | undefined;
  let names: string[];
  try {
    names = receiptFileNames(opts.id);
  } catch {
    return unreadable("receipt id is not a sha256 content address");
  }
  for (const name of names) {
    try {
      bytes = readFileSync(join(opts.dir, name));
      break;
    } catch (error) {
      if (errnoCode(error) !== "ENOENT") return unreadable("receipt file cannot be read");
    }
  }
  if (bytes === undefined) return unreadable("receipt file is missing from the store");
  let receipt: Receipt;
  try {
    receipt = parseStoredReceipt(opts.label, opts.id, bytes.toString("utf8"));
  } catch (error) {
    const message = error instanceof RuntimeError ? error.message : "receipt is unreadable";
    return unreadable(message.replace(` in store ${opts.label}`, ""));
  }
  const key = bytesDigest(bytes);
  if (opts.verified?.has(key) === true) {
    return { receipt, verification: { status: cleanStatus(receipt, opts.policy) }, findings: [] };
  }
  const { verification, findings } = listedVerification(receipt, opts.policy);
  if (verification.status !== "invalid") opts.verified?.add(key);
  return { receipt, verification, findings };
}
