/**
 * Reading a receipt report (`receipts.verify`) in plain words (pure): the verdict sentence,
 * each check's result word, who signed it.
 */
import type { ReceiptReport, ReportCheck } from "./api-types";

/** "passed", "failed" or "does not apply" (not only a colour or a mark). */
export function checkResult(
  check: Pick<ReportCheck, "ok">,
): "passed" | "failed" | "does not apply" {
  return check.ok === true ? "passed" : check.ok === false ? "failed" : "does not apply";
}

/** The verdict in one sentence, naming the failed check. */
export function verdictSentence(
  report: Pick<ReceiptReport, "status" | "failed_check" | "signer">,
): string {
  if (report.status === "invalid") {
    const failed = report.failed_check;
    return failed ? `Not valid: ${failed.message}.` : "Not valid.";
  }
  if (report.status === "verified") {
    return `Verified: every check passed and the signature verifies under the trusted key ${report.signer?.kid ?? ""}.`.replace(
      " .",
      ".",
    );
  }
  return report.signer?.signature_kind === "local-development"
    ? "Unverified: every check passed, but the receipt carries a local-development pseudo signature, which proves no signer."
    : "Unverified: every check passed, but no trusted key is configured to check the signature.";
}

/** "Ed25519 signature" / "local-development pseudo signature (sig:<digest>)". */
export function signatureModeText(signer: NonNullable<ReceiptReport["signer"]>): string {
  return signer.signature_kind === "ed25519"
    ? `${signer.algorithm} signature`
    : "local-development pseudo signature (no private key; sig: + body digest)";
}

/** The issuer type in words. */
export function issuerText(type: string): string {
  const words: Record<string, string> = {
    local: "local runtime (development signer)",
    hosted: "hosted runx service",
    ci: "CI signer",
    verifier: "verifier",
  };
  return words[type] ?? type;
}
