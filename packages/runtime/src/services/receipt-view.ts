/**
 * A receipt split for display into what its signature covers and what it does not.
 *
 * A receipt's digest (and so its signature) covers every field but `signature`, `digest`
 * and `metadata` (receipts/identity.ts, as upstream defines it), so anyone who can write the
 * receipt file can edit `metadata` and the receipt still verifies. `metadata` is a runtime
 * read aid (run id, package, per-step statuses, exit codes); history and the console must
 * never present it as a verified fact. Here the signed document (metadata removed) and the
 * signed status of each child step (its own receipt's seal, committed by the parent's
 * lineage) are kept apart from the unsigned metadata, and every place where the metadata
 * claims something about a step that the signed receipts say otherwise is listed.
 */
import { isRuntimeError } from "../errors.js";
import { referencedReceiptId } from "../receipts/index.js";
import type { JsonObject, Receipt, ReceiptStatus } from "../receipts/index.js";

/** The document the digest covers: the receipt without `metadata`. */
export type SignedReceipt = Omit<Receipt, "metadata">;

/** One child receipt a receipt's signed lineage commits (a graph's step). */
export interface SignedStep {
  /** The step's name from the child's signed subject (`hrn_<graph>_<step>`), else its URI. */
  step_id: string;
  receipt_id: string;
  /** The child's signed seal disposition (null when the child is missing or not committed). */
  disposition: string | null;
  reason_code: string | null;
  /**
   * The child's own verification; `invalid` also when its body is not the one the parent
   * committed (lineage locator ≠ the child's digest), `missing` when it is not in the store.
   */
  verification: ReceiptStatus | "missing";
}

/** A metadata value that contradicts what the signed receipts say. */
export interface UnsignedConflict {
  /** JSON path of the unsigned value, e.g. `metadata.steps[0].status`. */
  path: string;
  /** What the metadata says. */
  unsigned: unknown;
  /** What the signed receipts say (shown instead). */
  signed: unknown;
}

/** The signed part: the document, its verification and, for a graph, its steps. */
export interface SignedView {
  receipt: SignedReceipt;
  verification: ReceiptStatus;
  steps: SignedStep[];
}

/** The unsigned part: `metadata` as recorded, never verified. */
export interface UnsignedView {
  note: string;
  metadata: JsonObject | null;
  conflicts: UnsignedConflict[];
}

/** Why metadata is shown apart (the same sentence in the CLI, the API and the console). */
export const UNSIGNED_NOTE =
  "metadata is outside the receipt's digest and signature: anyone who can write the receipt " +
  "file can change it and the receipt still verifies; it is shown as recorded, not as verified";

/** The receipt without `metadata`. */
export function signedReceipt(receipt: Receipt): SignedReceipt {
  const { metadata: _unsigned, ...signed } = receipt;
  return signed;
}

function stepName(parent: Receipt, child: Receipt | undefined, uri: string): string {
  if (child === undefined) return uri;
  const childUri = child.subject.ref.uri;
  // A graph's subject is `hrn_<graph>_graph` and its steps' are `hrn_<graph>_<step>`.
  const m = /^hrn_(.+)_graph$/.exec(parent.subject.ref.uri);
  if (m !== null && childUri.startsWith(`hrn_${m[1]}_`)) {
    return childUri.slice(`hrn_${m[1]}_`.length);
  }
  return childUri;
}

/** The status words a step's unsigned metadata uses for each signed disposition. */
const STEP_STATUS_OF: Record<string, readonly string[]> = {
  closed: ["succeeded", "closed", "success"],
  failed: ["failed"],
  blocked: ["failed", "blocked"],
  declined: ["declined", "failed"],
  killed: ["killed", "failed", "cancelled"],
  deferred: ["paused", "deferred", "needs_approval", "needs_agent"],
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Where `metadata.steps` contradicts the signed steps. */
function conflictsOf(
  metadata: JsonObject | null,
  steps: readonly SignedStep[],
): UnsignedConflict[] {
  const recorded = metadata?.steps;
  if (!Array.isArray(recorded)) return [];
  const conflicts: UnsignedConflict[] = [];
  recorded.forEach((entry, i) => {
    if (!isObject(entry)) return;
    const at = `metadata.steps[${i}]`;
    const byId =
      typeof entry.receipt_id === "string"
        ? steps.find((s) => s.receipt_id === entry.receipt_id)
        : undefined;
    const signed = byId ?? steps.find((s) => s.step_id === entry.step_id);
    if (signed === undefined) {
      if (entry.receipt_id !== null && entry.receipt_id !== undefined) {
        conflicts.push({ path: `${at}.receipt_id`, unsigned: entry.receipt_id, signed: null });
      }
      return;
    }
    if (entry.step_id !== undefined && entry.step_id !== signed.step_id) {
      conflicts.push({ path: `${at}.step_id`, unsigned: entry.step_id, signed: signed.step_id });
    }
    if (entry.receipt_id !== undefined && entry.receipt_id !== signed.receipt_id) {
      conflicts.push({
        path: `${at}.receipt_id`,
        unsigned: entry.receipt_id,
        signed: signed.receipt_id,
      });
    }
    const allowed = signed.disposition === null ? undefined : STEP_STATUS_OF[signed.disposition];
    if (
      typeof entry.status === "string" &&
      signed.disposition !== null &&
      !(allowed ?? [signed.disposition]).includes(entry.status)
    ) {
      conflicts.push({ path: `${at}.status`, unsigned: entry.status, signed: signed.disposition });
    }
  });
  return conflicts;
}

/**
 * Splits `receipt` into its signed and unsigned parts. `find` loads a child receipt from the
 * same store (undefined when it is not there); `status` verifies one receipt.
 */
export async function receiptView(
  receipt: Receipt,
  find: (id: string) => Promise<Receipt | undefined>,
  status: (receipt: Receipt) => ReceiptStatus,
): Promise<{ signed: SignedView; unsigned: UnsignedView }> {
  const steps: SignedStep[] = [];
  for (const ref of receipt.lineage?.children ?? []) {
    const id = referencedReceiptId(ref);
    if (id === undefined) continue;
    let child: Receipt | undefined;
    let unreadable = false;
    try {
      child = await find(id);
    } catch (error) {
      // A child file that does not decode is an invalid step, not a failed inspection.
      if (!isRuntimeError(error)) throw error;
      unreadable = true;
    }
    const committed = child !== undefined && child.digest === ref.locator;
    steps.push({
      step_id: stepName(receipt, child, ref.uri),
      receipt_id: id,
      disposition: committed ? child!.seal.disposition : null,
      reason_code: committed ? child!.seal.reason_code : null,
      verification:
        child === undefined
          ? unreadable
            ? "invalid"
            : "missing"
          : committed
            ? status(child)
            : "invalid",
    });
  }
  const metadata = receipt.metadata ?? null;
  return {
    signed: { receipt: signedReceipt(receipt), verification: status(receipt), steps },
    unsigned: { note: UNSIGNED_NOTE, metadata, conflicts: conflictsOf(metadata, steps) },
  };
}
