/**
 * The approval card's preview of an x402 payment gate (`payment.x402_pay`): the plan is
 * rebuilt from the paused step's input with the function the tool itself binds with
 * (tools/payment/x402-pay.ts `x402Plan`) and must carry the gate's plan digest; then the
 * card shows payee, operation, amount, resource and the sealed payment reference.
 */
import { isRuntimeError } from "../errors.js";
import { providerGateId } from "../tools/provider/provider.js";
import { x402Plan } from "../tools/payment/x402-pay.js";
import type { JsonRecord } from "../tools/types.js";
import { providerEffectFacts } from "./effect-facts.js";
import { formatAmount, previewFields, unavailable, type PreviewResult } from "./effect-preview.js";

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The preview of one x402 pay gate from the tool input its step resolves to now. */
export function x402Preview(
  gate: { id: string; summary?: unknown },
  input: JsonRecord,
): PreviewResult {
  let rebuilt: { plan: JsonRecord; digest: string };
  try {
    rebuilt = x402Plan(input);
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return unavailable(`the paused payment no longer binds one plan: ${error.message}`);
  }
  const summary = typeof gate.summary === "object" && gate.summary !== null ? gate.summary : {};
  const bound = (summary as { plan_digest?: unknown }).plan_digest;
  if (providerGateId(rebuilt.digest) !== gate.id || rebuilt.digest !== bound) {
    return unavailable(
      `the plan recovered from the paused run (${rebuilt.digest}) is not the plan the gate binds`,
    );
  }
  const { plan } = rebuilt;
  const money = plan.amount as { units: number; unit: string };
  const amount = { ...money, text: formatAmount(money.units, money.unit) };
  const operation = text(plan.operation);
  const target = text(plan.target);
  return {
    unavailable: null,
    preview: {
      kind: "provider_effect",
      headline: `${operation} of ${amount.text} to ${target}`,
      onApprove: `runx re-reads the price at ${text(plan.resource)}, refuses if it changed, and pays ${amount.text} to ${target} over x402 once.`,
      onDeny: "The run seals declined; no payment is sent.",
      fields: previewFields({
        resource: plan.resource,
        payee: plan.target,
        operation: plan.operation,
        payment_ref: plan.payment_ref,
        idempotency_key: plan.idempotency_key,
      }),
      amount,
      effect: providerEffectFacts({
        provider: "x402",
        operation,
        target,
        amount: money,
        idempotency_key: text(plan.idempotency_key) || null,
        plan_digest: rebuilt.digest,
        approval: { state: "pending", gate_id: gate.id, gate_type: "payment_spend", actor: null },
      }),
      verified: `plan digest ${rebuilt.digest} matches the gate`,
    },
  };
}
