/**
 * The approval card's definition list: the runtime-built effect summary's well-known fields
 * (snake_case or camelCase) under fixed labels, in a fixed order; the rest stays available
 * as raw JSON.
 */
export interface SummaryRow {
  label: string;
  value: string;
  mono: boolean;
}

const FIELDS: Array<{ label: string; keys: string[]; mono: boolean }> = [
  { label: "Provider", keys: ["provider"], mono: false },
  { label: "Operation", keys: ["operation"], mono: false },
  { label: "Target", keys: ["target"], mono: true },
  { label: "Scopes", keys: ["scopes", "scope"], mono: false },
  // Who a provider effect runs as: the grant its driver selected and the principal holding it
  // (not the payload's own principal, which the effect preview shows).
  { label: "Provider grant", keys: ["grant_ref", "grantRef"], mono: true },
  { label: "Grant held by", keys: ["principal_ref", "principalRef"], mono: true },
  { label: "Payload digest", keys: ["payload_digest", "payloadDigest"], mono: true },
  { label: "Plan digest", keys: ["plan_digest", "planDigest"], mono: true },
  { label: "Amount", keys: ["amount", "amount_minor", "amountMinor"], mono: false },
];

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** Renders one summary value as text. */
export function summaryText(value: unknown, key = ""): string {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) {
    return value.length === 0 ? "none" : value.map((v) => summaryText(v)).join(", ");
  }
  if (isRecord(value)) {
    // A typed amount as provider.mutate binds it: {units, unit}.
    if (typeof value.units === "number" && typeof value.unit === "string") {
      return `${value.units} ${value.unit}`;
    }
    // Money: {value|amount|minor, currency}
    const amount = value.value ?? value.amount ?? value.minor ?? value.amount_minor;
    const currency = value.currency;
    if (
      (typeof amount === "number" || typeof amount === "string") &&
      typeof currency === "string"
    ) {
      return `${String(amount)} ${currency}`;
    }
    return JSON.stringify(value);
  }
  const scalar = typeof value === "string" ? value : JSON.stringify(value);
  if (key === "amount_minor" || key === "amountMinor") return `${scalar} (minor units)`;
  return scalar;
}

/** The known rows present in `summary` (skipping absent fields). */
export function summaryRows(summary: unknown): SummaryRow[] {
  if (!isRecord(summary)) return [];
  const rows: SummaryRow[] = [];
  for (const field of FIELDS) {
    const key = field.keys.find((k) => summary[k] !== undefined && summary[k] !== null);
    if (key === undefined) continue;
    const value = summary[key];
    if (key === "amount_minor" || key === "amountMinor") {
      const currency = summary.currency;
      rows.push({
        label: field.label,
        value:
          typeof currency === "string"
            ? `${String(value)} ${currency} (minor units)`
            : summaryText(value, key),
        mono: field.mono,
      });
      continue;
    }
    rows.push({ label: field.label, value: summaryText(value, key), mono: field.mono });
  }
  return rows;
}
