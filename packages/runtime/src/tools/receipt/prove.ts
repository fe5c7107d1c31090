/**
 * The proof `receipt.prove` returns and `receipt.query` embeds (`runx.receipt.proof.v1`):
 * each requested receipt resolved exactly in the run's receipt store, its child tree
 * verified with the runtime's tree verification (`ReceiptLookup.tree`), and the redacted
 * inspection of what it signs. A receipt the store cannot resolve is a finding, not a failure;
 * the decision is `verified` only under a production signature policy with every tree valid,
 * `unverified` when a local-development store finds every tree intact, and
 * `needs_more_evidence` otherwise.
 */
import { RuntimeError, isRuntimeError } from "../../errors.js";
import type { ReceiptFinding } from "../../receipts/verify.js";
import type { Json, JsonRecord, ToolContext } from "../types.js";
import type { ReceiptHistory } from "./history.js";
import { receiptInspection } from "./inspection.js";

export const RECEIPT_PROOF_PACKET = "runx.receipt.proof.v1";

/** At most this many receipts are proved in one call. */
export const MAX_PROOF_RECEIPTS = 100;

const RECEIPT_ID = /^sha256:[0-9a-f]{64}$/;

function invalid(tool: string, message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${tool}: ${message}`, { path });
}

/** Checks exact receipt ids: 1 to 100 lowercase sha256 ids, unique; returns them sorted. */
export function exactReceiptIds(values: readonly string[], tool: string): string[] {
  if (values.length === 0 || values.length > MAX_PROOF_RECEIPTS) {
    throw invalid(tool, "receipt_ids must contain from 1 to 100 exact ids", "receipt_ids");
  }
  const ids = new Set<string>();
  values.forEach((value, index) => {
    const id = value.trim();
    if (!RECEIPT_ID.test(id)) {
      throw invalid(tool, "receipt_ids must contain lowercase sha256 ids", `receipt_ids.${index}`);
    }
    if (ids.has(id)) throw invalid(tool, "receipt_ids must be unique", `receipt_ids.${index}`);
    ids.add(id);
  });
  return [...ids].sort();
}

/** Upstream names tree finding codes by their variant (`SignatureInvalid`), not snake case. */
function variantName(code: string): string {
  return code
    .split("_")
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

function treeFindings(findings: readonly ReceiptFinding[]): JsonRecord[] {
  return findings.map((f) => ({ code: variantName(f.code), path: f.path, message: f.message }));
}

function unresolved(id: string, error: RuntimeError): JsonRecord {
  const reason =
    error.code === "RECEIPT_NOT_FOUND" ? "receipt is missing" : "receipt proof is invalid";
  return {
    code: "receipt.store.unresolved",
    message: `receipt ${id} could not be resolved: ${reason}`,
  };
}

/** The verification block of a proof (or of a query that checked nothing). */
export function verificationBlock(
  mode: "production" | "local-development",
  checked: boolean,
  intact: boolean | null,
  trees: Json[],
  findings: Json[],
): JsonRecord {
  return { signature_mode: mode, checked, intact, trees, findings };
}

/** Proves `ids` (already checked by {@link exactReceiptIds}) against the run's store. */
export async function proveReceipts(
  ids: readonly string[],
  ctx: ToolContext,
  history: ReceiptHistory,
): Promise<JsonRecord> {
  const mode = history.signatureMode();
  const matched: JsonRecord[] = [];
  const details: JsonRecord[] = [];
  const trees: JsonRecord[] = [];
  const findings: JsonRecord[] = [];
  for (const id of ids) {
    let tree;
    try {
      tree = await ctx.receipts.tree(id);
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      if (error.code !== "RECEIPT_NOT_FOUND" && error.code !== "RECEIPT_INVALID") throw error;
      findings.push(unresolved(id, error));
      continue;
    }
    for (const child of tree.missing) {
      findings.push({
        code: "receipt.tree.child_unreadable",
        message: `child receipt ${child} could not be verified: receipt is missing`,
      });
    }
    const own = treeFindings(tree.findings);
    findings.push(...own);
    const root = tree.root.receipt;
    matched.push({
      receipt_id: root.id,
      skill_ref: root.subject.ref.uri,
      status: root.seal.disposition,
      created_at: root.created_at,
      verification_status: tree.root.status,
    });
    details.push(receiptInspection(root, tree.root.status));
    trees.push({
      root_receipt_id: id,
      receipt_count: tree.descendants.length + 1,
      valid: tree.valid && tree.missing.length === 0,
      findings: own,
    });
  }
  const intactTrees = matched.length === ids.length && trees.every((t) => t.valid === true);
  const decision =
    mode === "production" && intactTrees
      ? "verified"
      : mode !== "production" && intactTrees
        ? "unverified"
        : "needs_more_evidence";
  return {
    schema: RECEIPT_PROOF_PACKET,
    decision,
    requested_receipt_ids: [...ids],
    matched_receipts: matched,
    receipt_details: details,
    verification: verificationBlock(
      mode,
      true,
      mode === "production" ? intactTrees : null,
      trees,
      findings,
    ),
    store: { label: history.label() },
  };
}
