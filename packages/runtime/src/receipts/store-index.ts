/**
 * `index.json` of the receipt store: a recoverable projection of the receipt files,
 * `{schema, generated_at (Unix nanoseconds as a decimal string), entries}` with entries
 * sorted by receipt id.
 */
import { RuntimeError } from "../errors.js";
import type { Receipt } from "./model.js";
import { receiptFileNames } from "./store-files.js";

/** Index schema name. */
export const RECEIPT_STORE_INDEX_SCHEMA = "runx.receipt_store_index.v1";

/** One index entry. */
export interface ReceiptStoreIndexEntry {
  receipt_id: string;
  file_name: string;
  created_at: string;
}

/** `index.json`: entries sorted by receipt id; `generated_at` is Unix nanoseconds. */
export interface ReceiptStoreIndex {
  schema: typeof RECEIPT_STORE_INDEX_SCHEMA;
  generated_at: string;
  entries: ReceiptStoreIndexEntry[];
}

/** Orders entries by receipt id. */
export function byReceiptId(left: { receipt_id: string }, right: { receipt_id: string }): number {
  return left.receipt_id < right.receipt_id ? -1 : left.receipt_id > right.receipt_id ? 1 : 0;
}

/** The index entry of a stored receipt. */
export function indexEntry(receipt: Receipt, fileName: string): ReceiptStoreIndexEntry {
  return { receipt_id: receipt.id, file_name: fileName, created_at: receipt.created_at };
}

/** True when both entry lists are equal member by member. */
export function sameEntries(
  left: readonly ReceiptStoreIndexEntry[],
  right: readonly ReceiptStoreIndexEntry[],
): boolean {
  return (
    left.length === right.length &&
    left.every(
      (entry, i) =>
        entry.receipt_id === right[i]?.receipt_id &&
        entry.file_name === right[i]?.file_name &&
        entry.created_at === right[i]?.created_at,
    )
  );
}

function isEntry(value: unknown): value is ReceiptStoreIndexEntry {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const entry = value as Record<string, unknown>;
  return (
    Object.keys(entry).length === 3 &&
    typeof entry.receipt_id === "string" &&
    typeof entry.file_name === "string" &&
    typeof entry.created_at === "string"
  );
}

/** Parses index.json text; RECEIPT_INDEX_MALFORMED when it is not an index. */
export function parseStoreIndex(text: string, label: string): ReceiptStoreIndex {
  const malformed = (reason: string): RuntimeError =>
    new RuntimeError(
      "RECEIPT_INDEX_MALFORMED",
      `receipt store index is malformed in store ${label}: ${reason}`,
      { store: label },
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw malformed("not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw malformed("not an object");
  }
  const index = value as Record<string, unknown>;
  if (index.schema !== RECEIPT_STORE_INDEX_SCHEMA) throw malformed("unsupported schema");
  if (typeof index.generated_at !== "string" || !Array.isArray(index.entries)) {
    throw malformed("missing generated_at or entries");
  }
  if (!index.entries.every(isEntry)) throw malformed("invalid entry");
  return {
    schema: RECEIPT_STORE_INDEX_SCHEMA,
    generated_at: index.generated_at,
    entries: index.entries,
  };
}

function namesItsFile(entry: ReceiptStoreIndexEntry): boolean {
  try {
    return receiptFileNames(entry.receipt_id).includes(entry.file_name);
  } catch {
    return false;
  }
}

/**
 * Merges `additions` into the index entries. Undefined when the result would not match
 * the receipt files exactly (`fileIds`, sorted) or an entry names the wrong file: the
 * caller then rebuilds the index from the files.
 */
export function mergeIndexEntries(
  index: ReceiptStoreIndex,
  additions: readonly ReceiptStoreIndexEntry[],
  fileIds: readonly string[],
): ReceiptStoreIndexEntry[] | undefined {
  const merged = new Map<string, ReceiptStoreIndexEntry>();
  for (const entry of [...index.entries, ...additions]) {
    if (!namesItsFile(entry)) return undefined;
    merged.set(entry.receipt_id, entry);
  }
  const entries = [...merged.values()].sort(byReceiptId);
  const covers =
    entries.length === fileIds.length && entries.every((e, i) => e.receipt_id === fileIds[i]);
  return covers ? entries : undefined;
}
