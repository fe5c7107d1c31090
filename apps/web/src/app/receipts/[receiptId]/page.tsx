import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { ReceiptFacts } from "@/components/ReceiptFacts";
import { ReceiptProvenance } from "@/components/ReceiptProvenance";
import { ReceiptVerification } from "@/components/ReceiptVerification";
import { approvalLines, approvalSentence } from "@/lib/receipt-view";
import { load } from "@/lib/server-api";

type Params = Promise<{ receiptId: string }>;

export const metadata: Metadata = { title: "Receipt" };

/**
 * One receipt, in the order a reader asks: is it valid (and if not, which check failed),
 * who signed it, what it commits, who approved; the signed document only on request.
 */
export default async function ReceiptPage({ params }: { params: Params }) {
  const receiptId = decodeURIComponent((await params).receiptId);
  const reported = await load((api) => api.receipts.verify.query({ receiptId }));
  if (!reported.ok)
    return <ApiError title="Receipt" error={reported.error} problem={reported.problem} />;
  const report = reported.value;
  // The document itself; a file that no longer parses still has its report above.
  const loaded = await load((api) => api.receipts.get.query({ receiptId }));
  const detail = loaded.ok ? loaded.value : null;
  const runId = report.run_id ?? detail?.run?.id ?? null;
  // Only signed fields feed what this page states as fact (lib/receipt-view.ts reads the
  // signed authority terms); `metadata` is shown apart by ReceiptFacts.
  const lines = detail ? approvalLines(detail.receipt) : [];
  return (
    <section className="page">
      <p className="crumbs">
        <Link href="/runs">Runs</Link>
        {runId && (
          <>
            {" "}
            /{" "}
            <Link href={`/runs/${encodeURIComponent(runId)}`} className="mono">
              {runId}
            </Link>{" "}
            / <Link href={`/runs/${encodeURIComponent(runId)}/receipts`}>receipts</Link>
          </>
        )}
      </p>
      <h1>Receipt</h1>
      <p className="mono wrap-anywhere">{receiptId}</p>
      {runId && (
        <p>
          Recorded by run{" "}
          <Link href={`/runs/${encodeURIComponent(runId)}`} className="mono" data-testid="run-link">
            {runId}
          </Link>
          {" · "}
          <Link href={`/runs/${encodeURIComponent(runId)}/receipts`}>all of its receipts</Link>
        </p>
      )}
      <ReceiptVerification initial={report} />
      <ReceiptProvenance report={report} />
      {lines.length > 0 && (
        <section aria-labelledby="approvals">
          <h2 id="approvals">Human approvals</h2>
          <ul>
            {lines.map((l, i) => (
              <li key={i}>
                {approvalSentence(l)}
                {l.gate && (
                  <>
                    {" "}
                    for gate <code>{l.gate}</code>
                  </>
                )}
                {l.reason && <> — “{l.reason}”</>}
                {l.at && <span className="muted"> at {l.at}</span>}
              </li>
            ))}
          </ul>
        </section>
      )}
      {detail ? (
        <ReceiptFacts detail={detail} />
      ) : (
        <p className="error">
          The stored document could not be shown: {loaded.ok ? "" : loaded.error}
        </p>
      )}
    </section>
  );
}
