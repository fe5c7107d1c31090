/**
 * The payment planning tools of the `spend` and `settle-invoice` skills. None of them moves
 * money, contacts a rail or approves anything.
 *
 * - `payment.quote` binds one payment signal to the caller's parent authority: amount within
 *   the per-call (and caller) ceiling and the aggregate ceilings, currency = limit unit,
 *   counterparty = peer, operation, realm, and one rail the parent allows (signal rail, else the
 *   first preferred rail the parent allows, else the parent's first rail). It emits
 *   `runx.payment.quote.v1` with the requested single-use child authority.
 * - `payment.reserve` re-mints that child beneath the parent, proves it a subset, and binds a
 *   digest-derived capability and idempotency key to one downstream harness and act
 *   (`runx.payment.reservation.v1`, approval pending). The reservation is recorded in the
 *   effect ledger under that key, so a repeat returns the same reservation.
 * - `payment.invoice_plan` validates an invoice, its payee identity and rail, runs the quote
 *   rules against the parent authority, and returns a `spend` handoff only when nothing failed
 *   (`runx.payment.invoice_settlement_plan.v1`, decision `ready_for_spend` or `blocked`).
 */
import invoiceInputSchema from "../../schemas/tools/payment-invoice-plan.input.schema.json" with { type: "json" };
import invoiceOutputSchema from "../../schemas/tools/payment-invoice-plan.output.schema.json" with { type: "json" };
import quoteInputSchema from "../../schemas/tools/payment-quote.input.schema.json" with { type: "json" };
import quoteOutputSchema from "../../schemas/tools/payment-quote.output.schema.json" with { type: "json" };
import reserveInputSchema from "../../schemas/tools/payment-reserve.input.schema.json" with { type: "json" };
import reserveOutputSchema from "../../schemas/tools/payment-reserve.output.schema.json" with { type: "json" };
import { validateToolsPaymentInvoicePlanInput } from "../generated/validate-tools-payment-invoice-plan.input.js";
import { validateToolsPaymentQuoteInput } from "../generated/validate-tools-payment-quote.input.js";
import { validateToolsPaymentReserveInput } from "../generated/validate-tools-payment-reserve.input.js";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { hashCanonical } from "../receipts/canonical.js";
import { defineTool } from "./define-tool.js";
import { artifactEnvelope } from "../graph/artifacts.js";
import { isRecord } from "./packet.js";
import {
  authorityDenied,
  digestHex,
  mintChild,
  paymentLimit,
  requestedAuthority,
  validateParent,
  type AuthorityTerm,
  type QuotedPayment,
  type Reference,
} from "./payment-authority.js";
import type { Json, JsonRecord, NativeTool, RegisteredPayee } from "./types.js";

export const QUOTE_PACKET = "runx.payment.quote.v1";
export const RESERVATION_PACKET = "runx.payment.reservation.v1";
export const INVOICE_PLAN_PACKET = "runx.payment.invoice_settlement_plan.v1";

/** Rails with a canonical `spend` runner (the runner has the rail's name). */
export const SPEND_RAILS: readonly string[] = ["mock", "mpp", "stripe-spt"];

/** `runx.payment.signal.v1` after schema validation. */
export interface PaymentSignal {
  signal_type?: string;
  challenge_id?: string;
  invoice_ref?: string;
  amount_minor: number;
  currency: string;
  rail?: string;
  counterparty?: string;
  operation?: string;
  realm?: string;
}

/** `payment.quote` input after schema validation. */
export interface QuoteInput {
  payment_signal: PaymentSignal;
  parent_payment_authority: AuthorityTerm;
  realm?: string;
  rail_preferences?: string[];
  max_per_call_units?: number;
  currency?: string;
  operation?: string;
  counterparty?: string;
  idempotency_seed: string;
}

type SignalField = "currency" | "counterparty" | "operation" | "realm";

