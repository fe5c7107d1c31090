/**
 * The receipt DAG's side panel (the selected node's receipt, or the receipts a collapsed node
 * stands for) and the legend of its node styles.
 */
import type { DagNode, ReceiptDetail } from "@/lib/api-types";
import type { ViewNode } from "@/lib/dag-view";
import { approvalLines, approvalSentence, verificationText } from "@/lib/receipt-view";
import { ReceiptFacts } from "./ReceiptFacts";

/** The selected receipt as loaded for the panel. */
export type Loaded =
  | { id: string; receipt: unknown; status: string | null; detail: ReceiptDetail }
  | { id: string; error: string };

/** What each node style means, in words (styles are never the only signal). */
export function DagLegend() {
  return (
    <ul className="dag-legend" aria-label="Legend">
      <li>
        <span className="swatch v-verified" aria-hidden="true" /> ✓ verified: solid outline
      </li>
      <li>
        <span className="swatch v-unverified" aria-hidden="true" /> ? unverified: dashed outline
      </li>
      <li>
        <span className="swatch v-invalid" aria-hidden="true" /> ✗ invalid or missing: thick dotted
        outline
      </li>
      <li>
        <span className="swatch d-closed" aria-hidden="true" /> closed
      </li>
      <li>
        <span className="swatch d-deferred" aria-hidden="true" /> deferred (paused)
      </li>
      <li>
        <span className="swatch d-blocked" aria-hidden="true" /> blocked
      </li>
      <li>
        <span className="swatch d-failed" aria-hidden="true" /> failed
      </li>
      <li>×N: identical continuation receipts in one node · 1., 2., …: execution order</li>
    </ul>
  );
}

export function ReceiptPanel({
  group,
  node,
  loaded,
}: {
  group: ViewNode;
  node: DagNode;
  loaded: Loaded | null;
}) {
  const lines = loaded && "receipt" in loaded ? approvalLines(loaded.receipt) : [];
  return (
    <>
      <h2>{node.name}</h2>
      {group.members.length > 1 && (
        <section aria-label="Collapsed receipts" data-testid="collapsed-receipts">
          <p>
            {group.members.length} identical continuation receipts (the same step, paused again),
            shown as one node:
          </p>
          <ol>
            {group.members.map((m) => (
              <li key={m.id} className="mono wrap-anywhere">
                <a href={`/receipts/${encodeURIComponent(m.id)}`}>{m.id}</a>
                {m.createdAt && <span className="muted"> sealed {m.createdAt}</span>}
              </li>
            ))}
          </ol>
        </section>
      )}
      <p>
        <span className={`badge status-${node.status}`}>
          {verificationText(node.status, node.failedCheck)}
        </span>{" "}
        <span className="muted">{node.kind}</span>
      </p>
      <p className="mono wrap-anywhere">
        <a href={`/receipts/${encodeURIComponent(node.id)}`}>{node.id}</a>
      </p>
      {node.findings.length > 0 && (
        <ul>
          {node.findings.map((f, i) => (
            <li key={i} className="error-inline">
              <code>{f.code}</code> at <code>{f.path}</code>: {f.message}
            </li>
          ))}
        </ul>
      )}
      {(lines.length > 0 || node.approvals.length > 0) && (
        <section aria-label="Human approvals">
          <h3>Human approvals</h3>
          <ul>
            {lines.length > 0
              ? lines.map((l, i) => (
                  <li key={i}>
                    {approvalSentence(l)}
                    {l.reason && <> — “{l.reason}”</>}
                    {l.at && <span className="muted"> at {l.at}</span>}
                  </li>
                ))
              : node.approvals.map((a, i) => (
                  <li key={i}>
                    {a.decision === "deny" ? "denied" : "approved"} by {a.approver}
                  </li>
                ))}
          </ul>
        </section>
      )}
      {loaded === null ? (
        <p className="muted">Loading receipt…</p>
      ) : "error" in loaded ? (
        <p role="alert" className="error">
          {loaded.error}
        </p>
      ) : (
        <ReceiptFacts detail={loaded.detail} level={3} />
      )}
    </>
  );
}
