/**
 * The effect facts a step receipt records for a money-moving or provider-mutating step: which
 * provider, operation, target, amount with its unit, idempotency key, plan digest and the
 * approval that released it, and for x402 payments whether money moved. Read from the tool's
 * own output (`provider.mutate`'s `provider_operation`, `payment.x402_pay`'s `x402_payment`),
 * never from package text. Pure.
 */
import type { JsonRecord } from "../types.js";

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const FIELDS = [
  "provider",
  "operation",
  "target",
  "amount",
  "idempotency_key",
  "plan_digest",
  "approval",
] as const;

function pick(source: JsonRecord, extra: readonly string[]): JsonRecord {
  const facts: JsonRecord = {};
  for (const key of [...FIELDS, ...extra]) facts[key] = source[key] ?? null;
  return facts;
}

/** `{effect: {...}}` for an effect step's output; `{}` for any other output. */
export function effectReceiptFacts(output: JsonRecord | undefined): JsonRecord {
  if (output === undefined) return {};
  if (isRecord(output.x402_payment)) {
    return { effect: pick(output.x402_payment, ["status", "money_moved", "payment_ref"]) };
  }
  const operation = output.provider_operation;
  const data = isRecord(operation) && isRecord(operation.data) ? operation.data : undefined;
  if (data !== undefined && data.access === "mutate") {
    return { effect: pick(data, ["status", "replayed"]) };
  }
  return {};
}
