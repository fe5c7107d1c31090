/**
 * `payment.refund_admit`: the `refund` skill's admission between its plan and the refund
 * effect. The plan (`payment.refund_plan`) reports what blocks a refund as findings, because
 * upstream's plan-only runners seal a blocked plan; a refund that is about to move money must
 * instead stop. So this tool rebuilds the plan from the same references, reading the charge and
 * every prior refund from the run's receipt store again (content address and signature
 * verified by the lookup, never taken from the caller), and refuses with POLICY_DENIED when:
 *
 * - the plan is blocked: over the remaining refundable amount (`refund_over_remaining`), an
 *   authority in another currency than the charge (`currency_mismatch`), another payer
 *   (`counterparty_mismatch`), another rail (`rail_mismatch`), any other finding
 *   (`refund_request_invalid` or `authority_invalid`);
 * - the rebuilt plan's digest is not the plan step's (`plan_drift`): a refund was recorded
 *   against the charge in between, so the remaining amount the approver would see is stale;
 * - a verified prior refund of the charge carries this refund's intent key (`duplicate_refund`):
 *   the same caller-named refund was already made.
 *
 * A missing or unverifiable receipt keeps its RECEIPT_NOT_FOUND / RECEIPT_INVALID failure. The
 * admission names the effect the approver releases: payer, amount with unit and the key the
 * refund is recorded under, derived from the charge receipt and the caller's seed, so a retry
 * or second resume of the same refund replays instead of refunding twice. Nothing moves here.
 */
import inputSchema from "../../../schemas/tools/payment-refund-admit.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/payment-refund-admit.output.schema.json" with { type: "json" };
import { validateToolsPaymentRefundAdmitInput } from "../../generated/validate-tools-payment-refund-admit.input.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { refundPlan, type RefundPlanInput } from "./refund-plan.js";
import { verifiedCharge, type VerifiedCharge } from "./refund-proof.js";
import type { JsonRecord, NativeTool } from "../types.js";
import { paymentRefused, type PaymentRefusal } from "./policy.js";

/** Packet id of the admission. */
export const REFUND_ADMISSION_PACKET = "runx.payment.refund_admission.v1";

/** `payment.refund_admit` input after schema validation. */
export interface RefundAdmitInput extends RefundPlanInput {
  plan_digest: string;
  idempotency_seed: string;
}

/**
 * The intent key of one caller-named refund of one charge. A refund receipt records it as its
 * `idempotency.intent_key`, which is how a second refund under the same name is recognised.
 */
export function refundIntentKey(originalReceiptRef: string, seed: string): string {
  return hashCanonical({
    schema: "runx.payment.refund_intent.v1",
    original_receipt_ref: originalReceiptRef,
    idempotency_seed: seed,
  });
}

interface Finding {
  code: string;
  message: string;
}

/** The refusal reason of a blocked plan's first finding. */
function reasonOf(finding: Finding): PaymentRefusal {
  switch (finding.code) {
    case "refund.over_limit":
    case "refund.history_invalid":
      return "refund_over_remaining";
    case "refund.counterparty_mismatch":
      return "counterparty_mismatch";
    case "refund.family":
      return "rail_mismatch";
    case "refund.authority":
      return /currency \S+ is not the charge's/.test(finding.message)
        ? "currency_mismatch"
        : "authority_invalid";
    default:
      return "refund_request_invalid";
  }
}

/** Where a finding points in the tool's input. */
function pathOf(finding: Finding): string {
  if (finding.code === "refund.authority") return "parent_payment_authority";
  if (finding.code === "refund.family") return "settlement_family";
  if (finding.code.startsWith("refund_request.")) return finding.code;
  return "refund_request.amount_minor";
}

/** The key a refund of this charge under this intent is recorded with by the provider. */
function refundIdempotencyKey(intentKey: string): string {
  return `refund:${intentKey.slice("sha256:".length)}`;
}

/**
 * Refuses a prior verified refund of the charge made under the same intent: one whose receipt
 * records the intent key, or whose provider effect proof names this refund's idempotency key
 * (how the runtime's own refund step receipts record it). The refunds are the ones
 * `verifiedCharge` already read and verified.
 */
function refuseDuplicate(charge: VerifiedCharge, intentKey: string): void {
  const key = refundIdempotencyKey(intentKey);
  const prior = charge.refunds.find((r) => r.intent_key === intentKey || r.idempotency_key === key);
  if (prior !== undefined) {
    throw paymentRefused(
      "duplicate_refund",
      `refund receipt ${prior.receipt_id} already refunded charge ${charge.receipt_id} under this idempotency seed`,
      "idempotency_seed",
    );
  }
}

/** The `payment.refund_admit` tool. */
export const paymentRefundAdmitTool: NativeTool = withNamedOutput(
  defineTool<RefundAdmitInput, JsonRecord>({
    name: "payment.refund_admit",
    description:
      "Admit one planned refund before it is made: re-verify the charge and its prior refunds from the run's receipt store and refuse a blocked plan, a plan that drifted, or a refund already made under the same idempotency seed; moves no money.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsPaymentRefundAdmitInput,
    async run(input, ctx) {
      const charge = await verifiedCharge(ctx.receipts, input.original_receipt_ref);
      const plan = refundPlan(input, charge, ctx.now());
      const [finding] = plan.findings as unknown as Finding[];
      if (finding !== undefined) {
        throw paymentRefused(reasonOf(finding), finding.message, pathOf(finding));
      }
      const digest = plan.plan_digest as string;
      if (digest !== input.plan_digest) {
        throw paymentRefused(
          "plan_drift",
          `the refund plan changed since it was built (now ${digest}): the charge's refund history moved`,
          "plan_digest",
        );
      }
      const intentKey = refundIntentKey(charge.receipt_id, input.idempotency_seed);
      refuseDuplicate(charge, intentKey);
      const amount = input.refund_request.amount_minor;
      const admission: JsonRecord = {
        schema: REFUND_ADMISSION_PACKET,
        decision: "admitted",
        plan_digest: digest,
        original_receipt_ref: charge.receipt_id,
        settlement_family: input.settlement_family,
        realm: charge.realm ?? null,
        target: charge.counterparty,
        amount: { units: amount, unit: charge.currency },
        refundable_after_minor: charge.amount_minor - charge.refunded_minor - amount,
        intent_key: intentKey,
        idempotency_key: refundIdempotencyKey(intentKey),
        refund_history_receipt_refs: [...charge.history_receipt_refs],
        money_moved: false,
      };
      return {
        output: admission,
        summary: `refund of ${amount} ${charge.currency} to ${charge.counterparty} against ${charge.receipt_id} admitted`,
      };
    },
  }),
  { name: "refund_admission", packet: REFUND_ADMISSION_PACKET },
);
