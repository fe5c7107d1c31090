/**
 * The provider effects of one run for `runx history --detail`: every `provider.mutate` step's
 * evidence (console/effect-facts.ts, the function the console's approval card uses), with
 * whether the step's signed receipt commits to it. The state store's step output is local
 * state, not signed; it counts as evidence only when its canonical digest is the output
 * commitment of the step's receipt, which its signature covers.
 */
import { sealedEffectFacts } from "../console/effect-facts.js";
import type { EffectFacts } from "../console/effect-facts.js";
import { hashCanonical } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import type { StepRecord } from "../store/types.js";

/** One provider effect of a run. */
export interface HistoryEffect {
  step_id: string;
  receipt_id: string | null;
  /** `signed`: the receipt's output commitment covers these facts; otherwise why not. */
  evidence: "signed" | "receipt_missing" | "not_committed";
  facts: EffectFacts;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function stepOutput(step: StepRecord): Record<string, unknown> | null {
  if (step.outputJson === null) return null;
  try {
    const parsed: unknown = JSON.parse(step.outputJson);
    return isRecord(parsed) && isRecord(parsed.output) ? parsed.output : null;
  } catch {
    return null;
  }
}

/** The effects among `steps`, each checked against its step receipt. */
export async function runEffects(
  steps: readonly StepRecord[],
  find: (id: string) => Promise<Receipt | undefined>,
): Promise<HistoryEffect[]> {
  const out: HistoryEffect[] = [];
  for (const step of steps) {
    const output = stepOutput(step);
    const named = output?.provider_operation;
    const operation = isRecord(named) ? named.data : output?.x402_payment;
    if (output === null || sealedEffectFacts(operation) === null) continue;
    let evidence: HistoryEffect["evidence"] = "receipt_missing";
    let approvers: string[] = [];
    if (step.receiptId !== null) {
      const receipt = await find(step.receiptId).catch(() => undefined);
      if (receipt !== undefined) {
        const committed = receipt.subject.commitments.find((c) => c.scope === "output");
        evidence = committed?.value === hashCanonical(output) ? "signed" : "not_committed";
        // A console release signs its approvers into the receipt's authority terms.
        approvers = receipt.authority.terms.flatMap((t) =>
          t.approvals.flatMap((a) => {
            const name = a.approved_by_ref?.label ?? a.approved_by_ref?.uri;
            return name === undefined ? [] : [name];
          }),
        );
      }
    }
    const facts = sealedEffectFacts(operation, evidence === "signed" ? approvers : []);
    if (facts === null) continue;
    out.push({ step_id: step.stepId, receipt_id: step.receiptId, evidence, facts });
  }
  return out;
}
