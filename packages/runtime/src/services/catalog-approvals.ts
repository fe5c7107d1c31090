/**
 * The approvals a skill asks for, read from its X.yaml before any run, for the console's
 * catalog: each `provider.mutate` step (every provider mutation pauses), each x402 payment step
 * (`payment.x402_pay` always pauses for the spend) and each graph `approval` step, with what
 * the approver will be shown. The labels are the ones the approval card
 * renders (console/effect-facts.ts), so the catalog previews the card itself. Pure.
 */
import { EFFECT_FACT_LABELS } from "../console/effect-facts.js";
import { fieldLabel } from "../console/effect-preview.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonValue } from "../parser/json.js";
import type { SkillPackage } from "../parser/package.js";

/**
 * The grant and principal a provider mutation's gate binds, as the approval card's gate facts
 * label them (apps/web/src/lib/summary.ts).
 */
export const PROVIDER_AUTHORITY_LABELS: readonly string[] = ["Provider grant", "Grant held by"];

/** One approval a runner asks for. */
export interface CatalogApproval {
  step_id: string;
  kind: "provider_effect" | "payment_spend" | "approval_step";
  /** `outbox message.send on the channel input`, in words. */
  headline: string;
  gate_type: string | null;
  /** The lines the approval card shows, in order. */
  shows: string[];
}

/** A declared value in words: `$input.channel` → "the channel input". */
function declared(value: JsonValue | undefined): string {
  if (typeof value !== "string") return "a value";
  const input = /^\$input\.([A-Za-z0-9_.-]+)$/.exec(value);
  if (input !== null) return `the ${input[1]} input`;
  const step = /^\$steps\.([A-Za-z0-9_-]+)\./.exec(value);
  if (step !== null) return `a value from step ${step[1]}`;
  return value;
}

/** What each runner's graph asks an approver to decide. */
export function approvalsOf(runner: SkillPackage["runners"][string]): CatalogApproval[] {
  if (runner.type !== "graph") return [];
  const out: CatalogApproval[] = [];
  for (const step of runner.graph.steps) {
    const id = typeof step.id === "string" ? step.id : "?";
    const inputs = isJsonObject(step.inputs) ? step.inputs : {};
    // Every provider mutation pauses for its exact plan (tools/provider.ts), worded or not.
    if (step.tool === "provider.mutate") {
      const payload = isJsonObject(inputs.input) ? Object.keys(inputs.input) : [];
      const operation = declared(inputs.operation);
      out.push({
        step_id: id,
        kind: "provider_effect",
        headline: `${operation} on ${declared(inputs.target)} at ${declared(inputs.expected_provider)}`,
        gate_type:
          isJsonObject(inputs.approval) && typeof inputs.approval.type === "string"
            ? inputs.approval.type
            : "provider_effect",
        shows: [
          ...EFFECT_FACT_LABELS,
          ...PROVIDER_AUTHORITY_LABELS,
          ...(operation.startsWith("message.")
            ? ["Message: audience, channel, content digest, consent basis"]
            : []),
          ...payload.map((key) => `Payload: ${fieldLabel(key)}`),
        ],
      });
    }
    if (step.tool === "payment.x402_pay") {
      // The card of an x402 gate (console/x402-preview.ts) shows these, bound to the plan.
      out.push({
        step_id: id,
        kind: "payment_spend",
        headline: `an x402 payment for ${declared(inputs.resource_url)}, at the price the resource quotes`,
        gate_type: "payment_spend",
        shows: ["Amount", "Resource", "Payee", "Operation", "Payment ref", "Idempotency key"],
      });
    }
    const run = isJsonObject(step.run) ? step.run : undefined;
    if (run?.type === "approval") {
      out.push({
        step_id: id,
        kind: "approval_step",
        headline: `the ${typeof inputs.gate_type === "string" ? inputs.gate_type : "approval"} gate of step ${id}`,
        gate_type: typeof inputs.gate_type === "string" ? inputs.gate_type : null,
        shows: [
          "Summary",
          ...Object.keys(inputs)
            .filter((k) => k !== "summary")
            .map(fieldLabel),
        ],
      });
    }
  }
  return out;
}
