/**
 * `payment.refund_plan` (the `refund` skill's plan step): binds one refund request to the
 * charge it reverses. The caller supplies only the charge receipt's id, the request, the
 * settlement family and the parent refund authority; the charge (amount, currency, payer,
 * rail, provider proof, money movement) and every prior refund come from the run's receipt
 * store, verified (`refund-proof.ts`). Caller-supplied receipt bodies, refunded totals or
 * idempotency seeds are not accepted.
 *
 * A missing or unverifiable receipt, or receipts that do not prove a charge, fail the tool.
 * Everything else that stops the refund is a finding, and the plan is `blocked` with no
 * adapter handoff: a request above the remaining refundable amount (`refund.over_limit`), a
 * zero amount, a payer or settlement family other than the charge's, or a parent authority
 * that is not a bounded single-use `reverse`/`refund` authority for the charge's payer, rail,
 * currency, realm and amount. A `ready_for_refund_adapter` plan carries the exact adapter
 * handoff and an idempotency key derived from the verified receipts, the request and the
 * authority. No provider is called and no money moves here.
 */
import inputSchema from "../../../schemas/tools/payment-refund-plan.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/payment-refund-plan.output.schema.json" with { type: "json" };
import { validateToolsPaymentRefundPlanInput } from "../../generated/validate-tools-payment-refund-plan.input.js";
import { isRuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import {
  checkNotExpired,
  paymentLimit,
  type AuthorityTerm,
  type EffectLimit,
} from "./authority.js";
import { opaqueReference } from "./opaque-reference.js";
import { REFUND_OPERATION, verifiedCharge, type VerifiedCharge } from "./refund-proof.js";
import type { Json, JsonRecord, NativeTool } from "../types.js";

/** Packet id of the plan. */
export const REFUND_PLAN_PACKET = "runx.payment.refund_plan.v1";

/** `payment.refund_plan` input after schema validation. */
export interface RefundPlanInput {
  original_receipt_ref: string;
  refund_request: { amount_minor: number } & Record<string, Json>;
  settlement_family: string;
  parent_payment_authority: AuthorityTerm;
}

interface Finding {
  code: string;
  message: string;
}

const REQUEST_FIELDS = ["amount_minor", "reason", "requested_counterparty"];
const OPAQUE_MAX = 256;

/** An optional (or required) opaque request field; a bad value becomes a finding and null. */
function admitOpaque(
  value: Json | undefined,
  field: string,
  required: boolean,
  findings: Finding[],
): string | null {
  if (value === undefined && !required) return null;
  if (typeof value === "string" && value.length <= OPAQUE_MAX && opaqueReference(value)) {
    return value;
  }
  findings.push({
    code: `refund_request.${field}`,
    message: `refund_request.${field} must be an opaque non-secret reference of at most ${OPAQUE_MAX} characters`,
  });
  return null;
}

const isWildcard = (value: string | undefined): boolean =>
  value === undefined || value === "" || value.includes("*");

/** Why the parent cannot authorize this refund of this charge (empty when it can). */
function authorityProblems(
  parent: AuthorityTerm,
  charge: VerifiedCharge,
  family: string,
  amount: number,
  now: Date,
): string[] {
  let limit: EffectLimit;
  try {
    limit = paymentLimit(parent, "parent_payment_authority");
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return [error.message];
  }
  const problems: string[] = [];
  if (parent.resource_family !== "effect") problems.push("resource_family must be effect");
  if (!parent.verbs.includes("reverse")) problems.push("verbs must include reverse");
  if (!parent.capabilities.includes("effect_single_use_capability")) {
    problems.push("capabilities must include effect_single_use_capability");
  }
  if (
    limit.authorization_form !== "single_use_capability" ||
    limit.single_use_capability !== true
  ) {
    problems.push("the payment limit must be a single_use_capability authorization");
  }
  for (const key of [
    "idempotency_required",
    "recovery_required",
    "receipt_before_success",
  ] as const) {
    if (limit[key] !== true) problems.push(`the payment limit must set ${key}`);
  }
  if (limit.max_per_call_units === undefined) problems.push("max_per_call_units is required");
  else if (amount > limit.max_per_call_units) {
    problems.push(`amount ${amount} exceeds max_per_call_units ${limit.max_per_call_units}`);
  }
  if (limit.max_per_run_units === undefined && limit.max_per_period_units === undefined) {
    problems.push("an aggregate ceiling (max_per_run_units or max_per_period_units) is required");
  }
  for (const key of ["max_per_run_units", "max_per_period_units"] as const) {
    const ceiling = limit[key];
    if (ceiling !== undefined && amount > ceiling) {
      problems.push(`amount ${amount} exceeds ${key} ${ceiling}`);
    }
  }
  if (limit.unit !== charge.currency) {
    problems.push(`currency ${limit.unit} is not the charge's ${charge.currency}`);
  }
  const channels = limit.channels ?? [];
  if (channels.length === 0 || channels.some(isWildcard)) {
    problems.push("channels must name concrete rails");
  } else if (!channels.includes(family)) {
    problems.push(`channels do not include settlement family ${family}`);
  }
  if (isWildcard(limit.peer)) problems.push("peer must be concrete");
  else if (limit.peer !== charge.counterparty) {
    problems.push(`peer ${String(limit.peer)} is not the charge's payer ${charge.counterparty}`);
  }
  if (limit.operation !== REFUND_OPERATION) problems.push("operation must be refund");
  if ((limit.realm ?? null) !== (charge.realm ?? null)) {
    problems.push(
      `realm ${limit.realm ?? "(none)"} is not the charge's ${charge.realm ?? "(none)"}`,
    );
  }
  try {
    checkNotExpired(parent, now, "parent_payment_authority");
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    problems.push(error.message);
  }
  return problems;
}

/** The amount checks against the verified charge (first refusal wins, like an admission). */
function admissionFinding(charge: VerifiedCharge, amount: number): Finding | undefined {
  if (amount === 0) return { code: "refund.empty", message: "refund amount must be positive" };
  if (charge.refunded_minor > charge.amount_minor) {
    return {
      code: "refund.history_invalid",
      message: `verified refunds (${charge.refunded_minor}) exceed the charge (${charge.amount_minor})`,
    };
  }
  const remaining = charge.amount_minor - charge.refunded_minor;
  if (amount > remaining) {
    return {
      code: "refund.over_limit",
      message: `refund amount ${amount} exceeds the remaining refundable ${remaining} ${charge.currency} (charge ${charge.amount_minor}, already refunded ${charge.refunded_minor})`,
    };
  }
  return undefined;
}

/** Builds the `runx.payment.refund_plan.v1` packet data from the verified charge. */
export function refundPlan(input: RefundPlanInput, charge: VerifiedCharge, now: Date): JsonRecord {
  const findings: Finding[] = [];
  const request = input.refund_request;
  const family = input.settlement_family;
  const parent = input.parent_payment_authority;
  const amount = request.amount_minor;
  const extras = Object.keys(request).filter((key) => !REQUEST_FIELDS.includes(key));
  if (extras.length > 0) {
    findings.push({
      code: "refund_request.raw_fields",
      message: `refund_request contains unsupported fields: ${extras.sort().join(", ")}`,
    });
  }
  const reason = admitOpaque(request.reason, "reason", true, findings);
  const counterparty = admitOpaque(
    request.requested_counterparty,
    "requested_counterparty",
    false,
    findings,
  );
  if (!opaqueReference(family)) {
    findings.push({
      code: "settlement_family.unsafe",
      message: "settlement_family must be an opaque non-secret reference",
    });
  }
  if (charge.rail !== family) {
    findings.push({
      code: "refund.family",
      message: `settlement family ${family} is not the charge's ${charge.rail}`,
    });
  }
  const problems = authorityProblems(parent, charge, family, amount, now);
  if (problems.length > 0) {
    findings.push({
      code: "refund.authority",
      message: `parent_payment_authority is not a bounded single-use refund authority for this charge: ${problems.join("; ")}`,
    });
  }
  const admission = admissionFinding(charge, amount);
  if (admission !== undefined) findings.push(admission);
  if (counterparty !== null && counterparty !== charge.counterparty) {
    findings.push({
      code: "refund.counterparty_mismatch",
      message: `requested counterparty ${counterparty} is not the charge's payer ${charge.counterparty}`,
    });
  }
  const authorityDigest = hashCanonical(parent);
  const idempotencyKey = `refund:${hashCanonical({
    original_receipt_ref: charge.receipt_id,
    original_money_movement_id: charge.money_movement_id,
    receipt_proof_digest: charge.proof_digest,
    amount_minor: amount,
    target: charge.counterparty,
    settlement_family: family,
    authority_digest: authorityDigest,
  }).slice("sha256:".length)}`;
  const core: JsonRecord = {
    original_charge: {
      receipt_ref: charge.receipt_id,
      money_movement_id: charge.money_movement_id,
      proof_ref: charge.proof_ref,
      phase: "sealed",
      receipt_proof_digest: charge.proof_digest,
      refund_history_receipt_refs: charge.history_receipt_refs,
      amount_minor: charge.amount_minor,
      refunded_minor: charge.refunded_minor,
      currency: charge.currency,
      settlement_family: charge.rail,
      payer_ref: charge.counterparty,
    },
    refund_request: { amount_minor: amount, reason },
    settlement_family: family,
    refundable_bounds: {
      remaining_minor: Math.max(0, charge.amount_minor - charge.refunded_minor),
      currency: charge.currency,
    },
    authority: {
      parent_term_id: parent.term_id,
      digest: authorityDigest,
      validation: "native_refund_authority",
    },
    idempotency: { key: idempotencyKey, recovery_required: true },
  };
  const ready = findings.length === 0;
  return {
    schema: REFUND_PLAN_PACKET,
    decision: ready ? "ready_for_refund_adapter" : "blocked",
    ...core,
    adapter_handoff: ready
      ? {
          settlement_family: family,
          original_receipt_ref: charge.receipt_id,
          original_money_movement_id: charge.money_movement_id,
          original_proof_ref: charge.proof_ref,
          amount_minor: amount,
          currency: charge.currency,
          counterparty: charge.counterparty,
          idempotency_key: idempotencyKey,
          authority_term_id: parent.term_id,
        }
      : null,
    provider_status: "not_called",
    refund_status: "not_started",
    approval_status: "not_requested",
    receipt_status: "not_sealed",
    money_moved: false,
    findings: findings.map((f) => ({ code: f.code, message: f.message })),
    plan_digest: hashCanonical(core),
  };
}

/** The `payment.refund_plan` tool. */
export const paymentRefundPlanTool: NativeTool = withNamedOutput(
  defineTool<RefundPlanInput, JsonRecord>({
    name: "payment.refund_plan",
    description:
      "Plan one refund of a sealed charge: the charge and its prior refunds are read and verified from the run's receipt store, the request is bounded by the remaining refundable amount and a single-use refund authority; calls no provider and moves no money.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsPaymentRefundPlanInput,
    async run(input, ctx) {
      const charge = await verifiedCharge(ctx.receipts, input.original_receipt_ref);
      const plan = refundPlan(input, charge, ctx.now());
      return {
        output: plan,
        summary: `refund of ${input.refund_request.amount_minor} ${charge.currency} against ${charge.receipt_id}: ${plan.decision as string}`,
      };
    },
  }),
  { name: "refund_plan", packet: REFUND_PLAN_PACKET },
);
