/**
 * Reading a receipt by id where the state store may hold receipts itself. On PostgreSQL the
 * receipts table is the shared truth (another instance, in another workspace, may have
 * written the receipt), so it is read first; the local receipt file store answers for what
 * the table does not hold. On SQLite (no receipt rows) this is the file store alone. A row is
 * checked exactly as a file is: shape and id on every read, content address and proof under
 * the file store's policy where the file store checks them (`read`, not `find`).
 */
import { RuntimeError } from "../errors.js";
import type { Receipt, ReceiptStore } from "../receipts/index.js";
import { isContentAddressed, verifyReceiptProof } from "../receipts/index.js";
import { parseStoredReceipt } from "../receipts/stored-receipt.js";
import type { ReceiptRows } from "./port.js";

/** The two reads every run and read model needs. */
export interface ReceiptLookup {
  /** The receipt with this id, verified under the store policy; RECEIPT_NOT_FOUND when absent. */
  read(id: string): Promise<Receipt>;
  /** The receipt with this id, shape-checked only, or undefined when absent. */
  find(id: string): Promise<Receipt | undefined>;
}

/** The lookup over `files`, preceded by `rows` when the state store holds receipts. */
export function receiptLookup(files: ReceiptStore, rows: ReceiptRows | undefined): ReceiptLookup {
  if (rows === undefined) return { read: (id) => files.read(id), find: (id) => files.find(id) };
  const fromRow = async (id: string): Promise<Receipt | undefined> => {
    const bytes = await rows.get(id);
    return bytes === undefined ? undefined : parseStoredReceipt(files.label, id, bytes.toString());
  };
  return {
    async read(id) {
      const receipt = await fromRow(id);
      if (receipt === undefined) return files.read(id);
      if (!isContentAddressed(receipt, true)) {
        throw invalid(files.label, "receipt id is not its content address", { receipt_id: id });
      }
      const findings = verifyReceiptProof(receipt, files.policy, true);
      if (findings.length > 0) {
        throw invalid(files.label, "receipt proof is invalid", { receipt_id: id, findings });
      }
      return receipt;
    },
    async find(id) {
      return (await fromRow(id)) ?? files.find(id);
    },
  };
}

function invalid(label: string, message: string, details: Record<string, unknown>): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", `${message} in store ${label}`, {
    store: label,
    ...details,
  });
}
