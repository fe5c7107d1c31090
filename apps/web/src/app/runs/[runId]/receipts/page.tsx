import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { DagView } from "@/components/DagView";
import { load } from "@/lib/server-api";

type Params = Promise<{ runId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Receipts of ${decodeURIComponent((await params).runId)}` };
}

export default async function RunReceiptsPage({ params }: { params: Params }) {
  const runId = decodeURIComponent((await params).runId);
  const loaded = await load((api) => api.receipts.dag.query({ runId }));
  if (!loaded.ok)
    return (
      <ApiError title={`Receipts of ${runId}`} error={loaded.error} problem={loaded.problem} />
    );
  const dag = loaded.value;
  const enc = encodeURIComponent(runId);
  return (
    <section className="page wide">
      <p className="crumbs">
        <Link href="/runs">Runs</Link> /{" "}
        <Link href={`/runs/${enc}`} className="mono">
          {runId}
        </Link>{" "}
        / receipts
      </p>
      <div className="title-row">
        <h1>Receipts</h1>
        <a
          id="bundle"
          className="button primary"
          href={`/runs/${enc}/bundle`}
          download={`evidence-${runId}.json`}
        >
          Download evidence bundle
        </a>
      </div>
      <p data-testid="receipt-count">
        This run recorded <strong>{dag.nodes.length}</strong> receipt
        {dag.nodes.length === 1 ? "" : "s"}; the evidence bundle holds all of them, and{" "}
        <code>runx verify --bundle evidence-{runId}.json</code> verifies and counts the same.
      </p>
      <p className="muted">
        Read top to bottom in execution order. Solid edges: parent → step; dashed: paused receipt →
        the continuation that resumed it; red: the parent did not commit this exact body.
      </p>
      {dag.truncated && (
        <p className="notice">This graph is truncated to its first {dag.nodes.length} receipts.</p>
      )}
      {dag.nodes.length === 0 ? (
        <p className="empty">This run has no receipts yet.</p>
      ) : (
        <DagView nodes={dag.nodes} edges={dag.edges} rootId={dag.rootReceiptId} />
      )}
    </section>
  );
}
