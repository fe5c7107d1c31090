/**
 * The receipt store's index as `loadIndex` and `rebuildIndex` return it (upstream's
 * `index.json` shape): `{schema, generated_at (Unix nanoseconds as a decimal string),
 * entries}` with entries sorted by receipt id. On disk the store keeps the journal of
 * store-journal.ts instead.
 */

/** Index schema name. */
export const RECEIPT_STORE_INDEX_SCHEMA = "runx.receipt_store_index.v1";

/** One index entry. */
export interface ReceiptStoreIndexEntry {
  receipt_id: string;
  file_name: string;
  created_at: string;
}

/** The index: entries sorted by receipt id; `generated_at` is Unix nanoseconds. */
export interface ReceiptStoreIndex {
  schema: typeof RECEIPT_STORE_INDEX_SCHEMA;
  generated_at: string;
  entries: ReceiptStoreIndexEntry[];
}

/** Orders entries by receipt id. */
export function byReceiptId(left: { receipt_id: string }, right: { receipt_id: string }): number {
  return left.receipt_id < right.receipt_id ? -1 : left.receipt_id > right.receipt_id ? 1 : 0;
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
