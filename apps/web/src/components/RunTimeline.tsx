import Link from "next/link";
import { TableWrap } from "./TableWrap";
import type { ReactNode } from "react";
import type { TimelineEvent, TimelineStep } from "@/lib/api-types";
import { duration, formatTime } from "@/lib/format";

/** A step status in words, with the badge colour it shares with run statuses. */
const STEP_STATUS: Record<string, { word: string; tone: string }> = {
  pending: { word: "pending", tone: "" },
  not_run: { word: "not run", tone: "" },
  running: { word: "running", tone: "status-running" },
  waiting: { word: "waiting", tone: "status-needs_approval" },
  closed: { word: "completed", tone: "status-completed" },
  deferred: { word: "paused", tone: "status-needs_approval" },
  failed: { word: "failed", tone: "status-failed" },
  blocked: { word: "blocked", tone: "status-failed" },
  declined: { word: "declined", tone: "status-failed" },
  killed: { word: "killed", tone: "status-failed" },
  skipped: { word: "skipped", tone: "" },
};

function stepStatus(status: string): { word: string; tone: string } {
  return STEP_STATUS[status] ?? { word: status, tone: "" };
}

function StepStatus({ status }: { status: string }) {
  const { word, tone } = stepStatus(status);
  return <span className={`badge ${tone}`}>{word}</span>;
}

function ReceiptLink({ id, label }: { id: string; label: string }) {
  return (
    <Link href={`/receipts/${encodeURIComponent(id)}`} aria-label={label}>
      receipt
    </Link>
  );
}

/** Every step of the run, the ones it has not reached too, in a table that scrolls on its own. */
export function StepTable({ steps }: { steps: TimelineStep[] }) {
  return (
    <TableWrap className="step-table-wrap" label="Steps of the run (scrolls sideways)">
      <table className="table step-table" data-testid="step-table">
        <thead>
          <tr>
            <th scope="col">Step</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Started</th>
            <th scope="col">Finished</th>
            <th scope="col">Duration</th>
            <th scope="col">Receipt</th>
          </tr>
        </thead>
        <tbody>
          {steps.map((step) => (
            <tr key={step.stepId} data-step={step.stepId} data-status={step.status}>
              <th scope="row" className="step-name">
                <span className="mono">{step.stepId}</span>
                {step.label !== null && <span className="muted step-label">{step.label}</span>}
                {step.kind !== null && <span className="muted step-kind">{step.kind}</span>}
              </th>
              <td>
                <StepStatus status={step.status} />
              </td>
              <td data-col="attempts">{step.attempts}</td>
              <td data-col="started" className="nowrap">
                {step.startedAt === null ? (
                  "—"
                ) : (
                  <time dateTime={step.startedAt}>{formatTime(step.startedAt)}</time>
                )}
              </td>
              <td data-col="finished" className="nowrap">
                {step.finishedAt === null ? (
                  "—"
                ) : (
                  <time dateTime={step.finishedAt}>{formatTime(step.finishedAt)}</time>
                )}
              </td>
              <td data-col="duration" className="nowrap">
                {duration(step.startedAt, step.finishedAt)}
              </td>
              <td data-col="receipt">
                {step.receiptId === null ? (
                  "—"
                ) : (
                  <ReceiptLink id={step.receiptId} label={`Receipt of step ${step.stepId}`} />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}

const VIA: Record<string, string> = {
  console: "in the console",
  cli: "from the CLI",
  mcp: "through MCP",
  harness: "by the test harness",
  runtime: "by a direct runtime call",
};

/** "by ada in the console", "from the CLI", or nothing when neither is known. */
function byWhom(event: TimelineEvent): ReactNode {
  const via = event.via !== null ? VIA[event.via] : undefined;
  return (
    <>
      {event.actor !== null && (
        <>
          {" "}
          by <Actor name={event.actor} />
        </>
      )}
      {via !== undefined && ` ${via}`}
    </>
  );
}

function Actor({ name }: { name: string }) {
  return (
    <strong className="event-actor" data-testid="event-actor">
      {name}
    </strong>
  );
}

function waitingFor(event: TimelineEvent): string {
  const parts = event.requests.map((r) =>
    r.kind === "approval"
      ? `approval of gate ${r.gateId ?? r.requestId}${r.gateReason ? ` (${r.gateReason})` : ""}`
      : r.kind === "input"
        ? `input ${r.requestId}`
        : `an agent's answer to ${r.requestId}`,
  );
  return parts.length > 0 ? parts.join("; ") : "a request";
}

/** The event in one sentence, with its step or receipt where it has one. */
function sentence(event: TimelineEvent): { label: string; text: ReactNode } {
  const step = event.stepId !== null ? <code>{event.stepId}</code> : null;
  const attempt = event.attempt !== null && event.attempt > 1 ? ` (attempt ${event.attempt})` : "";
  switch (event.kind) {
    case "run_started":
      return { label: "Run started", text: <>Started{byWhom(event)}</> };
    case "step_started":
      return {
        label: "Step started",
        text: (
          <>
            Step {step} started{attempt}
          </>
        ),
      };
    case "step_finished":
      return {
        label: "Step finished",
        text: (
          <>
            Step {step} finished{attempt}: {stepStatus(event.status ?? "").word}
          </>
        ),
      };
    case "paused":
      return { label: "Paused", text: `Waiting for ${waitingFor(event)}` };
    case "decision":
      return {
        label: event.decision === "deny" ? "Denied" : "Approved",
        text: (
          <>
            {event.actor !== null ? <Actor name={event.actor} /> : "Someone"}{" "}
            {event.decision === "deny" ? "denied" : "approved"} gate <code>{event.gateId}</code>
          </>
        ),
      };
    case "resumed":
      return {
        label: "Resumed",
        text: (
          <>
            Resumed{byWhom(event)}
            {event.answered.length > 0 && `, answering ${event.answered.join(", ")}`}
          </>
        ),
      };
    case "resume_refused":
      return {
        label: "Resume refused",
        text: `The resume was refused (${event.status ?? "unknown"}); the run stays paused`,
      };
    case "sealed":
      return { label: "Sealed", text: `The run sealed: ${stepStatus(event.status ?? "").word}` };
    case "failed":
      return { label: "Failed", text: `Failed (${event.status ?? "no disposition"})` };
  }
}

/** The run's history, oldest first: what happened, when, who, and the reason they gave. */
export function EventHistory({ events }: { events: TimelineEvent[] }) {
  return (
    <ol className="event-history" data-testid="event-history">
      {events.map((event) => {
        const { label, text } = sentence(event);
        return (
          <li key={event.seq} data-kind={event.kind} className={`event event-${event.kind}`}>
            <time dateTime={event.at} className="event-time">
              {formatTime(event.at)}
            </time>
            <span className="event-label">{label}</span>
            <span className="event-text">
              {text}
              {event.receiptId !== null &&
                (event.kind === "step_finished" || event.kind === "sealed") && (
                  <>
                    {" "}
                    (
                    <ReceiptLink
                      id={event.receiptId}
                      label={
                        event.kind === "sealed"
                          ? "Receipt of the seal"
                          : `Receipt of step ${event.stepId ?? ""}`
                      }
                    />
                    )
                  </>
                )}
            </span>
            {event.reason !== null && (
              <q className="event-reason" data-testid="event-reason">
                {event.reason}
              </q>
            )}
          </li>
        );
      })}
    </ol>
  );
}
