import Link from "next/link";
import { CancelDispatchButton } from "@/components/CancelDispatchButton";
import { StatusBadge } from "@/components/StatusBadge";
import type { DispatchState } from "@/lib/api-types";
import { attemptVerification } from "@/lib/dispatch-view";
import { formatTime } from "@/lib/format";

/**
 * A run's adapter dispatch attempts (issue 8): one row per attempt with its adapter, lane,
 * status, failure code, times, receipt link and the receipt's verification; the attempts in
 * flight, and "Cancel dispatch" for approvers while the run is running.
 */
export function DispatchAttempts({
  runId,
  runStatus,
  state,
  canCancel,
}: {
  runId: string;
  runStatus: string;
  state: DispatchState;
  canCancel: boolean;
}) {
  const inFlight = runStatus === "running" ? state.running : [];
  return (
    <section aria-labelledby="dispatch-attempts" className="card">
      <h2 id="dispatch-attempts">Dispatch attempts</h2>
      {inFlight.length > 0 && (
        <div className="stack">
          <ul aria-label="Dispatches in flight">
            {inFlight.map((r) => (
              <li key={`${r.step_id}:${r.attempt}`} data-testid="dispatch-running">
                <span className="mono">
                  {r.step_id}#{r.attempt}
                </span>{" "}
                <StatusBadge status="running" /> since {formatTime(r.started_at)}
              </li>
            ))}
          </ul>
          {canCancel ? (
            <CancelDispatchButton runId={runId} />
          ) : (
            <p className="muted">An approver or admin can cancel it.</p>
          )}
        </div>
      )}
      {state.attempts.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Adapter</th>
              <th scope="col">Lane</th>
              <th scope="col">Status</th>
              <th scope="col">Failure</th>
              <th scope="col">Started</th>
              <th scope="col">Finished</th>
              <th scope="col">Receipt</th>
              <th scope="col">Verification</th>
            </tr>
          </thead>
          <tbody>
            {state.attempts.map((a) => {
              const verification = attemptVerification(a);
              return (
                <tr key={a.receipt_id} data-testid="dispatch-attempt">
                  <td className="mono">
                    {a.dispatch.step_id}#{a.dispatch.attempt}
                  </td>
                  <td className="mono">{a.dispatch.adapter_id}</td>
                  <td>{a.lane ?? "—"}</td>
                  <td>
                    <StatusBadge status={a.dispatch.status} />
                  </td>
                  <td>
                    {a.dispatch.failure ? (
                      <code title={a.dispatch.failure.message}>{a.dispatch.failure.code}</code>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className="nowrap">{formatTime(a.dispatch.invoked_at)}</td>
                  <td className="nowrap">{formatTime(a.dispatch.finished_at)}</td>
                  <td>
                    <Link
                      href={`/receipts/${encodeURIComponent(a.receipt_id)}`}
                      className="mono"
                      aria-label={`Dispatch receipt ${a.receipt_id}`}
                    >
                      {a.receipt_id.slice(0, 19)}…
                    </Link>
                  </td>
                  <td>
                    <span
                      className={`badge status-${verification.status}`}
                      data-testid="dispatch-verification"
                    >
                      {verification.text}
                    </span>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