/** The value of a field stated by the input, the signal, or both (which must agree). */
function consistent(input: QuoteInput, field: SignalField): string | undefined {
  const explicit = input[field];
  const observed = input.payment_signal[field];
  if (explicit !== undefined && observed !== undefined && explicit !== observed) {
    throw authorityDenied(
      `${field} input ${explicit} does not match payment_signal.${field} ${observed}`,
      field,
    );
  }
  const value = (explicit ?? observed)?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function required(input: QuoteInput, field: SignalField): string {
  const value = consistent(input, field);
  if (value === undefined) {
    throw authorityDenied(`${field} is required in the input or the payment signal`, field);
  }
  return value;
}

/** Builds the `runx.payment.quote.v1` packet; throws INPUT_INVALID when the parent does not allow it. */
export function quotePacket(input: QuoteInput, now: Date): JsonRecord {
  const parent = input.parent_payment_authority;
  const limit = validateParent(parent, now, "parent_payment_authority");
  const signal = input.payment_signal;
  const amount = signal.amount_minor;
  if (amount <= 0) {
    throw authorityDenied(
      "payment_signal.amount_minor must be greater than zero",
      "payment_signal.amount_minor",
    );
  }
  if (input.max_per_call_units !== undefined && amount > input.max_per_call_units) {
    throw authorityDenied(
      `payment amount ${amount} exceeds the caller max_per_call_units ${input.max_per_call_units}`,
      "max_per_call_units",
    );
  }
  for (const key of ["max_per_call_units", "max_per_run_units", "max_per_period_units"] as const) {
    const ceiling = limit[key];
    if (ceiling !== undefined && amount > ceiling) {
      throw authorityDenied(
        `payment amount ${amount} exceeds the parent ${key} ceiling ${ceiling}`,
        `parent_payment_authority.bounds.effect_limits.${key}`,
      );
    }
  }
  const currency = required(input, "currency");
  if (currency !== limit.unit) {
    throw authorityDenied(
      `payment currency ${currency} is outside the parent currency ${limit.unit}`,
      "currency",
    );
  }
  const counterparty = required(input, "counterparty");
  if (counterparty !== limit.peer) {
    throw authorityDenied(
      `payment counterparty ${counterparty} is not the parent authority's peer ${String(limit.peer)}`,
      "counterparty",
    );
  }
  const operation = required(input, "operation");
  if (operation !== limit.operation) {
    throw authorityDenied(
      `payment operation ${operation} is not the parent authority's operation ${String(limit.operation)}`,
      "operation",
    );
  }
  const realm = consistent(input, "realm") ?? null;
  if (limit.realm !== undefined && realm !== limit.realm) {
    throw authorityDenied(
      `payment realm ${realm ?? "(none)"} is not the parent authority's realm ${limit.realm}`,
      "realm",
    );
  }
  const rail = selectRail(input, limit.channels ?? []);
  const payment: QuotedPayment = {
    amount_minor: amount,
    currency,
    rail,
    counterparty,
    operation,
    realm,
  };
  const requested = requestedAuthority(parent, limit, payment, input.idempotency_seed);
  const quoteId = `quote-${digestHex({
    ...payment,
    idempotency_seed: input.idempotency_seed,
    parent_term_id: parent.term_id,
  })}`;
  const signalDigest = hashCanonical(signal);
  const sourceRef =
    signal.challenge_id !== undefined ? `signal:${signal.challenge_id}` : signalDigest;
  return {
    payment_quote: {
      quote_id: quoteId,
      amount_minor: amount,
      currency,
      rails: [rail],
      counterparty,
      operation,
      realm,
      observed_at: now.toISOString(),
    },
    requested_payment_authority: requested as unknown as JsonRecord,
    challenge_evidence: { source_refs: [sourceRef], signal_digest: signalDigest, redactions: [] },
    risk_notes: [],
    open_questions: [],
  };
}

function selectRail(input: QuoteInput, channels: readonly string[]): string {
  const preferences = input.rail_preferences ?? [];
  const signalRail = input.payment_signal.rail;
  if (signalRail !== undefined) {
    if (preferences.length > 0 && !preferences.includes(signalRail)) {
      throw authorityDenied(
        `payment signal rail ${signalRail} is outside the caller rail_preferences`,
        "payment_signal.rail",
      );
    }
    if (!channels.includes(signalRail)) {
      throw authorityDenied(
        `payment signal rail ${signalRail} is outside the parent authority rails (${channels.join(", ")})`,
        "payment_signal.rail",
      );
    }
    return signalRail;
  }
  if (preferences.length > 0) {
    const preferred = preferences.find((rail) => channels.includes(rail));
    if (preferred === undefined) {
      throw authorityDenied(
        "none of the caller rail_preferences is allowed by the parent authority",
        "rail_preferences",
      );
    }
    return preferred;
  }
  return channels[0] as string;
}

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

/** `payment.invoice_plan` input after schema validation. */
export interface InvoiceInput {
  invoice_ref: string;
  amount_minor: number;
  currency: string;
  payee: JsonRecord;
  rail: string;
  rail_profile_ref: string;
  parent_payment_authority: AuthorityTerm;
  idempotency_seed: string;
  realm?: string;
  payment_admission?: JsonRecord;
}

interface Finding {
  code: string;
  message: string;
}

const PAYEE_FIELDS = ["name", "party_ref", "settlement_ref", "settlement_digest"];

/** An opaque, non-secret reference: no whitespace, not token- or key-shaped. */
export function opaqueReference(value: string): boolean {
  const lower = value.toLowerCase();
  return (
    value !== "" &&
    value.length <= 512 &&
    !/\s/.test(value) &&
    !["sk-", "sk_", "rk_", "bearer", "-----begin"].some((p) => lower.startsWith(p))
  );
}

const text = (value: Json | undefined): string | undefined =>
  typeof value === "string" ? value.trim() : undefined;

/** Admits the payee identity; raw account fields and ambiguity become findings. */
function admitPayee(payee: JsonRecord, findings: Finding[]): JsonRecord {
  const extras = Object.keys(payee).filter((key) => !PAYEE_FIELDS.includes(key));
  if (extras.length > 0) {
    findings.push({
      code: "payee.raw_fields",
      message: `payee contains unsupported fields: ${extras.sort().join(", ")}`,
    });
  }
  const admitted: JsonRecord = {};
  const name = text(payee.name);
  if (name === undefined || name === "" || name.length > 256) {
    findings.push({ code: "payee.name", message: "payee.name is required (1-256 characters)" });
  } else admitted.name = name;
  const party = text(payee.party_ref);
  if (party === undefined || !opaqueReference(party)) {
    findings.push({
      code: "payee.party_ref",
      message: "payee.party_ref must be an opaque non-secret reference",
    });
  } else admitted.party_ref = party;
  const settlementRef = text(payee.settlement_ref);
  const settlementDigest = text(payee.settlement_digest);
  const refOk = settlementRef !== undefined && opaqueReference(settlementRef);
  const digestOk = settlementDigest !== undefined && /^sha256:[0-9a-f]{64}$/.test(settlementDigest);
  if (refOk === digestOk || (settlementRef !== undefined && settlementDigest !== undefined)) {
    findings.push({
      code: "payee.settlement",
      message: "payee requires exactly one opaque settlement_ref or sha256 settlement_digest",
    });
  }
  if (refOk) admitted.settlement_ref = settlementRef;
  if (digestOk) admitted.settlement_digest = settlementDigest;
  return admitted;
}

/**
 * Resolves an admitted payee against the workspace's registered payees: its `party_ref` must
 * name one, and its name and settlement reference must be that registration's. A payee the
 * invoice describes differently from its registration (another account for the same party)
 * is refused as firmly as an unknown one.
 */
function resolvePayee(
  payee: JsonRecord,
  registered: readonly RegisteredPayee[],
  findings: Finding[],
): void {
  if (typeof payee.party_ref !== "string") return;
  const registration = registered.find((candidate) => candidate.party_ref === payee.party_ref);
  if (registration === undefined) {
    findings.push({
      code: "payee.unregistered",
      message: `payee ${payee.party_ref} is not a registered payee of this workspace (.runx/config.json payments.payees)`,
    });
    return;
  }
  const differs = (["name", "settlement_ref", "settlement_digest"] as const).filter(
    (key) => (payee[key] ?? null) !== (registration[key] ?? null),
  );
  if (differs.length > 0) {
    findings.push({
      code: "payee.registration_mismatch",
      message: `payee ${payee.party_ref} differs from its registration in ${differs.join(", ")}`,
    });
  }
}

/**
 * Builds the invoice settlement plan. With `registered` (the workspace's payee registry) the
 * payee must also resolve to a registered payee; without one only its shape is checked.
 */
export function invoicePlan(
  input: InvoiceInput,
  now: Date,
  registered?: readonly RegisteredPayee[],
): JsonRecord {
  const findings: Finding[] = [];
  const payee = admitPayee(input.payee, findings);
  if (registered !== undefined) resolvePayee(payee, registered, findings);
  const runner = SPEND_RAILS.includes(input.rail) ? input.rail : null;
  if (runner === null) {
    findings.push({
      code: "rail.unsupported",
      message: `rail ${input.rail} has no canonical spend runner (${SPEND_RAILS.join(", ")})`,
    });
  }
  const signal: JsonRecord = {
    signal_type: "invoice",
    challenge_id: input.invoice_ref,
    invoice_ref: input.invoice_ref,
    amount_minor: input.amount_minor,
    currency: input.currency,
    rail: input.rail,
    operation: "invoice.settle",
  };
  if (typeof payee.party_ref === "string") signal.counterparty = payee.party_ref;
  if (input.realm !== undefined) signal.realm = input.realm;
  try {
    const quoteInput: QuoteInput = {
      payment_signal: signal as unknown as PaymentSignal,
      parent_payment_authority: input.parent_payment_authority,
      idempotency_seed: input.idempotency_seed,
    };
    if (input.realm !== undefined) quoteInput.realm = input.realm;
    quotePacket(quoteInput, now);
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    findings.push({ code: "authority.denied", message: error.message });
  }
  const ready = findings.length === 0;
  let downstream: JsonRecord | null = null;
  if (ready) {
    const inputs: JsonRecord = {
      payment_signal: signal,
      parent_payment_authority: input.parent_payment_authority as unknown as JsonRecord,
      rail_profile_ref: input.rail_profile_ref,
      idempotency_seed: input.idempotency_seed,
    };
    if (input.realm !== undefined) inputs.realm = input.realm;
    if (input.payment_admission !== undefined) inputs.payment_admission = input.payment_admission;
    downstream = { skill: "spend", runner, inputs };
  }
  const planDigest = hashCanonical({
    invoice_ref: input.invoice_ref,
    amount_minor: input.amount_minor,
    currency: input.currency,
    payee,
    rail: input.rail,
    rail_profile_ref: input.rail_profile_ref,
    parent_term_id: input.parent_payment_authority.term_id,
    idempotency_seed: input.idempotency_seed,
  });
  return {
    schema: INVOICE_PLAN_PACKET,
    decision: ready ? "ready_for_spend" : "blocked",
    invoice: {
      invoice_ref: input.invoice_ref,
      amount_minor: input.amount_minor,
      currency: input.currency,
    },
    payee,
    rail: input.rail,
    authority: {
      parent_term_id: input.parent_payment_authority.term_id,
      validation: "native_payment_quote",
    },
    payment_signal: signal,
    idempotency_seed: input.idempotency_seed,
    downstream,
    provider_effect: { status: "not_started", money_moved: false },
    findings: findings.map((f) => ({ code: f.code, message: f.message })),
    plan_digest: planDigest,
  };
}

export const paymentQuoteTool: NativeTool = defineTool<QuoteInput, JsonRecord>({
  name: "payment.quote",
  description:
    "Normalize one payment signal and derive a bounded quote and requested single-use authority from the caller's parent authority; moves no money.",
  mutating: false,
  scopes: [],
  inputSchema: quoteInputSchema,
  outputSchema: quoteOutputSchema,
  validate: validateToolsPaymentQuoteInput,
  run(input, ctx) {
    const packet = quotePacket(input, ctx.now());
    const quote = packet.payment_quote as JsonRecord;
    return Promise.resolve({
      output: packet,
      summary: `quoted ${quote.amount_minor as number} ${quote.currency as string} on ${(quote.rails as string[]).join("")}`,
    });
  },
});

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

export const paymentInvoicePlanTool: NativeTool = defineTool<InvoiceInput, JsonRecord>({
  name: "payment.invoice_plan",
  description:
    "Validate one invoice (payee identity, rail, parent payment authority) and prepare a canonical spend handoff without moving money.",
  mutating: false,
  scopes: [],
  inputSchema: invoiceInputSchema,
  outputSchema: invoiceOutputSchema,
  validate: validateToolsPaymentInvoicePlanInput,
  run(input, ctx) {
    if (!isRecord(input.payee)) throw authorityDenied("payee must be an object", "payee");
    const plan = invoicePlan(input, ctx.now(), ctx.payees);
    return Promise.resolve({
      output: { settlement_plan: artifactEnvelope(plan) },
      summary: `invoice ${input.invoice_ref}: ${plan.decision as string}`,
    });
  },
});

/** The payment planning tools. */
export function paymentTools(): NativeTool[] {
  return [paymentQuoteTool, paymentReserveTool, paymentInvoicePlanTool];
}
