/**
 * `setup.receipts`: receipt files from the fixture's own package, each parsed
 * strictly, content-address and proof checked under the fixture's signature policy, and
 * the set tree-verified, before any is placed in the case's store. A bad seed fails the
 * case with the path and the first finding; nothing is seeded then.
 */
import { readFile, realpath, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  isContentAddressed,
  parseReceiptDocument,
  SINGLE_RECEIPT_MAX_BYTES,
  verifyReceiptProof,
  verifyTree,
} from "../receipts/index.js";
import type { Receipt, SignaturePolicy } from "../receipts/index.js";
import { isInside } from "../tools/paths.js";

/** Reads and verifies the seeds; paths are validated package-relative paths (lanes.ts). */
export async function readSeedReceipts(
  packageDir: string,
  paths: readonly string[],
  policy: SignaturePolicy,
): Promise<{ receipts: Receipt[] } | { error: string }> {
  const root = await realpath(packageDir);
  const receipts: Receipt[] = [];
  for (const [index, rel] of paths.entries()) {
    const at = `setup.receipts[${index}] (${rel})`;
    let file: string;
    try {
      file = await realpath(join(root, rel));
    } catch {
      return { error: `${at}: no such file in the package` };
    }
    if (!isInside(root, file)) return { error: `${at}: resolves outside the package` };
    const info = await stat(file);
    if (!info.isFile()) return { error: `${at}: is not a regular file` };
    if (info.size > SINGLE_RECEIPT_MAX_BYTES) {
      return { error: `${at}: is larger than ${SINGLE_RECEIPT_MAX_BYTES} bytes` };
    }
    const parsed = parseReceiptDocument(await readFile(file));
    if ("error" in parsed) return { error: `${at}: not a runx receipt: ${parsed.error}` };
    const receipt = parsed.receipt;
    if (!isContentAddressed(receipt)) {
      return { error: `${at}: receipt id ${receipt.id} is not its content address` };
    }
    const [finding] = verifyReceiptProof(receipt, policy);
    if (finding !== undefined) {
      return {
        error: `${at}: receipt proof invalid under the fixture's signature policy: ${finding.code} at ${finding.path}`,
      };
    }
    receipts.push(receipt);
  }
  for (const report of verifyTree(receipts, { policy })) {
    if (!report.valid) {
      const first = report.findings[0];
      return {
        error: `setup.receipts: receipt tree ${report.root_receipt_id} invalid: ${first?.code ?? "unknown"} at ${first?.path ?? "?"}`,
      };
    }
  }
  return { receipts };
}
