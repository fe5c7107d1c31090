/**
 * The effect facts a step receipt records for a money-moving or provider-mutating step: which
 * provider, operation, target, amount with its unit, idempotency key, plan digest and the
 * approval that released it, and for x402 payments and provider payment operations whether
 * money moved. Read from the tool's
 * own output (`provider.mutate`'s `provider_operation`, `payment.x402_pay`'s `x402_payment`),
 * never from package text. Pure.
 */
import type { JsonRecord } from "../types.js";
import { isRecord } from "../packet.js";
import { paymentEffectOf } from "./settled-payment.js";

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

/**
 * Whether a payment mutation moved money: only when the provider answered with success and its
 * own result says so (a replay repeats the recorded answer, marked `replayed`, as x402 does).
 * A caller cannot claim it (`settled-payment.ts` refuses `input.money_moved`), and the mock
 * family's provider never reports it, so mock charges and refunds record `false`.
 */
function providerMovedMoney(data: JsonRecord): boolean {
  const result = isRecord(data.result) ? data.result : {};
  return data.status === "success" && result.money_moved === true;
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
    const facts = pick(data, ["status", "replayed"]);
    if (paymentEffectOf(typeof data.operation === "string" ? data.operation : "") !== undefined) {
      facts.money_moved = providerMovedMoney(data);
    }
    return { effect: facts };
  }
  return {};
}
