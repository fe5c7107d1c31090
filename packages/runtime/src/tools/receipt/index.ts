/**
 * The receipt history tools (scope `receipt.read`, read-only): `receipt.query` reads the
 * run's receipt history through upstream's filter, with an exact detailed read
 * (`receipt_ids`) and an optional bounded tree proof (`verify_chain`), as
 * `receipt_query` (`runx.receipt.query.v1`); `receipt.prove` resolves exact receipts,
 * verifies each child tree and returns the redacted proof as `receipt_proof`
 * (`runx.receipt.proof.v1`). Neither writes anything.
 */
import proveInputSchema from "../../../schemas/tools/receipt/receipt-prove.input.schema.json" with { type: "json" };
import proveOutputSchema from "../../../schemas/tools/receipt/receipt-prove.output.schema.json" with { type: "json" };
import queryInputSchema from "../../../schemas/tools/receipt/receipt-query.input.schema.json" with { type: "json" };
import queryOutputSchema from "../../../schemas/tools/receipt/receipt-query.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsReceiptReceiptProveInput } from "../../generated/validate-tools-receipt-receipt-prove.input.js";
import { validateToolsReceiptReceiptQueryInput } from "../../generated/validate-tools-receipt-receipt-query.input.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import type { Json, JsonRecord, NativeTool, ToolContext } from "../types.js";
import type { ReceiptHistory } from "./history.js";
import { MAX_PROOF_RECEIPTS, exactReceiptIds, proveReceipts, verificationBlock } from "./prove.js";
import type { ReceiptQueryInput } from "./query.js";
import {
  detailIds,
  filterJson,
  parseFilter,
  pendingMatches,
  rowMatches,
  truncateCombined,
} from "./query.js";

const RECEIPT_READ = ["receipt.read"] as const;

function historyOf(ctx: ToolContext, tool: string): ReceiptHistory {
  if (ctx.history === undefined) {
    throw new RuntimeError("INTERNAL", `${tool}: this runtime gave the tool no receipt history`);
  }
  return ctx.history;
}

async function queryReceipts(input: ReceiptQueryInput, ctx: ToolContext): Promise<JsonRecord> {
  const history = historyOf(ctx, "receipt.query");
  const filter = parseFilter(input, ctx.now());
  const exact = detailIds(input.receipt_ids);
  const mode = history.signatureMode();
  const verifyChain = input.verify_chain === true;
  let receipts: Json[] = [];
  let ids: string[] = [];
  let pending: Json[] = [];
  let proof: JsonRecord | undefined;
  let verification = verificationBlock(mode, false, null, [], []);
  if (exact !== undefined) {
    proof = await proveReceipts(exactReceiptIds(exact, "receipt.query"), ctx, history);
    receipts = proof.matched_receipts as Json[];
    ids = (proof.matched_receipts as JsonRecord[]).map((m) => m.receipt_id as string);
  } else {
    const rows = await history.receipts(filter.limit, (row) => rowMatches(row, filter));
    const paused = (await history.pendingRuns()).filter((run) => pendingMatches(run, filter));
    const cut = truncateCombined(rows, paused, filter.limit);
    receipts = cut.rows as unknown as Json[];
    pending = cut.pending as unknown as Json[];
    ids = cut.rows.map((row) => row.id);
    if (verifyChain && ids.length > MAX_PROOF_RECEIPTS) {
      verification = verificationBlock(
        mode,
        true,
        null,
        [],
        [
          {
            code: "receipt.proof.limit",
            message: `matched ${ids.length} receipts; native tree proof is bounded to ${MAX_PROOF_RECEIPTS}`,
          },
        ],
      );
    } else if (verifyChain && ids.length > 0) {
      proof = await proveReceipts(ids, ctx, history);
    }
  }
  if (proof !== undefined) verification = proof.verification as JsonRecord;
  return {
    schema: "runx.receipt.query.v1",
    source: "native_receipt_store",
    store_label: history.label(),
    filter: filterJson(filter, exact),
    receipt_ids: ids,
    receipts,
    pending_runs: pending,
    receipt_details: (proof?.receipt_details as Json[] | undefined) ?? [],
    verification,
  };
}

/** `receipt.query`. */
export const receiptQueryTool: NativeTool = withNamedOutput(
  defineTool<ReceiptQueryInput, JsonRecord>({
    name: "receipt.query",
    description:
      "Query native receipt history with bounded detail and optional tree proof; writes nothing.",
    mutating: false,
    scopes: RECEIPT_READ,
    inputSchema: queryInputSchema,
    outputSchema: queryOutputSchema,
    validate: validateToolsReceiptReceiptQueryInput,
    async run(input, ctx) {
      const packet = await queryReceipts(input, ctx);
      const count = (packet.receipts as Json[]).length;
      return { output: packet, summary: `receipt.query matched ${count} receipts` };
    },
  }),
  { name: "receipt_query", packet: "runx.receipt.query.v1" },
);

/** `receipt.prove`. */
export const receiptProveTool: NativeTool = withNamedOutput(
  defineTool<{ receipt_ids: string[] }, JsonRecord>({
    name: "receipt.prove",
    description:
      "Resolve exact receipts, verify each child tree, and return redacted proof; writes nothing.",
    mutating: false,
    scopes: RECEIPT_READ,
    inputSchema: proveInputSchema,
    outputSchema: proveOutputSchema,
    validate: validateToolsReceiptReceiptProveInput,
    async run(input, ctx) {
      const history = historyOf(ctx, "receipt.prove");
      const proof = await proveReceipts(
        exactReceiptIds(input.receipt_ids, "receipt.prove"),
        ctx,
        history,
      );
      return { output: proof, summary: `receipt proof: ${proof.decision as string}` };
    },
  }),
  { name: "receipt_proof", packet: "runx.receipt.proof.v1" },
);

/** The receipt history tools, in catalog order. */
export function receiptTools(): NativeTool[] {
  return [receiptQueryTool, receiptProveTool];
}
