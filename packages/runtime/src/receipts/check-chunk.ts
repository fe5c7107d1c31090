/**
 * One chunk of a store's receipt files read and checked, what the verification pool
 * (verify-pool.ts) runs in process and in each worker (verify-worker.ts). A policy crosses
 * into a worker as its description: mode and the Ed25519 key ring.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { errnoCode, receiptIdFromFileName, storeIoError } from "./store-files.js";
import type { StoredFile } from "./store.js";
import { bytesDigest, checkReceiptFile, nodeOf } from "./stored-receipt.js";
import { parseReceiptDocument } from "./verdict.js";
import { verifyReceiptProof } from "./verify.js";
import type { FileCheck } from "./stored-receipt.js";
import { ed25519Verifier, localDevelopmentPolicy, productionPolicy } from "./verifier.js";
import type { SignatureMode, SignaturePolicy, VerificationKey } from "./verifier.js";

/** A signature policy that can be sent to a worker. */
export interface PolicyDescription {
  mode: SignatureMode;
  /** Absent: no verifier. */
  keys?: VerificationKey[];
}

/** The description of `policy`, or undefined when its verifier is not an Ed25519 key ring. */
export function describePolicy(policy: SignaturePolicy): PolicyDescription | undefined {
  if (policy.verifier === undefined) return { mode: policy.mode };
  const keys = policy.verifier.keys;
  return keys === undefined ? undefined : { mode: policy.mode, keys: [...keys] };
}

/** The policy a description stands for. */
export function policyFromDescription(description: PolicyDescription): SignaturePolicy {
  const verifier = description.keys === undefined ? undefined : ed25519Verifier(description.keys);
  return description.mode === "production"
    ? productionPolicy(verifier)
    : localDevelopmentPolicy(verifier);
}

/** What a chunk check needs besides its files. */
export interface ChunkContext {
  dir: string;
  label: string;
  policy: SignaturePolicy;
  /** Digests of file bytes an earlier run found clean under this policy. */
  verified: ReadonlySet<string>;
}

/** Reads and checks `files` in order. */
export function checkChunk(ctx: ChunkContext, files: readonly StoredFile[]): FileCheck[] {
  return files.map((file) => {
    let bytes: Buffer;
    try {
      bytes = readFileSync(join(ctx.dir, file.name));
    } catch (error) {
      const message =
        errnoCode(error) === "ENOENT"
          ? `receipt is missing in store ${ctx.label}`
          : storeIoError(ctx.label, "read", error).message;
      return { file_name: file.name, unreadable: message };
    }
    return checkReceiptFile({
      label: ctx.label,
      fileName: file.name,
      fileId: file.id,
      bytes,
      policy: ctx.policy,
      verified: ctx.verified,
    });
  });
}

/** One receipt document of an evidence bundle, under the file name the bundle files it. */
export interface BundledReceipt {
  file_name: string;
  text: string;
}

/**
 * Checks bundled receipt documents in order: decoded (the nesting bound and the shape), filed
 * under their own id, and proof-checked under `policy`.
 */
export function checkBundledChunk(
  policy: SignaturePolicy,
  entries: readonly BundledReceipt[],
): FileCheck[] {
  return entries.map(({ file_name, text }) => {
    const parsed = parseReceiptDocument(text);
    if ("error" in parsed) return { file_name, unreadable: parsed.error };
    if (receiptIdFromFileName(file_name) !== parsed.receipt.id) {
      return { file_name, unreadable: "file name does not match the receipt id" };
    }
    // parseReceiptDocument returned decodeReceipt's own result: the proof skips a decode.
    const findings = verifyReceiptProof(parsed.receipt, policy, true);
    const key = bytesDigest(Buffer.from(text, "utf8"));
    return { file_name, node: nodeOf(parsed.receipt, key), findings, cached: false };
  });
}
