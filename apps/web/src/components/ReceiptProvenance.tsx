/**
 * Who signed a receipt and what it commits, in words (from `receipts.verify`): issuer, key
 * id and signature mode; subject, package and closure digests (each saying whether the
 * signature covers it), input and output commitments; parent, continued receipt and
 * children as links, each saying whether it is present and matches the digest committed.
 */
import Link from "next/link";
import type { ReceiptReport } from "@/lib/api-types";
import { issuerText, signatureModeText } from "@/lib/receipt-report";
import { Digest } from "./Digest";

type Commits = NonNullable<ReceiptReport["commits"]>;
type LinkRow = Commits["children"][number];

function linkState(l: LinkRow): string {
  if (!l.present) return "missing from the store";
  if (l.digest_matches === false) return "present, but not the body that was committed";
  if (l.digest_matches === true) return "present, matches the committed digest";
  return "present";
}

function LinkItem({ l }: { l: LinkRow }) {
  return (
    <li
      data-receipt-link={l.id}
      className={l.present && l.digest_matches !== false ? "" : "error-inline"}
    >
      {l.name && <strong>{l.name}</strong>}{" "}
      {l.disposition && <span className="muted">({l.disposition})</span>}{" "}
      <Link href={`/receipts/${encodeURIComponent(l.id)}`} className="mono wrap-anywhere">
        {l.id}
      </Link>{" "}
      — {linkState(l)}
    </li>
  );
}

function DigestRow({ label, d }: { label: string; d: Commits["package_digest"] }) {
  return (
    <>
      <dt>{label}</dt>
      <dd>
        {d === null ? (
          "not recorded"
        ) : (
          <>
            <Digest value={d.value} /> — {d.how}
          </>
        )}
      </dd>
    </>
  );
}

export function ReceiptProvenance({ report }: { report: ReceiptReport }) {
  const { signer, commits, seal } = report;
  return (
    <>
      {signer && (
        <section aria-labelledby="signer">
          <h2 id="signer">Signed by</h2>
          <dl className="facts" data-testid="signer">
            <dt>Issuer</dt>
            <dd>
              {issuerText(signer.issuer_type)} (<code>{signer.issuer_type}</code>)
            </dd>
            <dt>Key id</dt>
            <dd>
              <code data-testid="signer-kid">{signer.kid}</code>
            </dd>
            <dt>Signature mode</dt>
            <dd data-testid="signature-mode">{signatureModeText(signer)}</dd>
            <dt>Public key hash</dt>
            <dd>
              <Digest value={signer.public_key_sha256} />
            </dd>
            <dt>Checked under</dt>
            <dd>
              {signer.policy_mode === "production"
                ? "production policy (real signatures only)"
                : "local-development policy (pseudo signatures are accepted too)"}
            </dd>
          </dl>
        </section>
      )}
      {commits && (
        <section aria-labelledby="commits" data-testid="commits">
          <h2 id="commits">What it commits</h2>
          <dl className="facts">
            <dt>Subject</dt>
            <dd>
              {commits.subject.kind} <code className="wrap-anywhere">{commits.subject.uri}</code>
            </dd>
            {seal && (
              <>
                <dt>Seal</dt>
                <dd>
                  <span className={`badge status-${seal.disposition}`}>{seal.disposition}</span>{" "}
                  {seal.summary} <span className="muted">({seal.reason_code})</span>
                </dd>
              </>
            )}
            <DigestRow label="Package digest" d={commits.package_digest} />
            <DigestRow label="Execution closure digest" d={commits.execution_closure_digest} />
            <dt>Content hash</dt>
            <dd data-testid="content-hash">
              <Digest value={commits.content_hash} /> — signed idempotency content hash of what it
              ran on or produced
            </dd>
            <dt>Inputs digest</dt>
            <dd data-testid="inputs-digest">
              {commits.inputs.length === 0
                ? "no separate input commitment (see the content hash)"
                : commits.inputs.map((c) => <Digest key={c.value} value={c.value} />)}
            </dd>
            <dt>Outputs digest</dt>
            <dd data-testid="outputs-digest">
              {commits.outputs.length === 0
                ? "no output commitment (see the content hash)"
                : commits.outputs.map((c) => (
                    <span key={`${c.scope}${c.value}`} className="digest-item">
                      {c.scope} <Digest value={c.value} />{" "}
                    </span>
                  ))}
            </dd>
          </dl>
          <h3>Parent</h3>
          {commits.parents.length === 0 ? (
            <p className="muted">
              No receipt lists this one as a child: it is a run&apos;s top receipt.
            </p>
          ) : (
            <ul data-testid="parents">
              {commits.parents.map((l) => (
                <LinkItem key={l.id} l={l} />
              ))}
            </ul>
          )}
          {commits.previous && (
            <>
              <h3>Continues</h3>
              <ul data-testid="previous">
                <LinkItem l={commits.previous} />
              </ul>
            </>
          )}
          <h3>Children ({commits.children.length})</h3>
          {commits.children.length === 0 ? (
            <p className="muted">It commits no child receipts.</p>
          ) : (
            <ol data-testid="children">
              {commits.children.map((l) => (
                <LinkItem key={l.id} l={l} />
              ))}
            </ol>
          )}
        </section>
      )}
    </>
  );
}
