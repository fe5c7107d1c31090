import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { DecideForm } from "@/components/DecideForm";
import { DecisionLog } from "@/components/DecisionLog";
import { Digest } from "@/components/Digest";
import { EffectPreview } from "@/components/EffectPreview";
import { LiveRefresh } from "@/components/LiveRefresh";
import { formatTime, prettyJson } from "@/lib/format";
import { load } from "@/lib/server-api";
import { adapterGateRows } from "@/lib/adapter-gate";
import { needsAnotherApprover, policyText, whoAsked } from "@/lib/approval-view";
import { summaryRows } from "@/lib/summary";
import type { Operator, PendingApproval } from "@/lib/api-types";

export const metadata: Metadata = { title: "Approvals" };

export default async function ApprovalsPage() {
  const loaded = await load(async (api) => {
    const [me, pending] = await Promise.all([api.auth.me.query(), api.approvals.pending.query()]);
    return { me, pending };
  });
  if (!loaded.ok)
    return <ApiError title="Approvals" error={loaded.error} problem={loaded.problem} />;
  const { me, pending } = loaded.value;
  const canDecide = me.role === "approver" || me.role === "admin";

  return (
    <section className="page">
      <LiveRefresh source="approvals" />
      <h1>Approvals</h1>
      <p className="muted">
        Each card shows what its gate releases, checked by the runtime against the digests the gate
        is bound to; a decision is signed into the run&apos;s receipts with your name, reason and
        time.
        {!canDecide && " You are a viewer: you can read the inbox but not decide."}
      </p>
      <DecisionLog>
        {pending.length === 0 ? (
          <p className="empty">No runs are waiting for approval.</p>
        ) : (
          <div className="inbox">
            {pending.map((gate) => (
              <ApprovalCard key={`${gate.runId}/${gate.gateId}`} gate={gate} me={me} />
            ))}
          </div>
        )}
      </DecisionLog>
    </section>
  );
}

/** Gate facts the effect preview already lists, so the card does not show them twice. */
const EFFECT_LABELS = new Set(["Provider", "Operation", "Target", "Plan digest", "Amount"]);

function shownByPreview(gate: PendingApproval, label: string): boolean {
  if (gate.preview === null) return false;
  // The preview shows the amount in its unit already; provider evidence names the rest.
  if (label === "Amount") return true;
  return gate.preview.effect !== null && EFFECT_LABELS.has(label);
}

