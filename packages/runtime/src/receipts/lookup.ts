/**
 * The receipt lookup native tools are given (`ToolContext.receipts`): read-only access to the
 * run's receipt store. The store checks content address and proof under its signature policy
 * on every read, so whatever the lookup returns is verified; a receipt that is missing or does
 * not verify is refused with a message naming the receipt and the store label, never a path.
 */
import { RuntimeError, isRuntimeError } from "../errors.js";
import { referencedReceiptId } from "./identity.js";
import type { Act, Receipt } from "./model.js";
import type { ReceiptStore } from "./store.js";
import { verifyReceiptTree } from "./tree.js";
import { receiptStatus } from "./verify.js";
import type { ReceiptFinding, ReceiptStatus } from "./verify.js";

/**
 * Read-only access to the run's receipt store. Every receipt it returns has had its
 * content address and proof verified under the run's signature policy; a receipt that is
 * missing or does not verify is refused (RECEIPT_NOT_FOUND / RECEIPT_INVALID), never returned.
 */
export interface ReceiptLookup {
  /** The receipt with exactly this id (`sha256:<64 hex>`). */
  read(id: string): Promise<Receipt>;
  /**
   * Every receipt whose acts (source, target or artifact refs, criterion evidence or
   * verification refs) reference `runx:receipt:<id>`, sorted by id, the receipt itself
   * excluded. Fails closed: one receipt in the store that does not verify refuses the lookup,
   * because a history read past an unverifiable receipt could miss a link.
   */
  referencing(id: string): Promise<Receipt[]>;
  /**
   * The receipt tree rooted at `id`, verified with the runtime's tree verification
   * (`verifyReceiptTree`) under the store's signature policy. Unlike `read`, a member that
   * does not verify is reported, not refused: the verdict is the answer. Only a root that is
   * not in the store is refused (RECEIPT_NOT_FOUND).
   */
  tree(id: string): Promise<ReceiptTreeEvidence>;
}

/** One member of a verified receipt tree. */
export interface ReceiptTreeMember {
  receipt: Receipt;
  status: ReceiptStatus;
}

/** A receipt tree as the store holds it, with the runtime's verdict on it. */
export interface ReceiptTreeEvidence {
  root: ReceiptTreeMember;
  /** Descendants reached through signed lineage, breadth first, each once. */
  descendants: ReceiptTreeMember[];
  /** Child ids the lineage commits that the store does not hold. */
  missing: string[];
  valid: boolean;
  findings: ReceiptFinding[];
}

const RECEIPT_ID = /^sha256:[0-9a-f]{64}$/;

/** The references of an act that can point at another receipt. */
function actReferences(act: Act): Array<{ type: string; uri: string }> {
  return [
    ...act.source_refs,
    ...act.target_refs,
    ...act.artifact_refs,
    ...act.criterion_bindings.flatMap((binding) => [
      ...binding.evidence_refs,
      ...binding.verification_refs,
    ]),
  ];
}

/** True when one of the receipt's acts references receipt `id`. */
export function actsReference(receipt: Receipt, id: string): boolean {
  return receipt.acts.some((act) =>
    actReferences(act).some((reference) => referencedReceiptId(reference) === id),
  );
}

function firstFinding(error: RuntimeError): string {
  const findings = error.details.findings;
  if (Array.isArray(findings) && findings.length > 0) {
    const first = findings[0] as ReceiptFinding;
    return `: ${first.code} at ${first.path}`;
  }
  return "";
}

/** Rewords the store's refusals so they name the receipt the caller asked for. */
function refused(error: unknown, id: string, label: string): never {
  if (!isRuntimeError(error)) throw error;
  if (error.code === "RECEIPT_NOT_FOUND") {
    throw new RuntimeError("RECEIPT_NOT_FOUND", `receipt ${id} is not in receipt store ${label}`, {
      receipt_id: id,
      store: label,
    });
  }
  if (error.code === "RECEIPT_INVALID") {
    const culprit = typeof error.details.receipt_id === "string" ? error.details.receipt_id : id;
    throw new RuntimeError(
      "RECEIPT_INVALID",
      `receipt ${culprit} in store ${label} failed verification under the run's signature policy: ${error.message.replace(/ in store .*$/, "")}${firstFinding(error)}`,
      { ...error.details, receipt_id: culprit, store: label },
    );
  }
  throw error;
}

function checkId(id: string, label: string): void {
  if (!RECEIPT_ID.test(id)) {
    throw new RuntimeError(
      "RECEIPT_NOT_FOUND",
      `${JSON.stringify(id.slice(0, 80))} is not a receipt id (sha256:<64 lowercase hex>) in receipt store ${label}`,
      { receipt_id: id.slice(0, 80), store: label },
    );
  }
}

/** A lookup over `store` (opened on first use). */
export function verifiedReceiptLookup(store: () => ReceiptStore): ReceiptLookup {
  return {
    async read(id) {
      const opened = store();
      checkId(id, opened.label);
      try {
        return await opened.read(id);
      } catch (error) {
        return refused(error, id, opened.label);
      }
    },
    async referencing(id) {
      const opened = store();
      checkId(id, opened.label);
      let all: Receipt[];
      try {
        all = await opened.list();
      } catch (error) {
        return refused(error, id, opened.label);
      }
      return all.filter((receipt) => receipt.id !== id && actsReference(receipt, id));
    },
    async tree(id) {
      const opened = store();
      checkId(id, opened.label);
      const find = async (at: string) => {
        try {
          return await opened.find(at);
        } catch (error) {
          return refused(error, at, opened.label);
        }
      };
      const root = await find(id);
      if (root === undefined) {
        return refused(new RuntimeError("RECEIPT_NOT_FOUND", "missing"), id, opened.label);
      }
      const seen = new Set<string>([root.id]);
      const descendants: Receipt[] = [];
      const missing: string[] = [];
      // Breadth first over signed lineage; the tree check below bounds depth and breadth.
      const queue: Receipt[] = [root];
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        for (const ref of next.lineage?.children ?? []) {
          const childId = referencedReceiptId(ref);
          if (childId === undefined || seen.has(childId)) continue;
          seen.add(childId);
          if (seen.size > 4096) break;
          const child = await find(childId);
          if (child === undefined) missing.push(childId);
          else {
            descendants.push(child);
            queue.push(child);
          }
        }
      }
      const verdict = verifyReceiptTree(root, descendants, { policy: opened.policy });
      const member = (receipt: Receipt) => ({
        receipt,
        status: receiptStatus(receipt, opened.policy),
      });
      return {
        root: member(root),
        descendants: descendants.map(member),
        missing,
        valid: verdict.valid,
        findings: verdict.findings,
      };
    },
  };
}
