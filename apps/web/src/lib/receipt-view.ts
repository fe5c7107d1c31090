/** Reading a receipt for display (pure): verification text and signed human decisions. */

export interface ApprovalLine {
  approver: string;
  decision: string;
  reason: string;
  at: string | null;
  gate: string | null;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** "verified", "unverified", "invalid: <check>" (or "missing"). */
export function verificationText(status: string, failedCheck: string | null): string {
  if (status === "invalid") return `invalid: ${failedCheck ?? "unknown check"}`;
  return status;
}

/** The approvals signed into a receipt's authority terms (host-attested decisions). */
export function approvalLines(receipt: unknown): ApprovalLine[] {
  if (!isRecord(receipt) || !isRecord(receipt.authority)) return [];
  const terms = receipt.authority.terms;
  if (!Array.isArray(terms)) return [];
  const lines: ApprovalLine[] = [];
  for (const term of terms) {
    if (!isRecord(term) || !Array.isArray(term.approvals)) continue;
    const termId = str(term.term_id);
    for (const a of term.approvals) {
      if (!isRecord(a)) continue;
      const by = isRecord(a.approved_by_ref) ? a.approved_by_ref : {};
      const ref = isRecord(a.approval_ref) ? a.approval_ref : {};
      const uri = str(by.uri);
      const approver =
        str(by.label) ?? (uri ? uri.replace(/^runx:principal:operator:/, "") : "unknown");
      const label = str(ref.label) ?? "";
      const colon = label.indexOf(":");
      lines.push({
        approver,
        decision: colon >= 0 ? label.slice(0, colon) : label || "approve",
        reason: colon >= 0 ? label.slice(colon + 1).trim() : "",
        at: str(a.approved_at),
        gate: termId?.startsWith("approval:") ? termId.slice("approval:".length) : termId,
      });
    }
  }
  return lines;
}

/** "approved by alice" / "denied by bob". */
export function approvalSentence(line: ApprovalLine): string {
  const verb = line.decision === "deny" ? "denied" : "approved";
  return `${verb} by ${line.approver}`;
}
