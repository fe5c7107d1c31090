import type { SkillDetail } from "@/lib/api-types";

/**
 * The approvals a skill asks for, from its X.yaml before any run: for each gated step, what
 * it releases and the lines the approval card will show (the runtime lists them, so the
 * catalog previews the same card the approver reads).
 */
export function ApprovalPreviews({ runners }: { runners: SkillDetail["runners"] }) {
  const gates = runners.flatMap((r) => r.approvals.map((a) => ({ runner: r.name, ...a })));
  return (
    <section aria-labelledby="approval-previews" data-testid="approval-previews">
      <h2 id="approval-previews">Approvals it asks for</h2>
      {gates.length === 0 ? (
        <p className="muted">
          None: no step of this skill pauses for a human approval (provider grants alone admit its
          effects, if any).
        </p>
      ) : (
        <ul className="approval-previews">
          {gates.map((g) => (
            <li key={`${g.runner}/${g.step_id}`} className="card">
              <h3>
                Step <code>{g.step_id}</code>: {g.headline}
              </h3>
              <p className="hint">
                runner <code>{g.runner}</code>
                {g.gate_type !== null ? (
                  <>
                    , gate type <code>{g.gate_type}</code>
                  </>
                ) : null}
                . The run pauses once; the approver sees:
              </p>
              <ul className="approval-shows">
                {g.shows.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
