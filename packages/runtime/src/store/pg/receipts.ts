/**
 * Receipts in PostgreSQL: one row per receipt, keyed by its content address, holding the
 * exact bytes of its file form (what the file store writes: compact JSON in struct order).
 * `putReceipt` runs in the caller's transaction, so a seal, its ledger line and its index row
 * commit with the receipt or not at all. Rows are write-once: an identical rewrite is a
 * no-op, different bytes under an existing id are RECEIPT_ALREADY_EXISTS. Verifying the
 * receipt (content address, proof, policy) stays with the receipt store above this, as for
 * files (../../receipts/store.ts); this layer checks only that the bytes are JSON whose `id`
 * is the row's key, so a row can never be read back under someone else's id.
 */
import { RuntimeError } from "../../errors.js";
import type { Queryable } from "./connect.js";

const RECEIPT_ID = /^sha256:[0-9a-f]{64}$/;

/** What `putReceipt` did: `written` is false for an identical rewrite. */
export interface PutReceiptOutcome {
  receiptId: string;
  written: boolean;
}

function embeddedId(bytes: Buffer): unknown {
  try {
    const value = JSON.parse(bytes.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as { id?: unknown }).id
      : undefined;
  } catch {
    return undefined;
  }
}

function checkReceipt(id: string, bytes: Buffer): void {
  if (!RECEIPT_ID.test(id)) {
    throw new RuntimeError("RECEIPT_INVALID", "receipt id must be sha256: and 64 hex digits", {
      path: "id",
    });
  }
  if (embeddedId(bytes) !== id) {
    throw new RuntimeError(
      "RECEIPT_INVALID",
      `receipt ${id}: the bytes are not a JSON receipt with this id`,
      { receipt_id: id },
    );
  }
}

/**
 * Stores a receipt's bytes under its id in the caller's transaction. A concurrent writer of
 * the same id waits on the primary key until the first commits, then compares.
 */
export async function putReceipt(
  db: Queryable,
  id: string,
  contents: Buffer | string,
): Promise<PutReceiptOutcome> {
  const bytes = typeof contents === "string" ? Buffer.from(contents, "utf8") : contents;
  checkReceipt(id, bytes);
  const inserted = await db.query(
    "INSERT INTO receipts (id, bytes) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
    [id, bytes],
  );
  if (inserted.rowCount === 1) return { receiptId: id, written: true };
  // Compared in the database, so the stored bytes never travel for a duplicate.
  const same = await db.query<{ same: boolean }>(
    "SELECT bytes = $2 AS same FROM receipts WHERE id = $1",
    [id, bytes],
  );
  if (same.rows[0]?.same !== true) {
    throw new RuntimeError(
      "RECEIPT_ALREADY_EXISTS",
      `receipt ${id} already exists with different content`,
      { receipt_id: id },
    );
  }
  return { receiptId: id, written: false };
}

/** The exact stored bytes of a receipt, or undefined when there is no row. */
export async function getReceiptBytes(db: Queryable, id: string): Promise<Buffer | undefined> {
  if (!RECEIPT_ID.test(id)) return undefined;
  const result = await db.query<{ bytes: Buffer }>("SELECT bytes FROM receipts WHERE id = $1", [
    id,
  ]);
  return result.rows[0]?.bytes;
}
