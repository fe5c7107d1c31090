/**
 * A receipt's facts, signed and unsigned apart (packages/runtime/src/services/receipt-view.ts):
 * the steps as their own signed receipts seal them, the signed document, and the receipt's
 * `metadata` under its own heading, labelled as not covered by the signature, with every
 * place where it contradicts the signed receipts. Metadata never feeds a status shown here.
 */
import { prettyJson } from "@/lib/format";
import type { ReceiptDetail } from "@/lib/api-types";
import { TableWrap } from "./TableWrap";

export function ReceiptFacts({
  detail,
  level = 2,
}: {
  detail: Pick<ReceiptDetail, "receipt" | "signed" | "unsigned">;
  /** Heading level of the sections (2 on the receipt page, 3 in the DAG panel). */
  level?: 2 | 3;
}) {
  const H = level === 2 ? "h2" : "h3";
  const steps = detail.signed?.steps ?? [];
  const unsigned = detail.unsigned;
  return (
    <>
      {steps.length > 0 && (
        <section aria-label="Signed steps" data-testid="signed-steps">
          <H>Steps (signed)</H>
          <TableWrap label="Table of signed steps">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  <th scope="col">Seal</th>
                  <th scope="col">Receipt</th>
                  <th scope="col">Verification</th>
                </tr>
              </thead>
              <tbody>
                {steps.map((s) => (
                  <tr key={s.receipt_id} data-step={s.step_id}>
                    <td>{s.step_id}</td>
                    <td data-testid="signed-step-disposition">{s.disposition ?? "—"}</td>
                    <td className="mono wrap-anywhere">
                      <a href={`/receipts/${encodeURIComponent(s.receipt_id)}`}>{s.receipt_id}</a>
                    </td>
                    <td>
                      <span className={`badge status-${s.verification}`}>{s.verification}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </section>
      )}
      <section aria-label="Signed document">
        <H>Signed document</H>
        {/* Raw JSON is the advanced view: closed until asked for. */}
        <details className="raw">
          <summary>Show the signed document as JSON</summary>
          <pre
            className="json"
            data-testid="signed-document"
            tabIndex={0}
            aria-label="Signed document as JSON"
          >
            {prettyJson(detail.receipt)}
          </pre>
        </details>
      </section>
      {unsigned !== null && unsigned.metadata !== null && (
        <section
          aria-label="Unsigned metadata"
          className="unsigned"
          data-testid="unsigned-metadata"
        >
          <H>Unsigned metadata (not verified)</H>
          <p className="notice">{unsigned.note}.</p>
          {unsigned.conflicts.length > 0 && (
            <ul data-testid="unsigned-conflicts">
              {unsigned.conflicts.map((c) => (
                <li key={c.path} className="error-inline">
                  <code>{c.path}</code> says <code>{JSON.stringify(c.unsigned)}</code>; the signed
                  receipts say <code>{JSON.stringify(c.signed)}</code>
                </li>
              ))}
            </ul>
          )}
          <pre className="json" tabIndex={0} aria-label="Unsigned metadata as JSON">
            {prettyJson(unsigned.metadata)}
          </pre>
        </section>
      )}
    </>
  );
}
