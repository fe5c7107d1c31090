import type { PendingApproval } from "@/lib/api-types";
import { evidenceToShow } from "@/lib/effect-evidence";
import type { EvidenceLine } from "@/lib/effect-evidence";

/**
 * What a gate releases, as the runtime previewed it: every field in full, the amount in its
 * unit, and what approving and denying do; or, when the runtime could not check the effect
 * against the gate, that it cannot be shown (and so cannot be approved).
 */
export function EffectPreview({ gate, headingId }: { gate: PendingApproval; headingId: string }) {
  const { preview } = gate;
  if (preview === null) {
    return (
      <section className="effect effect-unavailable" aria-labelledby={headingId}>
        <h3 id={headingId}>What approving releases</h3>
        <p className="error" data-testid="preview-unavailable">
          The effect of this gate cannot be shown, so it cannot be approved:{" "}
          {gate.previewUnavailable ?? "the runtime gave no reason"}. Deny it, or start the run
          again.
        </p>
      </section>
    );
  }
  return (
    <section className="effect" aria-labelledby={headingId} data-testid="effect-preview">
      <h3 id={headingId}>What approving releases: {preview.headline}</h3>
      {(preview.amount !== null || preview.fields.length > 0) && (
        <dl className="effect-fields" data-testid="effect-payload">
          {preview.amount !== null && (
            <>
              <dt>Amount</dt>
              <dd data-testid="preview-amount">
                <strong>{preview.amount.text}</strong>
                {preview.amount.text !== `${preview.amount.units} ${preview.amount.unit}` && (
                  <span className="muted">
                    {" "}
                    ({preview.amount.units} {preview.amount.unit})
                  </span>
                )}
              </dd>
            </>
          )}
          {preview.fields.map((field) => (
            <PreviewRow
              key={field.path}
              label={field.label}
              path={field.path}
              value={field.value}
            />
          ))}
        </dl>
      )}
      {preview.effect !== null && (
        <ProviderEvidence
          evidence={preview.effect.fields}
          payload={preview.fields}
          amountShown={preview.amount !== null}
        />
      )}
      {preview.fields.length === 0 && preview.kind === "provider_effect" && (
        <p className="muted">The payload is empty.</p>
      )}
      <ul className="effect-outcomes">
        <li>
          <strong>Approve:</strong> {preview.onApprove}
        </li>
        <li>
          <strong>Deny:</strong> {preview.onDeny}
        </li>
      </ul>
      <p className="hint">Checked by the runtime: {preview.verified}.</p>
    </section>
  );
}

function PreviewRow({ label, path, value }: { label: string; path: string; value: string }) {
  return (
    <>
      <dt title={path}>{label}</dt>
      <dd className="preview-value" data-path={path}>
        {value}
      </dd>
    </>
  );
}

/** What the receipt records of the effect, each line once (lib/effect-evidence.ts). */
function ProviderEvidence({
  evidence,
  payload,
  amountShown,
}: {
  evidence: readonly EvidenceLine[];
  payload: readonly { value: string }[];
  amountShown: boolean;
}) {
  const { lines, shownAbove } = evidenceToShow(evidence, payload, amountShown);
  return (
    <>
      <h4 className="effect-subhead">Provider evidence</h4>
      <dl className="effect-fields" data-testid="effect-facts">
        {lines.map((field) => (
          <PreviewRow
            key={field.path}
            label={field.label}
            path={`effect.${field.path}`}
            value={field.value}
          />
        ))}
      </dl>
      {shownAbove.length > 0 && (
        <p className="hint" data-testid="effect-facts-above">
          Also recorded as shown above: {shownAbove.map((l) => l.label.toLowerCase()).join(", ")}.
        </p>
      )}
    </>
  );
}
