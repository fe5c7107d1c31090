import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { DagView } from "@/components/DagView";
import { param } from "@/lib/format";
import { load } from "@/lib/server-api";

type Params = Promise<{ runId: string }>;

/** Receipts drawn at once: a run with tens of thousands is read page by page. */
const PAGE_SIZE = 500;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Receipts of ${decodeURIComponent((await params).runId)}` };
}

export default async function RunReceiptsPage({
  params,
  searchParams,
}: {
  params: Params;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const runId = decodeURIComponent((await params).runId);
  const cursor = param((await searchParams).cursor);
  const loaded = await load((api) =>
    api.receipts.page.query({
      runId,
      limit: PAGE_SIZE,
      ...(cursor !== undefined && /^[0-9]{1,9}$/.test(cursor) ? { cursor } : {}),
    }),
  );
  if (!loaded.ok)
    return (
      <ApiError title={`Receipts of ${runId}`} error={loaded.error} problem={loaded.problem} />
    );
  const dag = loaded.value;
  const enc = encodeURIComponent(runId);
  const from = cursor !== undefined && /^[0-9]{1,9}$/.test(cursor) ? Number(cursor) : 0;
  const shown = new Set(dag.nodes.map((n) => n.id));
  // Only the edges inside the page are drawn (an edge into it from an earlier page has no node).
  const edges = dag.edges.filter((e) => shown.has(e.from) && shown.has(e.to));
  const paged = dag.total > dag.nodes.length;
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
        This run recorded <strong>{dag.total}</strong> receipt
        {dag.total === 1 ? "" : "s"}; the evidence bundle holds all of them, and{" "}
        <code>runx verify --bundle evidence-{runId}.json</code> verifies and counts the same.
      </p>
      <p className="muted">
        Read top to bottom in execution order. Solid edges: parent → step; dashed: paused receipt →
        the continuation that resumed it; red: the parent did not commit this exact body.
      </p>
      {paged && (
        <p className="notice" data-testid="receipt-page">
          Showing receipts {from + 1}–{from + dag.nodes.length} of {dag.total}, in execution order.
        </p>
      )}
      {dag.nodes.length === 0 ? (
        <p className="empty">This run has no receipts yet.</p>
      ) : (
        <DagView nodes={dag.nodes} edges={edges} rootId={dag.rootReceiptId} />
      )}
      {(from > 0 || dag.nextCursor !== null) && (
        <nav className="pager" aria-label="Receipt pages">
          {from > 0 && (
            <Link
              href={`/runs/${enc}/receipts?cursor=${Math.max(0, from - PAGE_SIZE)}`}
              className="button"
              rel="prev"
            >
              ← Previous
            </Link>
          )}
          {dag.nextCursor !== null && (
            <Link
              href={`/runs/${enc}/receipts?cursor=${dag.nextCursor}`}
              className="button"
              rel="next"
            >
              Next →
            </Link>
          )}
        </nav>
      )}
    </section>
  );
}
