// Explains the runtime's verdict on one receipt tree in words. It decides nothing the
// verification did not: `clean` only when the tree verified with nothing missing; refusals
// and declines are read from the signed seals, never guessed.
const SEALS = {
  closed: "completed",
  blocked: "was refused before it acted",
  declined: "was declined by its approver",
  failed: "failed",
  deferred: "is paused",
  killed: "was cancelled",
  timed_out: "timed out",
  superseded: "was superseded",
};

const stepName = (subject) => subject.replace(/^hrn_/, "");

export default function explain({ verification, objective }) {
  const v = verification;
  const root = v.members.find((m) => m.role === "root");
  const children = v.members.filter((m) => m.role === "descendant");
  const findings = [];
  const explanation = [];
  explanation.push(
    `Receipt ${v.root_receipt_id} (${stepName(root.subject)}) ${SEALS[root.disposition] ?? root.disposition} (${root.reason_code}): ${root.summary}.`,
  );
  explanation.push(
    v.valid
      ? `The runtime's tree verification checked ${v.receipt_count} receipt(s): every content address, digest and lineage link holds.`
      : `The runtime's tree verification found ${v.findings.length} problem(s) in ${v.receipt_count} receipt(s); this tree does not prove what it claims.`,
  );
  if (v.signatures === "unverified") {
    explanation.push(
      "The signatures are local-development pseudo signatures: the tree is internally consistent, but no production key vouches for it.",
    );
    findings.push({
      id: "local_development_signatures",
      severity: "warning",
      message: "signed with local-development pseudo signatures",
    });
  }
  for (const id of v.missing) {
    findings.push({
      id: "child_receipt_missing",
      severity: "error",
      message: `child receipt ${id} is committed by the lineage but not in the store`,
    });
  }
  for (const f of v.findings) {
    if (f.code === "child_receipt_missing") continue;
    findings.push({ id: f.code, severity: "error", message: `${f.path}: ${f.message}` });
  }
  for (const child of children) {
    explanation.push(
      `Step ${stepName(child.subject)} ${SEALS[child.disposition] ?? child.disposition} (${child.reason_code}).`,
    );
  }
  const approvals = v.members.reduce((n, m) => n + m.approvals, 0);
  if (approvals > 0)
    explanation.push(`${approvals} host-attested approval(s) are signed into its authority terms.`);
  const refusals = v.members
    .filter((m) => m.disposition === "blocked" || m.disposition === "declined")
    .map((m) => `${stepName(m.subject)}: ${m.summary}`);
  if (v.missing.length > 0) {
    explanation.push(
      `${v.missing.length} child receipt(s) are missing from the store, so the steps they record cannot be checked.`,
    );
  }
  const errors = findings.filter((f) => f.severity === "error").length;
  const verdict =
    !v.valid || errors > 0 ? (v.missing.length > 0 ? "needs_more_evidence" : "anomaly") : "clean";
  return {
    receipt_audit: {
      decision: verdict === "needs_more_evidence" ? "needs_more_evidence" : "ready",
      run_ref: `runx:receipt:${v.root_receipt_id}`,
      objective,
      verdict,
      signatures: v.signatures,
      receipt_count: v.receipt_count,
      refusals,
      findings,
      explanation,
      rationale:
        verdict === "clean"
          ? "The receipt tree verified with the runtime's own checks and every committed child is present."
          : verdict === "anomaly"
            ? "The runtime's verification reported findings; treat the tree as untrustworthy until they are explained."
            : "Committed child receipts are missing; supply them before relying on this tree.",
    },
  };
}
