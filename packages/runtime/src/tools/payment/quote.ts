/**
 * `payment.quote` (the `spend` skill's first step): binds one payment signal to the caller's
 * parent authority — amount within the per-call (and caller) ceiling and the aggregate
 * ceilings, currency = limit unit, counterparty = peer, operation, realm, and one rail the
 * parent allows (signal rail, else the first preferred rail the parent allows, else the
 * parent's first rail) — and emits `runx.payment.quote.v1` with the requested single-use child
 * authority. `payment.invoice_plan` runs the same rules. Moves no money, contacts no rail.
 */
import quoteInputSchema from "../../../schemas/tools/payment-quote.input.schema.json" with { type: "json" };
import quoteOutputSchema from "../../../schemas/tools/payment-quote.output.schema.json" with { type: "json" };
import { validateToolsPaymentQuoteInput } from "../../generated/validate-tools-payment-quote.input.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import {
  authorityDenied,
  digestHex,
  requestedAuthority,
  validateParent,
  type AuthorityTerm,
  type QuotedPayment,
} from "./authority.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** Packet id of the quote. */
export const QUOTE_PACKET = "runx.payment.quote.v1";

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
