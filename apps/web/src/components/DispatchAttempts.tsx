import Link from "next/link";
import { CancelDispatchButton } from "@/components/CancelDispatchButton";
import { StatusBadge } from "@/components/StatusBadge";
import type { DispatchLogs, DispatchState } from "@/lib/api-types";
import { bytesText } from "@/lib/adapter-gate";
import { attemptNote, attemptVerification } from "@/lib/dispatch-view";
import { formatTime } from "@/lib/format";
import { TableWrap } from "./TableWrap";

/**
 * A run's adapter dispatch attempts: one row per attempt with its adapter, lane,
 * status, failure code (or the questions it asked), times, receipt link and the receipt's
 * verification; each attempt's kept logs (bounded and redacted before they were stored); the
 * attempts in flight, and "Cancel dispatch" for approvers while the run is running.
 */
export function DispatchAttempts({
  runId,
  runStatus,
  state,
  logs,
  canCancel,
}: {
  runId: string;
  runStatus: string;
  state: DispatchState;
  logs: DispatchLogs | null;
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
        <TableWrap label="Table of dispatch attempts">
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
                const note = attemptNote(a.dispatch);
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
                    <td>{note ? <code title={note.title}>{note.text}</code> : "—"}</td>
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
        </TableWrap>
      )}
      {logs !== null && logs.length > 0 && <AttemptLogs logs={logs} />}
    </section>
  );
}

/** Each attempt's stdout and stderr as kept: the adapter's cap, then redaction, then storage. */
function AttemptLogs({ logs }: { logs: DispatchLogs }) {
  const byAttempt = new Map<string, DispatchLogs>();
  for (const log of logs) {
    const key = `${log.step_id}#${log.attempt}`;
    byAttempt.set(key, [...(byAttempt.get(key) ?? []), log]);
  }
  return (
    <div className="stack">
      <h3>Logs</h3>
      <p className="hint">
        Kept as the adapter&apos;s limits allow, cut at a line boundary, and redacted (credentials,
        tokens, workspace and home paths) before they were stored; each is checked against the
        digest its dispatch receipt records.
      </p>
      {[...byAttempt.entries()].map(([key, streams]) => (
        <details key={key} data-testid="dispatch-logs">
          <summary>
            Logs of <span className="mono">{key}</span>
          </summary>
          {streams.map((log) => (
            <div key={log.stream} data-testid={`dispatch-log-${log.stream}`}>
              <p className="muted">
                <strong>{log.stream}</strong>: {bytesText(log.bytes_total)} written,{" "}
                {bytesText(log.bytes_retained)} kept
                {log.truncated ? " · truncated by the adapter's output limit" : ""}
                {log.display_truncated ? " · showing the first 64 KiB" : ""}
              </p>
              {!log.intact ? (
                <p className="error">Missing or changed since its receipt was signed; not shown.</p>
              ) : log.text === "" ? (
                <p className="empty">(empty)</p>
              ) : (
                <pre className="json log">{log.text}</pre>
              )}
            </div>
          ))}
        </details>
      ))}
    </div>
  );
}
