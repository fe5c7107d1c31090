/**
 * `runx verify --bundle`: a `runx.evidence_bundle.v1` document verified offline as it is
 * read. The document is walked member by member (receipts/json-stream.ts), so only the
 * receipt being read, a few chunks in flight and the slim tree nodes are held, whatever the
 * bundle's size; the receipt documents are checked in chunks on every core once the bundle
 * holds as many receipts as a store pass would start workers for (receipts/verify-pool.ts),
 * with the same results as one thread. Then: every receipt is filed under its own id, the
 * index lists exactly the bundled receipts, every receipt is reached from the run's root, and
 * every tree the run's graph shows verifies (ids, digests, signatures, child commitments).
 */
import { RuntimeError } from "../errors.js";
import type { SignaturePolicy } from "../receipts/index.js";
import type { BundledReceipt } from "../receipts/check-chunk.js";
import { JsonStreamError, JsonStreamReader } from "../receipts/json-stream.js";
import { receiptFileName } from "../receipts/store-files.js";
import type { CheckedNode, FileCheck } from "../receipts/stored-receipt.js";
import { bundleCheckPool, CHUNK_FILES, PARALLEL_MIN_FILES } from "../receipts/verify-pool.js";
import type { ReceiptFinding } from "../receipts/verify.js";
import { verifyRunReceipts, withStatus } from "./verify.js";
import type { StoreVerification } from "./verify.js";

export const EVIDENCE_BUNDLE_SCHEMA = "runx.evidence_bundle.v1";

/** The longest single value of a bundle (one receipt document, one index entry…). */
const MAX_VALUE_CHARS = 16 * 1024 * 1024;

/** Options of {@link verifyEvidenceBundle}. */
export interface BundleVerifyOptions {
  label: string;
  policy: SignaturePolicy;
  /** Worker threads besides this one (default: one per other core from 2,000 receipts; 0: none). */
  workers?: number;
  /** Told after each bundled receipt checked (`total`: the index's length when known). */
  progress?: (done: number, total: number) => void;
}

function notABundle(label: string): RuntimeError {
  return new RuntimeError(
    "INPUT_INVALID",
    "not a runx.evidence_bundle.v1 document (schema, root_receipt_id, receipts, index.entries)",
    { file: label, path: "schema" },
  );
}

