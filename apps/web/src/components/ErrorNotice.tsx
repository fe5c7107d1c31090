import type { ApiProblem } from "@/lib/api-problem";

/**
 * An error for the person who met it: the plain message first, then what it takes to act
 * on it (a link to sign in again when the session ended), and the codes, the field's machine path and the HTTP
 * status folded in a details disclosure for whoever debugs or reports it.
 */
export function ErrorNotice({ problem, id }: { problem: ApiProblem | null; id?: string }) {
  if (problem === null) return null;
  const facts: Array<[string, string]> = [];
  if (problem.code !== null) facts.push(["Code", problem.code]);
  if (problem.path !== null) facts.push(["Field", problem.path]);
  if (problem.status !== null) facts.push(["HTTP status", String(problem.status)]);
  return (
    <div role="alert" className="error error-notice" id={id}>
      <p>
        {problem.message}
        {/* The API's own 401 (no session, or one that ended), not a wrong password. */}
        {problem.status === 401 && problem.code === "UNAUTHORIZED" && (
          <>
            {" "}
            <a href="/login">Sign in</a>
          </>
        )}
      </p>
      {facts.length > 0 && (
        <details className="error-details">
          <summary>Details</summary>
          <dl>
            {facts.map(([term, value]) => (
              <div key={term}>
                <dt>{term}</dt>
                <dd>
                  <code>{value}</code>
                </dd>
              </div>
            ))}
          </dl>
        </details>
      )}
    </div>
  );
}
