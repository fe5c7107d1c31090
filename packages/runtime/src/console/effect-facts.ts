/**
 * The provider evidence of one effect, in words: provider, operation, target, amount with
 * its unit, idempotency key, plan digest and the approval that releases (or released) it.
 * One function builds it for both places a person reads it — the console's approval card,
 * from the pending gate (console/effect-preview.ts), and `runx history --detail`, from a
 * sealed `provider.mutate` step's output, which the step receipt's signed output commitment
 * covers (services/history.ts) — so the two show the same preview. Pure.
 */
/** One field of a preview: where it sits, its name in words, its value in full. */
export interface PreviewField {
  /** Dotted path in the payload or inputs (`recipient`, `address.city`, `tags[0]`). */
  path: string;
  label: string;
  value: string;
}

/** A typed amount with the text a person reads. */
export interface PreviewAmount {
  units: number;
  unit: string;
  /** `$12.50` for `1250 usd_cents`; the units and unit themselves when the unit is no currency. */
  text: string;
}

/** Currency codes the platform can format (ISO 4217). */
let currencies: ReadonlySet<string> | undefined;
function isCurrency(code: string): boolean {
  currencies ??= new Set(Intl.supportedValuesOf("currency"));
  return currencies.has(code);
}

/**
 * Formats a typed amount. Upstream's units are minor units: `usd_cents` (or `<code>_minor`)
 * names a currency's minor unit, and an ISO 4217 code as the unit (`USD`, the payment lane's
 * `amount_minor` + `currency`) counts that currency's minor units. Any other unit is shown as
 * it is (`1250 tokens`): guessing a scale would misstate the amount.
 */
export function formatAmount(units: number, unit: string): string {
  const raw = `${units} ${unit}`;
  if (!Number.isSafeInteger(units) || units < 0) return raw;
  const minor = /^([A-Za-z]{3})_(cents|minor)$/.exec(unit);
  const code = (minor?.[1] ?? unit).toUpperCase();
  if ((minor === null && !/^[A-Z]{3}$/.test(unit)) || !isCurrency(code)) return raw;
  const format = new Intl.NumberFormat("en-US", { style: "currency", currency: code });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  // "cents" is a hundredth; a currency without two minor digits has no cents to count.
  if (minor?.[2] === "cents" && digits !== 2) return raw;
  return format.format(units / 10 ** digits);
}

/** Where the releasing approval stands. */
export type EffectApprovalState = "pending" | "approved" | "declined" | "not_required";

/** The approval that releases an effect. */
export interface EffectApproval {
  state: EffectApprovalState;
  gate_id: string | null;
  gate_type: string | null;
  /** Who decided (the console operator, or the host that attested it), when recorded. */
  actor: string | null;
}

/** The evidence of one provider effect. */
export interface EffectFacts {
  provider: string;
  operation: string;
  target: string;
  amount: PreviewAmount | null;
  idempotency_key: string | null;
  plan_digest: string;
  approval: EffectApproval;
  /** The same facts as labelled lines, in this fixed order (what both surfaces render). */
  fields: PreviewField[];
}

/** What the facts are built from (a pending gate or a sealed effect's output). */
export interface EffectFactsSource {
  provider: string;
  operation: string;
  target: string;
  amount?: { units: number; unit: string } | null;
  idempotency_key?: string | null;
  plan_digest: string;
  approval: EffectApproval;
}

const APPROVAL_WORDS: Record<EffectApprovalState, string> = {
  pending: "pending — this approval releases it",
  approved: "approved",
  declined: "declined",
  not_required: "none requested (the provider grant alone admitted it)",
};

function approvalText(approval: EffectApproval): string {
  const parts = [APPROVAL_WORDS[approval.state]];
  if (approval.actor !== null) parts.push(`by ${approval.actor}`);
  if (approval.gate_id !== null) parts.push(`(gate ${approval.gate_id})`);
  return parts.join(" ");
}

/** The labels of an effect's lines, in order (the catalog lists them before any run). */
export const EFFECT_FACT_LABELS: readonly string[] = [
  "Provider",
  "Operation",
  "Target",
  "Amount",
  "Idempotency key",
  "Plan digest",
  "Releasing approval",
];

/** Builds the evidence of one effect and its labelled lines. */
export function providerEffectFacts(source: EffectFactsSource): EffectFacts {
  const amount =
    source.amount !== undefined && source.amount !== null
      ? {
          units: source.amount.units,
          unit: source.amount.unit,
          text: formatAmount(source.amount.units, source.amount.unit),
        }
      : null;
  const key = source.idempotency_key ?? null;
  const line = (path: string, label: string, value: string): PreviewField => ({
    path,
    label,
    value,
  });
  return {
    provider: source.provider,
    operation: source.operation,
    target: source.target,
    amount,
    idempotency_key: key,
    plan_digest: source.plan_digest,
    approval: { ...source.approval },
    fields: [
      line("provider", "Provider", source.provider),
      line("operation", "Operation", source.operation),
      line("target", "Target", source.target),
      line(
        "amount",
        "Amount",
        amount === null
          ? "none (not a payment)"
          : `${amount.text} (${amount.units} ${amount.unit})`,
      ),
      line("idempotency_key", "Idempotency key", key ?? "none"),
      line("plan_digest", "Plan digest", source.plan_digest),
      line("approval", "Releasing approval", approvalText(source.approval)),
    ],
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/**
 * The evidence of a sealed `provider.mutate` effect from its `runx.provider.operation.v1`
 * output, or of an x402 payment from its `runx.payment.x402_payment.v1` record, or null when
 * the value is neither. A declined gate has no
 * operation output (nothing ran), so it is never an effect here.
 */
export function sealedEffectFacts(
  operation: unknown,
  /** Approvers the step receipt's signed authority terms name (they win over the output's). */
  signedApprovers: readonly string[] = [],
): EffectFacts | null {
  if (!isRecord(operation)) return null;
  // An x402 payment record (`payment.x402_pay`) carries the same evidence fields as a
  // provider mutation's operation output; a declined or refused payment has no record.
  const payment = operation.schema === "runx.payment.x402_payment.v1";
  if (!payment && operation.schema !== "runx.provider.operation.v1") return null;
  if (!payment && operation.access !== "mutate") return null;
  const provider = str(operation.provider);
  const op = str(operation.operation);
  const target = str(operation.target);
  const plan = str(operation.plan_digest);
  if (provider === null || op === null || target === null || plan === null) return null;
  const a = operation.approval;
  const approval: EffectApproval = isRecord(a)
    ? {
        state: a.approved === true ? "approved" : "declined",
        gate_id: str(a.gate_id),
        gate_type: str(a.gate_type),
        actor: signedApprovers.length > 0 ? signedApprovers.join(", ") : str(a.actor),
      }
    : { state: "not_required", gate_id: null, gate_type: null, actor: null };
  const amount = operation.amount;
  return providerEffectFacts({
    provider,
    operation: op,
    target,
    amount:
      isRecord(amount) && typeof amount.units === "number" && typeof amount.unit === "string"
        ? { units: amount.units, unit: amount.unit }
        : null,
    idempotency_key: str(operation.idempotency_key),
    plan_digest: plan,
    approval,
  });
}
