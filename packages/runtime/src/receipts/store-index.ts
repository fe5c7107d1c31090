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

/** True when the entry names a file its id may be stored in. */
function namesItsFile(entry: ReceiptStoreIndexEntry): boolean {
  try {
    return receiptFileNames(entry.receipt_id).includes(entry.file_name);
  } catch {
    return false;
  }
}

/**
 * `index`'s entries with `additions` merged in by id (each placed by binary search: the
 * entries are sorted), and whether anything changed. Undefined when the entries are not
 * sorted and unique or an addition does not name its file: the caller then rebuilds the index
 * from the files.
 */
export function mergeIndexEntries(
  index: ReceiptStoreIndex,
  additions: readonly ReceiptStoreIndexEntry[],
): { entries: ReceiptStoreIndexEntry[]; changed: boolean } | undefined {
  const entries = index.entries;
  // Sorted and unique, as written: anything else is rebuilt. (Entries naming wrong files are
  // found when the index is loaded; only the additions are checked here.)
  for (let i = 1; i < entries.length; i++) {
    if (
      (entries[i - 1] as ReceiptStoreIndexEntry).receipt_id >=
      (entries[i] as ReceiptStoreIndexEntry).receipt_id
    ) {
      return undefined;
    }
  }
  let changed = false;
  for (const addition of additions) {
    if (!namesItsFile(addition)) return undefined;
    let low = 0;
    let high = entries.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((entries[mid] as ReceiptStoreIndexEntry).receipt_id < addition.receipt_id) low = mid + 1;
      else high = mid;
    }
    const found = entries[low];
    if (found?.receipt_id === addition.receipt_id) {
      if (found.file_name === addition.file_name && found.created_at === addition.created_at) {
        continue;
      }
      entries[low] = addition;
    } else {
      entries.splice(low, 0, addition);
    }
    changed = true;
  }
  return { entries, changed };
}

const INDEX_HEAD = /^\{"schema":"runx\.receipt_store_index\.v1","generated_at":"\d*","entries":\[/;
const ENTRY_START = '{"receipt_id":"';
const ENTRY_ID_LENGTH = "sha256:".length + 64;

/**
 * `mergeIndexEntries` on index.json's text, for an index in the compact form this store writes
 * (`JSON.stringify` of the index): each addition is placed by a binary search over the text
 * and spliced in, so a write reads and writes the file but neither parses nor serializes its
 * entries. Returns the text `JSON.stringify` would give for the merged index with
 * `generatedAt` (unchanged when every addition is there already); undefined when the text
 * is not in that form, its entries are not sorted and unique, or an addition is not a
 * canonical entry (the caller then merges the parsed index or rebuilds it). A JSON string cannot hold `},{"receipt_id":"` (its quotes would be escaped),
 * so that sequence marks exactly the entry boundaries.
 */
export function mergeIndexText(
  text: string,
  additions: readonly ReceiptStoreIndexEntry[],
  generatedAt: string,
): { changed: false } | { changed: true; text: string } | undefined {
  const head = INDEX_HEAD.exec(text);
  if (head === null || !text.endsWith("]}")) return undefined;
  let body = text.slice(head[0].length, -2);
  if (body !== "" && !(body.startsWith(ENTRY_START) && body.endsWith('"}'))) return undefined;
  /** The first entry start at or after `offset` (body.length when none). */
  const startFrom = (offset: number): number => {
    if (offset === 0) return 0;
    const at = body.indexOf(`},${ENTRY_START}`, offset - 2);
    return at < 0 ? body.length : at + 2;
  };
  const idAt = (start: number): string =>
    body.slice(start + ENTRY_START.length, start + ENTRY_START.length + ENTRY_ID_LENGTH);
  // Sorted and unique, as this store writes it (else the caller rebuilds the index). The ids
  // start each piece of the body split at the entry boundaries (after the first entry's key).
  if (body !== "") {
    const pieces = body.split(`},${ENTRY_START}`);
    let previous = "";
    for (let i = 0; i < pieces.length; i++) {
      const id = (pieces[i] as string).slice(
        i === 0 ? ENTRY_START.length : 0,
        (i === 0 ? ENTRY_START.length : 0) + ENTRY_ID_LENGTH,
      );
      if (id <= previous) return undefined;
      previous = id;
    }
  }
  let changed = false;
  for (const addition of additions) {
    const id = addition.receipt_id;
    if (id.length !== ENTRY_ID_LENGTH || !namesItsFile(addition)) return undefined;
    const entry = JSON.stringify({
      receipt_id: id,
      file_name: addition.file_name,
      created_at: addition.created_at,
    });
    // Entries starting before `low` have smaller ids; those starting at or after `high` do not.
    let low = 0;
    let high = body.length;
    while (low < high) {
      let mid = startFrom((low + high) >>> 1);
      if (mid >= high) mid = low;
      if (idAt(mid) < id) low = startFrom(mid + 1);
      else high = mid;
    }
    if (low < body.length && idAt(low) === id) {
      const next = startFrom(low + 1);
      const end = next === body.length ? next : next - 1; // before the comma
      if (body.slice(low, end) === entry) continue;
      body = `${body.slice(0, low)}${entry}${body.slice(end)}`;
    } else if (low === body.length) {
      body = body === "" ? entry : `${body},${entry}`;
    } else {
      body = `${body.slice(0, low)}${entry},${body.slice(low)}`;
    }
    changed = true;
  }
  if (!changed) return { changed };
  return {
    changed,
    text: `{"schema":"${RECEIPT_STORE_INDEX_SCHEMA}","generated_at":"${generatedAt}","entries":[${body}]}`,
  };
}
