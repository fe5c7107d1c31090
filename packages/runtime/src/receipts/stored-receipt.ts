/**
 * Reading one receipt file of a store: the shape checks every read makes (nesting bound,
 * JSON, schema, decode, id equal to the file name), and the per-file check `runx verify`
 * runs, in process or in a verification worker (verify-worker.ts), whose result is a slim
 * tree node plus its proof findings instead of the whole receipt.
 */
import { createHash } from "node:crypto";
import { RuntimeError } from "../errors.js";
import { RECEIPT_MAX_NESTING, scanJsonNesting } from "../parser/nesting.js";
import type { Lineage, Receipt } from "./model.js";
import { RECEIPT_SCHEMA } from "./model.js";
import { decodeReceipt } from "./shape.js";
import type { TreeNode } from "./tree.js";
import { verifyReceiptProof } from "./verify.js";
import type { ReceiptFinding } from "./verify.js";
import type { SignaturePolicy } from "./verifier.js";

function invalid(label: string, message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", `${message} in store ${label}`, {
    store: label,
    ...details,
  });
}

/**
 * Decodes a stored receipt file without proof checks: RECEIPT_INVALID naming the store by
 * `label` when it nests too deep, is not JSON, has another schema or shape, or holds a
 * receipt whose id is not `fileId`.
 */
export function parseStoredReceipt(label: string, fileId: string, text: string): Receipt {
  // Bounded before the decoder and the verifier (both recursive) walk a file from disk.
  if (scanJsonNesting(text, RECEIPT_MAX_NESTING) !== undefined)
    throw invalid(label, `receipt nests deeper than ${RECEIPT_MAX_NESTING} levels`, {
      receipt_id: fileId,
    });
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw invalid(label, "receipt JSON is malformed", { receipt_id: fileId });
  }
  const schema = (value as { schema?: unknown } | null)?.schema;
  if (schema !== RECEIPT_SCHEMA) {
    throw invalid(label, "receipt has unsupported schema", { receipt_id: fileId });
  }
  let receipt: Receipt;
  try {
    receipt = decodeReceipt(value);
  } catch (error) {
    const path = error instanceof RuntimeError ? error.details.path : undefined;
    throw invalid(label, "receipt shape is invalid", { receipt_id: fileId, path });
  }
  if (receipt.id !== fileId) {
    throw invalid(label, "receipt id does not match file name", { receipt_id: fileId });
  }
  return receipt;
}

/** What the tree checks and the report need of a verified file. */
export interface CheckedNode extends TreeNode {
  readonly created_at: string;
  /** `sha256:<hex>` of the file's bytes (also what the verified-digest cache holds). */
  readonly body_key: string;
}

/** One receipt file checked on its own: its node and proof findings, or why it is unreadable. */
export type FileCheck =
  | { file_name: string; node: CheckedNode; findings: ReceiptFinding[]; cached: boolean }
  | { file_name: string; unreadable: string };

/** `sha256:<hex>` of a file's bytes. */
export function bytesDigest(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The slim tree node of a decoded receipt whose bytes digest to `key`. */
export function nodeOf(receipt: Receipt, key: string): CheckedNode {
  const lineage: Lineage | undefined = receipt.lineage;
  return {
    id: receipt.id,
    digest: receipt.digest,
    created_at: receipt.created_at,
    signature: { value: receipt.signature.value },
    body_key: key,
    ...(lineage !== undefined ? { lineage } : {}),
  };
}

/**
 * Checks one receipt file: decode (parseStoredReceipt) and proof under `policy`. When
 * `verified` holds the digest of these exact bytes, an earlier check found them clean under
 * the same policy, so only the id is compared with the file name: a changed file has other
 * bytes, misses, and is checked in full.
 */
export function checkReceiptFile(opts: {
  label: string;
  fileName: string;
  fileId: string;
  bytes: Uint8Array;
  policy: SignaturePolicy;
  verified?: ReadonlySet<string>;
}): FileCheck {
  const key = bytesDigest(opts.bytes);
  const text = Buffer.from(opts.bytes.buffer, opts.bytes.byteOffset, opts.bytes.length).toString(
    "utf8",
  );
  if (opts.verified?.has(key) === true) {
    const receipt = JSON.parse(text) as Receipt;
    if (receipt.id === opts.fileId) {
      return { file_name: opts.fileName, node: nodeOf(receipt, key), findings: [], cached: true };
    }
  }
  let receipt: Receipt;
  try {
    receipt = parseStoredReceipt(opts.label, opts.fileId, text);
  } catch (error) {
    const message = error instanceof RuntimeError ? error.message : "unreadable";
    return { file_name: opts.fileName, unreadable: message };
  }
  const findings = verifyReceiptProof(receipt, opts.policy, true);
  return { file_name: opts.fileName, node: nodeOf(receipt, key), findings, cached: false };
}