/** Verifies the evidence bundle whose text `source` yields, piece by piece or whole. */
export async function verifyEvidenceBundle(
  source: string | AsyncIterable<string | Uint8Array>,
  opts: BundleVerifyOptions,
): Promise<StoreVerification> {
  const reader = new JsonStreamReader(
    typeof source === "string" ? [source] : source,
    MAX_VALUE_CHARS,
  );
  const nodes: CheckedNode[] = [];
  const proofOf = new Map<CheckedNode, readonly ReceiptFinding[]>();
  const unreadable: StoreVerification["unreadable_files"] = [];
  const fileNames: string[] = [];
  const filed = new Set<string>();
  // Reported after the checks, so their order does not depend on how the chunks were spread.
  const twice: StoreVerification["unreadable_files"] = [];
  const listed = new Set<string>();
  let indexRead = false;
  let done = 0;
  const pool = bundleCheckPool({
    policy: opts.policy,
    ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
    onCheck(check: FileCheck) {
      done++;
      opts.progress?.(done, Math.max(done, listed.size));
      if ("node" in check) {
        nodes.push(check.node);
        proofOf.set(check.node, check.findings);
      } else unreadable.push({ file_name: check.file_name, message: check.unreadable });
    },
  });
  let schema: unknown;
  let rootId: unknown;
  let receiptsSeen = false;
  let entriesSeen = false;
  const keys = new Set<string>();
  try {
    if ((await reader.peek()) !== "{") {
      if ((await reader.peek()) === undefined)
        throw new JsonStreamError("the document is empty", 1);
      throw notABundle(opts.label);
    }
    for await (const key of reader.members()) {
      if (keys.has(key)) {
        throw new RuntimeError("INPUT_INVALID", `the evidence bundle repeats the key "${key}"`, {
          file: opts.label,
          path: key,
          line: reader.line(),
        });
      }
      keys.add(key);
      if (key === "schema") {
        schema = await reader.value();
        // Fail before reading thousands of receipts of some other document.
        if (schema !== EVIDENCE_BUNDLE_SCHEMA) throw notABundle(opts.label);
      } else if (key === "root_receipt_id") {
        rootId = await reader.value();
      } else if (key === "index") {
        if ((await reader.peek()) !== "{") throw notABundle(opts.label);
        for await (const field of reader.members()) {
          if (field !== "entries") {
            await reader.value();
            continue;
          }
          if ((await reader.peek()) !== "[") throw notABundle(opts.label);
          entriesSeen = true;
          for await (const _ of reader.elements()) {
            const entry = (await reader.value()) as { file_name?: unknown } | null;
            listed.add(String(entry?.file_name));
          }
        }
        indexRead = true;
      } else if (key === "receipts") {
        if ((await reader.peek()) !== "{") throw notABundle(opts.label);
        receiptsSeen = true;
        let chunk: BundledReceipt[] = [];
        for await (const fileName of reader.members()) {
          const body = await reader.value();
          if (filed.has(fileName)) {
            twice.push({ file_name: fileName, message: "filed twice in the bundle" });
            continue;
          }
          filed.add(fileName);
          fileNames.push(fileName);
          chunk.push({
            file_name: fileName,
            text: typeof body === "string" ? body : JSON.stringify(body),
          });
          // As many receipts as a store pass would check on every core: so is this bundle.
          if (
            fileNames.length === 1 && indexRead
              ? listed.size >= PARALLEL_MIN_FILES
              : fileNames.length === PARALLEL_MIN_FILES
          ) {
            await pool.widen();
          }
          if (chunk.length === CHUNK_FILES) {
            await pool.submit(chunk);
            chunk = [];
          }
        }
        if (chunk.length > 0) await pool.submit(chunk);
      } else {
        await reader.value();
      }
    }
    await reader.end();
    await pool.drain();
  } catch (error) {
    if (error instanceof JsonStreamError) {
      throw new RuntimeError(
        "INPUT_INVALID",
        `the evidence bundle is not valid JSON (line ${error.line}: ${error.message})`,
        { file: opts.label, line: error.line },
      );
    }
    throw error;
  } finally {
    await pool.close();
  }
  if (
    schema !== EVIDENCE_BUNDLE_SCHEMA ||
    typeof rootId !== "string" ||
    !receiptsSeen ||
    !entriesSeen
  ) {
    throw notABundle(opts.label);
  }
  unreadable.push(...twice);
  for (const name of fileNames) {
    if (!listed.has(name)) unreadable.push({ file_name: name, message: "not in the index" });
  }
  for (const name of listed) {
    if (!filed.has(name)) {
      unreadable.push({ file_name: name, message: "indexed but missing from the bundle" });
    }
  }
  const run = verifyRunReceipts(nodes, rootId, opts.policy, (node) => proofOf.get(node) ?? []);
  for (const id of run.unlinked) {
    unreadable.push({
      file_name: receiptFileName(id),
      message: "not reached from the run's root receipt through lineage children or previous",
    });
  }
  if (!nodes.some((n) => n.id === rootId)) {
    unreadable.push({
      file_name: receiptFileNameOrRaw(rootId),
      message: "the root receipt is missing from the bundle",
    });
  }
  const trees = withStatus(run.trees, nodes, opts.policy);
  return {
    receipt_dir: opts.label,
    signature_mode: opts.policy.mode,
    receipt_count: run.receiptCount,
    trees,
    unreadable_files: unreadable,
    valid: unreadable.length === 0 && trees.length > 0 && trees.every((t) => t.valid),
  };
}

/** The file name of `id`, or `id` itself when it is no receipt id. */
function receiptFileNameOrRaw(id: string): string {
  try {
    return receiptFileName(id);
  } catch {
    return id;
  }
}
