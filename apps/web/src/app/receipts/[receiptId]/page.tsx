import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { prettyJson } from "@/lib/format";
import { approvalLines, approvalSentence } from "@/lib/receipt-view";
import { load } from "@/lib/server-api";

type Params = Promise<{ receiptId: string }>;

export const metadata: Metadata = { title: "Receipt" };

export default async function ReceiptPage({ params }: { params: Params }) {
  const receiptId = decodeURIComponent((await params).receiptId);
  const loaded = await load((api) => api.receipts.get.query({ receiptId }));
  if (!loaded.ok) return <ApiError title="Receipt" error={loaded.error} />;
  const { receipt, verification, run } = loaded.value;
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
      <p className="mono" style={{ overflowWrap: "anywhere" }}>
        {receiptId}
      </p>
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
      <h2>Document</h2>
      <pre className="json">{prettyJson(receipt)}</pre>
    </section>
  );
}
