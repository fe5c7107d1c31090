import type { Metadata } from "next";
import Link from "next/link";
import { AgentRequest } from "@/components/AgentRequest";
import { AnswerForm } from "@/components/AnswerForm";
import { ApiError } from "@/components/ApiError";
import { Digest } from "@/components/Digest";
import { DispatchAttempts } from "@/components/DispatchAttempts";
import { OutcomeBadge } from "@/components/OutcomeBadge";
import { RunLive } from "@/components/RunLive";
import { EventHistory, StepTable } from "@/components/RunTimeline";
import { adapterQuestions } from "@/lib/adapter-gate";
import { dispatchKey } from "@/lib/dispatch-view";
import { formatTime, prettyJson } from "@/lib/format";
import { load } from "@/lib/server-api";
import { TableWrap } from "@/components/TableWrap";

type Params = Promise<{ runId: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Run ${decodeURIComponent((await params).runId)}` };
}

export default async function RunPage({ params }: { params: Params }) {
  const runId = decodeURIComponent((await params).runId);
  const loaded = await load(async (api) => {
    const [detail, timeline] = await Promise.all([
      api.runs.get.query({ runId }),
      api.runs.timeline.query({ runId }),
    ]);
    return { ...detail, timeline };
  });
  if (!loaded.ok)
    return <ApiError title={`Run ${runId}`} error={loaded.error} problem={loaded.problem} />;
  // Dispatch attempts and the viewer's role are extras: the run page renders without them.
  const extras = await load(async (api) => {
    const [me, dispatch, logs] = await Promise.all([
      api.auth.me.query(),
      api.adapters.attempts.query({ runId }),
      api.adapters.logs.query({ runId }),
    ]);
    return { me, dispatch, logs };
  });
  const dispatch = extras.ok ? extras.value.dispatch : null;
  const logs = extras.ok ? extras.value.logs : null;
  const canCancel = extras.ok && extras.value.me.role !== "viewer";
  // Whether this run's runner can hand work to an adapter at all (the catalog's answer); a
  // run that cannot dispatch has no spawn authority to report. Unknown (the skill left the
  // catalog) keeps the row, since the run may still have dispatched.
  const catalog = await load((api) => api.skills.get.query({ skill: loaded.value.run.skill }));
  const mayDispatch = catalog.ok
    ? (catalog.value.runners.find((r) => r.name === loaded.value.run.runner)?.dispatches ?? true)
    : true;
  const hasDispatches =
    dispatch !== null && (dispatch.attempts.length > 0 || dispatch.running.length > 0);
  const {
    run,
    inputs,
    result,
    error,
    steps,
    pendingApprovals,
    pendingRequests,
    receipts,
    decisions,
    timeline,
  } = loaded.value;
  const outputs = steps.filter((step) => step.output !== null && step.output !== undefined);
  const enc = encodeURIComponent(run.id);

  return (
    <section className="page">
      <p className="crumbs">
        <Link href="/runs">Runs</Link> / <span className="mono">{run.id}</span>
      </p>
      <div className="title-row">
        <h1>
          Run <span className="mono">{run.id}</span>
        </h1>
        <OutcomeBadge outcome={run.outcome} testId="run-outcome" />
        <RunLive
          runId={run.id}
          status={run.status}
          {...(dispatch !== null ? { dispatch: dispatchKey(dispatch) } : {})}
        />
      </div>
      <nav className="link-row" aria-label="Run">
        <Link href={`/runs/${enc}/receipts`} className="button">
          Receipts
        </Link>
        {run.receiptId && (
          <Link href={`/receipts/${encodeURIComponent(run.receiptId)}`} className="button ghost">
            Root receipt
          </Link>
        )}
        <a
          href={`/runs/${enc}/bundle`}
          download={`evidence-${runId}.json`}
          className="button ghost"
        >
          Evidence bundle
        </a>
      </nav>

      <dl className="facts card">
        <dt>Skill</dt>
        <dd>
          <Link href={`/skills/${encodeURIComponent(run.skill)}`}>{run.skill}</Link>
        </dd>
        <dt>Runner</dt>
        <dd>{run.runner}</dd>
        <dt>Initiator</dt>
        <dd>{run.initiator ?? "— (CLI or unknown)"}</dd>
        {run.initiator !== null && mayDispatch && (
          <>
            <dt>Spawn authority</dt>
            <dd data-testid="spawn-authority">
              {run.spawnGranted
                ? `granted by ${run.initiator}: adapter dispatches may launch`
                : "not granted: adapter dispatches are recorded as dry runs"}
            </dd>
          </>
        )}
        <dt>Disposition</dt>
        <dd>{run.disposition ?? "—"}</dd>
        <dt>Created</dt>
        <dd>{formatTime(run.createdAt)}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(run.updatedAt)}</dd>
        <dt>Package digest</dt>
        <dd>
          <Digest value={run.packageDigest} />
        </dd>
        <dt>Closure digest</dt>
        <dd>
          <Digest value={run.executionClosureDigest} />
        </dd>
        <dt>Inputs digest</dt>
        <dd>
          <Digest value={run.inputsDigest} />
        </dd>
      </dl>

      {pendingApprovals.length > 0 && (
        <section className="card approvals-callout" aria-labelledby="pending-approvals">
          <h2 id="pending-approvals">Waiting for approval</h2>
          <ul>
            {pendingApprovals.map((request) => (
              <li key={request.id}>
                Gate <code>{request.gate.id}</code>: {request.gate.reason}
              </li>
            ))}
          </ul>
          <p>
            Human decisions are made in the <Link href="/approvals">approval inbox</Link>, never
            through agent answers.
          </p>
        </section>
      )}

      {pendingRequests.length > 0 && (
        <section className="card agent-requests" aria-labelledby="agent-requests">
          <h2 id="agent-requests">Agent requests</h2>
          <ul className="requests">
            {pendingRequests.map((request) => (
              <li key={request.id}>
                <p>
                  <code>{request.id}</code> <span className="badge">{request.kind}</span>
                </p>
                {request.kind === "input" ? (
                  <ul>
                    {request.questions.map((q) => (
                      <li key={q.id}>
                        <code>{q.id}</code> ({q.type}
                        {q.required ? ", required" : ""}): {q.prompt}
                      </li>
                    ))}
                  </ul>
                ) : adapterQuestions(request.invocation) !== null ? (
                  <AdapterQuestions asked={adapterQuestions(request.invocation)!} />
                ) : (
                  <AgentRequest
                    label={request.contract.label}
                    prompt={request.contract.prompt}
                    invocation={request.invocation}
                  />
                )}
              </li>
            ))}
          </ul>
          <AnswerForm runId={run.id} requests={pendingRequests} />
        </section>
      )}

      {hasDispatches && (
        <DispatchAttempts
          runId={run.id}
          runStatus={run.status}
          state={dispatch}
          logs={logs}
          canCancel={canCancel}
        />
      )}

      <section aria-labelledby="steps">
        <h2 id="steps">Steps</h2>
        {timeline.steps.length === 0 ? (
          <p className="empty">No step records (a single-step run keeps its result below).</p>
        ) : (
          <StepTable steps={timeline.steps} />
        )}
        {!timeline.planRecorded && timeline.steps.length > 0 && (
          <p className="hint">
            This run was recorded before runs kept their plan: only the steps it ran are listed.
          </p>
        )}
        {outputs.length > 0 && (
          <details className="step-outputs">
            <summary>Step outputs</summary>
            {outputs.map((step) => (
              <section
                key={`${step.stepId}:${step.attempt}`}
                aria-label={`Output of ${step.stepId}`}
              >
                <h3 className="mono">{step.stepId}</h3>
                <pre className="json">{prettyJson(step.output)}</pre>
              </section>
            ))}
          </details>
        )}
      </section>

      <section aria-labelledby="history">
        <h2 id="history">Event history</h2>
        <EventHistory events={timeline.events} />
      </section>

      <div className="two-col">
        <section aria-labelledby="inputs">
          <h2 id="inputs">Inputs</h2>
          {inputs === null ? (
            <p className="muted">
              Not kept (only a paused run keeps its admitted inputs; digest above).
            </p>
          ) : (
            <pre className="json">{prettyJson(inputs)}</pre>
          )}
        </section>
        <section aria-labelledby="output">
          <h2 id="output">Output</h2>
          {result === null || result === undefined ? (
            <p className="empty">
              {run.status === "sealed" ? "The run sealed without an output." : "No output yet."}
            </p>
          ) : (
            <pre className="json" data-testid="run-output">
              {prettyJson(result)}
            </pre>
          )}
          {error !== null && error !== undefined && (
            <>
              <h3>Error</h3>
              <pre className="json error-block">{prettyJson(error)}</pre>
            </>
          )}
        </section>
      </div>

      <section aria-labelledby="receipts">
        <h2 id="receipts">Receipts</h2>
        {receipts.length === 0 ? (
          <p className="empty">No receipts yet.</p>
        ) : (
          <TableWrap label="Table of this run's receipts">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">Receipt</th>
                  <th scope="col">Skill</th>
                  <th scope="col">Disposition</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {receipts.map((r) => (
                  <tr key={r.receiptId}>
                    <td>
                      <Link href={`/receipts/${encodeURIComponent(r.receiptId)}`} className="mono">
                        {r.receiptId}
                      </Link>
                    </td>
                    <td>{r.skill}</td>
                    <td>{r.disposition}</td>
                    <td>{r.isChild ? "child" : "root"}</td>
                    <td className="nowrap">{formatTime(r.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        )}
      </section>

      {decisions.length > 0 && (
        <section aria-labelledby="decisions">
          <h2 id="decisions">Decisions</h2>
          <ul className="decisions">
            {decisions.map((d) => (
              <li key={d.id}>
                <span className={`badge decision-${d.decision}`}>{d.decision}</span>{" "}
                {d.decision === "approve" ? "approved" : "denied"} by <strong>{d.username}</strong>{" "}
                for gate <code>{d.gateId}</code> at {formatTime(d.decidedAt)}: “{d.reason}”
              </li>
            ))}
          </ul>
        </section>
      )}
    </section>
  );
}

/**
 * The questions an adapter asked: each question id, prompt and
 * answer schema. Answers are task input, never approval.
 */
function AdapterQuestions({ asked }: { asked: NonNullable<ReturnType<typeof adapterQuestions>> }) {
  return (
    <div className="stack" data-testid="adapter-questions">
      <p>
        Adapter <code>{asked.adapterId}</code> asks about packet{" "}
        <code className="mono">{asked.packetId}</code>
        {asked.dispatchReceiptId && (
          <>
            {" "}
            (
            <Link href={`/receipts/${encodeURIComponent(asked.dispatchReceiptId)}`}>
              dispatch receipt
            </Link>
            )
          </>
        )}
        :
      </p>
      <ul>
        {asked.questions.map((q) => (
          <li key={q.question_id}>
            <code>{q.question_id}</code>: {q.prompt}
            {q.answer_schema !== null && (
              <>
                {" "}
                — answer schema <code className="mono">{JSON.stringify(q.answer_schema)}</code>
              </>
            )}
          </li>
        ))}
      </ul>
      <p className="hint">
        An answer is task input, never approval: it builds a new packet that passes the whole gate
        again (its own approval where one is required, and spawn authority). Nothing launches on an
        answer alone.
      </p>
    </div>
  );
}
