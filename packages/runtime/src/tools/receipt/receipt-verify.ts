/**
 * `receipt.verify`: verifies one receipt tree in the run's receipt store with the runtime's
 * own tree verification (`ReceiptLookup.tree`, receipts/tree.ts) and reports it as
 * `runx.receipt_tree.verification.v1`: every member's signed seal and verification status,
 * the child receipts the lineage commits that are missing, and every finding. A tree that
 * does not verify is an answer (`valid: false`), not a failure; only an id the store does not
 * hold fails (RECEIPT_NOT_FOUND). Read-only: it writes nothing.
 */
import inputSchema from "../../../schemas/tools/receipt-verify.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/receipt-verify.output.schema.json" with { type: "json" };
import { validateToolsReceiptVerifyInput } from "../../generated/validate-tools-receipt-verify.input.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import type { ReceiptTreeMember } from "../../receipts/lookup.js";
import { defineTool } from "../define-tool.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** The packet `receipt.verify` emits. */
export const RECEIPT_TREE_VERIFICATION = "runx.receipt_tree.verification.v1";

const RANK = { verified: 0, unverified: 1, invalid: 2 } as const;

function memberFacts(member: ReceiptTreeMember, role: "root" | "descendant"): JsonRecord {
  const r = member.receipt;
  return {
    receipt_id: r.id,
    role,
    subject: r.subject.ref.uri,
    disposition: r.seal.disposition,
    reason_code: r.seal.reason_code,
    summary: r.seal.summary,
    status: member.status,
    issuer: r.issuer.type,
    approvals: r.authority.terms.reduce((n, term) => n + term.approvals.length, 0),
  };
}

export const receiptVerifyTool: NativeTool = defineTool<{ receipt_id: string }, JsonRecord>({
  name: "receipt.verify",
  description:
    "Verify one receipt tree in the run's receipt store with the runtime's tree verification and report each member's seal, signature status and every finding; writes nothing.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsReceiptVerifyInput,
  async run(input, ctx) {
    const tree = await ctx.receipts.tree(input.receipt_id);
    const members = [tree.root, ...tree.descendants];
    const weakest = members.reduce(
      (worst, m) => (RANK[m.status] > RANK[worst] ? m.status : worst),
      "verified" as ReceiptTreeMember["status"],
    );
    const data: JsonRecord = {
      schema: RECEIPT_TREE_VERIFICATION,
      root_receipt_id: tree.root.receipt.id,
      valid: tree.valid,
      signatures: weakest,
      receipt_count: members.length,
      members: [
        memberFacts(tree.root, "root"),
        ...tree.descendants.map((m) => memberFacts(m, "descendant")),
      ],
      missing: [...tree.missing],
      findings: tree.findings.map((f) => ({ code: f.code, path: f.path, message: f.message })),
    };
    return {
      output: { receipt_verification: artifactEnvelope(data) },
      summary: `receipt tree ${tree.valid ? "valid" : "not valid"} (${members.length} receipts)`,
    };
  },
});
