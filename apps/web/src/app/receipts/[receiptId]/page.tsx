import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { ReceiptFacts } from "@/components/ReceiptFacts";
import { approvalLines, approvalSentence } from "@/lib/receipt-view";
import { load } from "@/lib/server-api";

type Params = Promise<{ receiptId: string }>;

export const metadata: Metadata = { title: "Receipt" };

export default async function ReceiptPage({ params }: { params: Params }) {
  const receiptId = decodeURIComponent((await params).receiptId);
  const loaded = await load((api) => api.receipts.get.query({ receiptId }));
  if (!loaded.ok) return <ApiError title="Receipt" error={loaded.error} problem={loaded.problem} />;
  const { receipt, verification, run } = loaded.value;
  // Only signed fields feed what this page states as fact (lib/receipt-view.ts reads the
  // signed authority terms); `metadata` is shown apart by ReceiptFacts.
  const lines = approvalLines(receipt);
  const status = verification?.status ?? "unknown";
  return (
    <section className="page">
      <p className="crumbs">
        <Link href="/runs">Runs</Link>
        {run && (
          <>
            {" "}
            /{" "}
            <Link href={`/runs/${encodeURIComponent(run.id)}`} className="mono">
              {run.id}
            </Link>{" "}
            / <Link href={`/runs/${encodeURIComponent(run.id)}/receipts`}>receipts</Link>
          </>
        )}
      </p>
      <h1>Receipt</h1>
      <p className="mono wrap-anywhere">{receiptId}</p>
      <p>
        Verification: <span className={`badge status-${status}`}>{status}</span>{" "}
        <span className="muted">
          (<code>runx verify</code> recomputes the content address and checks the signature)
        </span>
      </p>
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
      <ReceiptFacts detail={loaded.value} />
    </section>
  );
}
