import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { DecideForm } from "@/components/DecideForm";
import { Digest } from "@/components/Digest";
import { LiveRefresh } from "@/components/LiveRefresh";
import { formatTime, prettyJson } from "@/lib/format";
import { load } from "@/lib/server-api";
import { adapterGateRows } from "@/lib/adapter-gate";
import { summaryRows } from "@/lib/summary";

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
        Each gate is bound to the package and execution-closure digests of its pause; a decision is
        signed into the run&apos;s receipts with your name, reason and time.
        {!canDecide && " You are a viewer: you can read the inbox but not decide."}
      </p>
      {pending.length === 0 ? (
        <p className="empty">No runs are waiting for approval.</p>
      ) : (
        <div className="inbox">
          {pending.map((gate) => {
            // An adapter dispatch shows everything its approval binds (open-scaffold §5.12 J.56).
            const rows =
              gate.gateType === "adapter_dispatch"
                ? adapterGateRows(gate.summary, gate.spawnGrantedBy)
                : summaryRows(gate.summary);
            const approvals = gate.decisions.filter((d) => d.decision === "approve").length;
            const headingId = `gate-${gate.runId}-${gate.gateId}`.replace(/[^A-Za-z0-9_-]/g, "_");
            return (
              <article
                key={`${gate.runId}/${gate.gateId}`}
                className={`card approval${gate.stale ? " is-stale" : ""}`}
                aria-label={`Approval ${gate.gateId}`}
              >
                <header>
                  <h2 id={headingId}>
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
                  <span className="muted">requested {formatTime(gate.requestedAt)}</span>
                </header>
                <p>{gate.reason}</p>
                {gate.stale && gate.staleReason && (
                  <p className="error">Re-approval needed: {gate.staleReason}</p>
                )}
                <dl className="facts">
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
                  <dt>Policy</dt>
                  <dd>
                    {approvals}/{gate.policy.requiredApprovals} approval
                    {gate.policy.requiredApprovals === 1 ? "" : "s"}
                    {gate.policy.forbidInitiator ? "; the initiator may not approve" : ""}
                  </dd>
                  <dt>Initiator</dt>
                  <dd>{gate.initiator ?? "—"}</dd>
                </dl>
                {gate.decisions.length > 0 && (
                  <ul className="decisions">
                    {gate.decisions.map((d) => (
                      <li key={d.id}>
                        <span className={`badge decision-${d.decision}`}>{d.decision}</span> by{" "}
                        <strong>{d.username}</strong> at {formatTime(d.decidedAt)}: “{d.reason}”
                      </li>
                    ))}
                  </ul>
                )}
                <details>
                  <summary>Full summary</summary>
                  <pre className="json">{prettyJson(gate.summary ?? null)}</pre>
                </details>
                {canDecide && gate.policy.forbidInitiator && gate.initiator === me.username ? (
                  <p className="notice">
                    You started this run; its gate policy needs another approver to decide.
                  </p>
                ) : canDecide && gate.decisions.some((d) => d.username === me.username) ? (
                  <p className="notice">
                    You already decided this gate; it needs another approver.
                  </p>
                ) : (
                  canDecide && (
                    <DecideForm
                      runId={gate.runId}
                      gateId={gate.gateId}
                      stale={gate.stale}
                      required={gate.policy.requiredApprovals}
                    />
                  )
                )}
              </article>
            );
          })}
        </div>
      )}
    </section>
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
