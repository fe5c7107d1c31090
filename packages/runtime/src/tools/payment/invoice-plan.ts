/**
 * `payment.invoice_plan` (the `settle-invoice` skill): validates one invoice, its payee
 * identity (resolved against the workspace's registered payees) and rail, runs the quote rules
 * against the parent authority, and returns a `spend` handoff only when nothing failed
 * (`runx.payment.invoice_settlement_plan.v1`, decision `ready_for_spend` or `blocked`). Moves
 * no money.
 */
import invoiceInputSchema from "../../../schemas/tools/payment-invoice-plan.input.schema.json" with { type: "json" };
import invoiceOutputSchema from "../../../schemas/tools/payment-invoice-plan.output.schema.json" with { type: "json" };
import { validateToolsPaymentInvoicePlanInput } from "../../generated/validate-tools-payment-invoice-plan.input.js";
import { isRuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { defineTool } from "../define-tool.js";
import { isRecord } from "../packet.js";
import { authorityDenied, type AuthorityTerm } from "./authority.js";
import { opaqueReference } from "./opaque-reference.js";
import { quotePacket, type PaymentSignal, type QuoteInput } from "./quote.js";
import type { Json, JsonRecord, NativeTool, RegisteredPayee } from "../types.js";

/** Packet id of the invoice settlement plan. */
export const INVOICE_PLAN_PACKET = "runx.payment.invoice_settlement_plan.v1";

/** Rails with a canonical `spend` runner (the runner has the rail's name). */
export const SPEND_RAILS: readonly string[] = ["mock", "mpp", "stripe-spt"];

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