function ApprovalCard({ gate, me }: { gate: PendingApproval; me: Operator }) {
  const canDecide = me.role === "approver" || me.role === "admin";
  // An adapter dispatch shows everything its approval binds.
  const rows =
    gate.gateType === "adapter_dispatch"
      ? adapterGateRows(gate.summary, gate.spawnGrantedBy)
      : summaryRows(gate.summary).filter((r) => !shownByPreview(gate, r.label));
  const approvals = gate.decisions.filter((d) => d.decision === "approve").length;
  const base = `gate-${gate.runId}-${gate.gateId}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const approveBlocked = gate.stale
    ? "this approval is stale (see above)"
    : gate.preview === null
      ? "the effect cannot be shown (see above)"
      : gate.initiatorUnknown !== null
        ? "no approval of this run can count (see above)"
        : null;
  return (
    <article
      className={`card approval${gate.stale ? " is-stale" : ""}`}
      aria-label={`Approval ${gate.gateId}`}
      aria-describedby={`${base}-reason`}
    >
      <header>
        <h2 id={`${base}-title`}>
          <code>{gate.gateId}</code>
        </h2>
        <span>
          run{" "}
          <Link href={`/runs/${encodeURIComponent(gate.runId)}`} className="mono">
            {gate.runId}
          </Link>{" "}
          of <Link href={`/skills/${encodeURIComponent(gate.skill)}`}>{gate.skill}</Link>
        </span>
        {gate.stale && (
          <span className="badge stale" title={gate.staleReason ?? undefined}>
            stale
          </span>
        )}
      </header>
      <p id={`${base}-reason`} className="gate-reason">
        {gate.reason}
      </p>
      {gate.stale && (
        <p className="error" data-testid="stale-explanation">
          This approval is stale and cannot be approved:{" "}
          {gate.staleReason ?? "what the run is bound to changed"}. The skill&apos;s files (or the
          packages and runtime it runs with) changed since the run paused, so approving would
          release something other than what paused. Deny it, or start the run again.
        </p>
      )}
      <EffectPreview gate={gate} headingId={`${base}-effect`} />
      <dl className="facts">
        <dt>Asked by</dt>
        <dd data-testid="asked-by">
          {whoAsked(gate.initiator)} at {formatTime(gate.startedAt)}; waiting since{" "}
          {formatTime(gate.requestedAt)}
        </dd>
        <dt>Policy</dt>
        <dd data-testid="policy">{policyText(gate.policy, approvals)}</dd>
        {gate.gateType && (
          <>
            <dt>Gate type</dt>
            <dd>{gate.gateType}</dd>
          </>
        )}
        {rows.map((row) => (
          <FactRow key={row.label} label={row.label} value={row.value} mono={row.mono} />
        ))}
        <dt>Package digest</dt>
        <dd>
          <Digest value={gate.boundPackageDigest} />
          {gate.currentPackageDigest !== gate.boundPackageDigest && (
            <span className="error-inline">
              {" "}
              now <Digest value={gate.currentPackageDigest} />
            </span>
          )}
        </dd>
        <dt>Closure digest</dt>
        <dd>
          <Digest value={gate.boundExecutionClosureDigest} />
          {gate.currentExecutionClosureDigest !== gate.boundExecutionClosureDigest && (
            <span className="error-inline">
              {" "}
              now <Digest value={gate.currentExecutionClosureDigest} />
            </span>
          )}
        </dd>
      </dl>
      {gate.decisions.length > 0 && (
        <>
          <h3 className="decisions-title">Already decided</h3>
          <ul className="decisions">
            {gate.decisions.map((d) => (
              <li key={d.id}>
                <span className={`badge decision-${d.decision}`}>{d.decision}</span> by{" "}
                <strong>{d.username}</strong> at {formatTime(d.decidedAt)}: “{d.reason}”
              </li>
            ))}
          </ul>
        </>
      )}
      {gate.initiatorUnknown !== null ? (
        <p className="notice" data-testid="initiator-unknown">
          No approval of this gate can count: {gate.initiatorUnknown}.
        </p>
      ) : (
        needsAnotherApprover(gate) && <LoneApproverHint me={me} />
      )}
      <details>
        <summary>Raw gate request (JSON)</summary>
        <pre className="json">{prettyJson({ summary: gate.summary, preview: gate.preview })}</pre>
      </details>
      {canDecide && gate.policy.forbidInitiator && gate.initiator === me.username ? (
        <p className="notice">
          You started this run; its gate policy needs another approver to decide.
        </p>
      ) : canDecide && gate.decisions.some((d) => d.username === me.username) ? (
        <p className="notice">You already decided this gate; it needs another approver.</p>
      ) : (
        canDecide && (
          <DecideForm
            runId={gate.runId}
            gateId={gate.gateId}
            headline={gate.preview?.headline ?? gate.gateId}
            approveBlocked={approveBlocked}
          />
        )
      )}
    </article>
  );
}

/** Told when nobody else can approve the gate: how to add an approver. */
function LoneApproverHint({ me }: { me: Operator }) {
  const cli = <code>runx operator add &lt;name&gt; --role approver</code>;
  return (
    <div className="notice lone-approver" data-testid="lone-approver">
      <p>
        <strong>No other operator can approve this gate.</strong> It needs an approver who did not
        start the run, and there is none yet.
      </p>
      {me.role === "admin" ? (
        <p>
          Add one on the <Link href="/operators">Operators</Link> page, or on the server with {cli};
          they sign in and approve it here.
        </p>
      ) : (
        <p>
          Ask an admin to add one (the <Link href="/operators">Operators</Link> page, or {cli} on
          the server).
        </p>
      )}
    </div>
  );
}

function FactRow({ label, value, mono }: { label: string; value: string; mono: boolean }) {
  return (
    <>
      <dt>{label}</dt>
      <dd className={mono ? "mono" : undefined}>{value}</dd>
    </>
  );
}
