"use client";

import { useState } from "react";
import type { ReceiptReport } from "@/lib/api-types";
import { browserApi, errorMessage } from "@/lib/client-api";
import { formatTime } from "@/lib/format";
import { useHydrated } from "@/lib/hydrated";
import { checkResult, verdictSentence } from "@/lib/receipt-report";

const MARK = { passed: "✓", failed: "✗", "does not apply": "–" } as const;

/**
 * A receipt's verification: the verdict naming the failed check, every check with its
 * result in words, and "Verify", which re-runs the checks on the API (`receipts.verify`)
 * against the store as it is now.
 */
export function ReceiptVerification({ initial }: { initial: ReceiptReport }) {
  const [report, setReport] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [rechecked, setRechecked] = useState(false);
  const hydrated = useHydrated();

  async function verify() {
    setBusy(true);
    setError(null);
    try {
      setReport(await browserApi().receipts.verify.query({ receiptId: initial.receipt_id }));
      setRechecked(true);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  const failed = report.failed_check;
  return (
    <section
      aria-labelledby="verification"
      className="card verification"
      data-testid="verification"
    >
      <div className="title-row">
        <h2 id="verification">Verification</h2>
        <button
          type="button"
          className="button primary"
          disabled={busy || !hydrated}
          onClick={() => void verify()}
        >
          {busy ? "Verifying…" : "Verify"}
        </button>
      </div>
      <div role="status" aria-live="polite" data-testid="verification-result">
        <p>
          Verification:{" "}
          <span className={`badge status-${report.status}`} data-testid="verification-status">
            {report.status}
          </span>{" "}
          <span className="muted">
            {rechecked ? "re-checked" : "checked"} at {formatTime(report.checked_at)}
          </span>
        </p>
        <p data-testid="verdict">{verdictSentence(report)}</p>
        {failed && (
          <p className="error-inline" data-testid="failed-check">
            Failed check: <strong>{failed.label}</strong> — {failed.message}
          </p>
        )}
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <ul className="checks" aria-label="Checks">
        {report.checks.map((c) => {
          const result = checkResult(c);
          return (
            <li
              key={c.name}
              className={`check check-${result.replace(/ /g, "-")}`}
              data-check={c.name}
            >
              <span aria-hidden="true" className="check-mark">
                {MARK[result]}
              </span>{" "}
              <strong>{c.label}</strong>: {result} — {c.message}
              {c.codes.length > 0 && (
                <>
                  {" "}
                  <span className="muted">
                    (<code>{c.codes.join(", ")}</code>)
                  </span>
                </>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
