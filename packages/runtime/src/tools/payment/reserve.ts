/**
 * `payment.reserve`: re-mints the quoted child authority beneath the parent, proves it a
 * subset, and binds a digest-derived capability and idempotency key to one downstream harness
 * and act (`runx.payment.reservation.v1`, approval pending). The reservation is recorded in
 * the effect ledger under that key, so a repeat returns the same reservation and the same key
 * with another request is refused. No rail is touched.
 */
import reserveInputSchema from "../../../schemas/tools/payment-reserve.input.schema.json" with { type: "json" };
import reserveOutputSchema from "../../../schemas/tools/payment-reserve.output.schema.json" with { type: "json" };
import { validateToolsPaymentReserveInput } from "../../generated/validate-tools-payment-reserve.input.js";
import { RuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import {
  authorityDenied,
  digestHex,
  mintChild,
  paymentLimit,
  validateParent,
  type AuthorityTerm,
  type Reference,
} from "./authority.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** Packet id of the reservation. */
export const RESERVATION_PACKET = "runx.payment.reservation.v1";

/** `payment.reserve` input after schema validation. */
export interface ReserveInput {
  payment_quote_packet: JsonRecord & {
    payment_quote: {
      quote_id: string;
      amount_minor: number;
      currency: string;
      rails: string[];
      counterparty: string;
      operation: string;
      realm?: string | null;
    };
    requested_payment_authority: AuthorityTerm;
  };
  parent_payment_authority: AuthorityTerm;
  idempotency_seed: string;
  target_harness_ref: Reference;
  target_act_id: string;
}

/** The reservation fingerprint; equal fingerprints are the same reservation. */
function reservationFingerprint(input: ReserveInput, childTermId: string): JsonRecord {
  return {
    quote_id: input.payment_quote_packet.payment_quote.quote_id,
    parent_term_id: input.parent_payment_authority.term_id,
    child_term_id: childTermId,
    idempotency_seed: input.idempotency_seed,
    target_harness_ref: input.target_harness_ref,
    target_act_id: input.target_act_id,
  };
}

/** Checks the quote and its requested authority name the same single payment. */
function checkQuoteBinding(input: ReserveInput): void {
  const quote = input.payment_quote_packet.payment_quote;
  const requested = input.payment_quote_packet.requested_payment_authority;
  const limit = paymentLimit(requested, "payment_quote_packet.requested_payment_authority");
  const mismatches: string[] = [];
  if (limit.max_per_call_units !== quote.amount_minor) mismatches.push("max_per_call_units");
  if (limit.max_per_run_units !== quote.amount_minor) mismatches.push("max_per_run_units");
  if (limit.unit !== quote.currency) mismatches.push("currency");
  if ((limit.channels ?? []).length !== 1 || limit.channels?.[0] !== quote.rails[0]) {
    mismatches.push("rail");
  }
  if (limit.peer !== quote.counterparty) mismatches.push("counterparty");
  if (limit.operation !== quote.operation) mismatches.push("operation");
  const realm = quote.realm ?? undefined;
  if (realm !== undefined && limit.realm !== realm) mismatches.push("realm");
  if (mismatches.length > 0) {
    throw authorityDenied(
      `payment quote and requested authority do not bind the same payment (${mismatches.join(", ")})`,
      "payment_quote_packet",
    );
  }
}

/** Builds the `runx.payment.reservation.v1` packet (no ledger). */
export function reservationPacket(input: ReserveInput, now: Date): JsonRecord {
  const parent = input.parent_payment_authority;
  validateParent(parent, now, "parent_payment_authority");
  checkQuoteBinding(input);
  const quote = input.payment_quote_packet.payment_quote;
  const requested = input.payment_quote_packet.requested_payment_authority;
  const { child, proof } = mintChild(parent, requested, now.toISOString());
  const digest = digestHex(reservationFingerprint(input, child.term_id));
  const decisionId = `decision-payment-${digest}`;
  const idempotencyKey = `payment:${digest}`;
  const decision: JsonRecord = {
    decision_id: decisionId,
    choice: "continue",
    inputs: { signal_refs: [], opportunity_refs: [] },
    proposed_intent: {
      purpose: "complete one bounded payment",
      legitimacy: "authorized by deterministic payment attenuation",
      success_criteria: [],
      constraints: [],
      derived_from: [],
    },
    selected_act_id: input.target_act_id,
    selected_harness_ref: input.target_harness_ref,
    justification: {
      summary: "native reservation selected the digest-bound payment act",
      evidence_refs: [],
    },
    closure: null,
    artifact_refs: [],
  };
  return {
    payment_decision: decision,
    reserved_payment_authority: {
      parent_authority: parent as unknown as JsonRecord,
      child_authority: child as unknown as JsonRecord,
      reservation_decision: decision,
      subset_proof: proof,
      child_harness_ref: input.target_harness_ref,
      spend_capability_binding: {
        child_harness_ref: input.target_harness_ref,
        act_id: input.target_act_id,
        reservation_decision_id: decisionId,
        idempotency_key: idempotencyKey,
        amount_minor: quote.amount_minor,
        currency: quote.currency,
        counterparty: quote.counterparty,
        rail: quote.rails[0] as string,
      },
      consumed_spend_capability_refs: [],
    },
    spend_capability_ref: { type: "credential", uri: `capability:payment:${digest}` },
    idempotency: { key: idempotencyKey, recovery_required: true },
    approval: { required: true, status: "pending" },
    core_requirements: [
      "payment_authority_subset",
      "reserve_before_rail",
      "receipt_before_success",
      "single_use_capability",
    ],
    open_questions: [],
  };
}

export const paymentReserveTool: NativeTool = defineTool<ReserveInput, JsonRecord>({
  name: "payment.reserve",
  description:
    "Mint and prove one single-use child payment authority from a native quote, bound to one downstream act; approval stays pending and no rail is touched.",
  mutating: true,
  scopes: ["payment:reserve"],
  inputSchema: reserveInputSchema,
  outputSchema: reserveOutputSchema,
  validate: validateToolsPaymentReserveInput,
  async run(input, ctx) {
    const packet = reservationPacket(input, ctx.now());
    const key = (packet.idempotency as JsonRecord).key as string;
    const reserved = packet.reserved_payment_authority as JsonRecord;
    const child = reserved.child_authority as JsonRecord;
    const requestDigest = hashCanonical(reservationFingerprint(input, child.term_id as string));
    const ledgerKey = `payment.reserve:${key}`;
    const prior = await ctx.effects.lookup(ledgerKey);
    if (prior !== undefined) {
      if (prior.request_digest !== requestDigest) {
        throw new RuntimeError(
          "IDEMPOTENCY_CONFLICT",
          `reservation ${key} was made for another request`,
          {
            path: "idempotency_seed",
          },
        );
      }
      return { output: prior.output, summary: `reservation ${key} (replayed)` };
    }
    await ctx.effects.record(ledgerKey, { request_digest: requestDigest, output: packet });
    return { output: packet, summary: `reserved ${key}` };
  },
});
