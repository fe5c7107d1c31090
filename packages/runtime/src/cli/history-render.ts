/**
 * The text form of `runx history --detail`: the state store's run record (local state), the
 * receipt's signed fields and signed steps, and, in a section of its own, the receipt's
 * unsigned `metadata` (services/receipt-view.ts says why it is kept apart). Values that
 * came from files or skills are printed as JSON strings, so control characters in them
 * reach the terminal escaped.
 */
import type { HistoryDetail } from "../services/history.js";
import { styler } from "./render.js";

/** One value on one line: strings as JSON (escaped), others as compact JSON. */
const one = (v: unknown): string => JSON.stringify(v) ?? "null";

/** Renders `detail` for a terminal. */
export function renderHistoryDetail(detail: HistoryDetail, color: boolean): string {
  const s = styler(color);
  const out: string[] = [];
  if (detail.run !== null) {
    const r = detail.run;
    out.push(
      `run ${r.id} ${s.dim("(state store record; not covered by a signature)")}`,
      `  skill: ${r.skillName} (runner ${r.runner})`,
      `  status: ${r.status}${r.disposition !== null ? ` / ${r.disposition}` : ""}`,
      `  package_digest: ${r.packageDigest}`,
      `  created_at: ${r.createdAt}`,
    );
    if (r.result !== null) out.push(`  result: ${one(r.result)}`);
    if (r.requests !== null) out.push(`  requests: ${one(r.requests)}`);
    for (const step of detail.steps) {
      out.push(
        `  step ${step.stepId}: ${step.status}${step.receiptId !== null ? ` ${step.receiptId}` : ""}`,
      );
    }
  }
  const rc = detail.receipt;
  const runReceipt = detail.run?.receiptId ?? null;
  if (rc === null && runReceipt !== null && detail.verification?.status === "invalid") {
    // The run's receipt file no longer decodes: there are no signed fields to show.
    out.push(
      `receipt ${runReceipt}`,
      `  verification: ${s.bad(`invalid: ${detail.verification.reason ?? "does not verify"}`)}`,
    );
  }
  if (rc !== null) {
    const verification = detail.verification?.status ?? "-";
    const reason = detail.verification?.reason;
    out.push(
      `receipt ${rc.id} ${s.dim("(signed fields)")}`,
      `  verification: ${verification === "invalid" ? s.bad(`invalid: ${reason ?? "does not verify"}`) : verification}`,
      `  seal: ${rc.seal.disposition} (${rc.seal.reason_code}) ${one(rc.seal.summary)}`,
      `  created_at: ${rc.created_at}`,
      `  issuer: ${rc.issuer.type}/${rc.issuer.kid}`,
      `  children: ${rc.lineage?.children.length ?? 0}`,
    );
    const steps = detail.signed?.steps ?? [];
    if (steps.length > 0) {
      out.push("  signed steps (each from its own receipt's seal):");
      for (const step of steps) {
        const seal =
          step.disposition === null ? "-" : `${step.disposition} (${step.reason_code ?? "-"})`;
        const v = step.verification === "verified" ? step.verification : s.bad(step.verification);
        out.push(`    ${one(step.step_id)}: ${seal} ${step.receipt_id} [${v}]`);
      }
    }
  }
  for (const effect of detail.effects) {
    const evidence =
      effect.evidence === "signed"
        ? "covered by the step receipt's signed output commitment"
        : s.bad(
            effect.evidence === "receipt_missing"
              ? "NOT verified: the step receipt is missing"
              : "NOT verified: the step receipt does not commit to this output",
          );
    out.push(`effect of step ${one(effect.step_id)} ${s.dim(`(${evidence})`)}`);
    for (const field of effect.facts.fields) out.push(`  ${field.label}: ${one(field.value)}`);
  }
  const unsigned = detail.unsigned;
  if (unsigned !== null && unsigned.metadata !== null) {
    out.push(`unsigned metadata ${s.bad("(NOT verified)")}`, `  ${unsigned.note}`);
    for (const [key, value] of Object.entries(unsigned.metadata)) {
      out.push(`  ${one(key)}: ${one(value)}`);
    }
    for (const c of unsigned.conflicts) {
      out.push(
        `  ${s.bad("contradicts the signed receipts:")} ${c.path} says ${one(c.unsigned)}; signed: ${one(c.signed)}`,
      );
    }
  }
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}
