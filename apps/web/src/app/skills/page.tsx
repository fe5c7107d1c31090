import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { param } from "@/lib/format";
import { load } from "@/lib/server-api";

export const metadata: Metadata = { title: "Skills" };

export default async function SkillsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const q = param((await searchParams).q)?.trim() ?? "";
  const loaded = await load((api) =>
    api.skills.search.query(q === "" ? { limit: 200 } : { query: q, limit: 200 }),
  );
  if (!loaded.ok) return <ApiError title="Skills" error={loaded.error} problem={loaded.problem} />;
  const skills = loaded.value;
  return (
    <section className="page">
      <h1>Skills</h1>
      <form className="search" method="get" action="/skills" role="search" aria-label="Skills">
        <div className="field">
          <label htmlFor="q">Search skills</label>
          <input
            id="q"
            name="q"
            type="search"
            defaultValue={q}
            placeholder="name, description or tag"
          />
        </div>
        <button type="submit" className="button">
          Search
        </button>
      </form>
      {skills.length === 0 ? (
        <p className="empty">{q ? `No skill matches “${q}”.` : "The catalog is empty."}</p>
      ) : (
        <ul className="skills">
          {skills.map((s) => (
            <li key={s.ref} className="card">
              <h2>
                <Link
                  href={`/skills/${encodeURIComponent(s.source === "workspace" ? s.name : s.ref)}`}
                >
                  {s.name}
                </Link>
                {s.version !== null && <span className="muted"> @{s.version}</span>}
              </h2>
              <p className="badges">
                <span className="badge" title="where the skill comes from, and its trust tier">
                  {s.trustTier === s.source ? s.source : `${s.source}, trust ${s.trustTier}`}
                </span>{" "}
                {s.status !== "ok" && <span className="badge status-invalid">{s.status}</span>}
                {runnerKinds(s.runners).map((kind) => (
                  <span key={kind.type} className="badge" title={kind.title}>
                    {kind.label}
                  </span>
                ))}
              </p>
              <p>{s.description ?? <span className="muted">No description.</span>}</p>
              {s.tags.length > 0 && <p className="hint">tags: {s.tags.join(", ")}</p>}
              {s.runners.some((r) => r.approvals.length > 0) && (
                <p className="hint" data-testid="catalog-approval">
                  asks approval for:{" "}
                  {s.runners.flatMap((r) => r.approvals.map((a) => a.headline)).join("; ")}
                </p>
              )}
              <p className="hint">
                inputs:{" "}
                {[...new Set(s.runners.flatMap((r) => r.inputs.map((i) => i.name)))].join(", ") ||
                  "none"}
              </p>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * One badge per runner type, with a count when a skill has several runners of that type; the
 * title names them (a four-runner data store reads "4 graph runners", not "graph" four times).
 */
function runnerKinds(
  runners: ReadonlyArray<{ name: string; type: string }>,
): Array<{ type: string; label: string; title: string }> {
  const byType = new Map<string, string[]>();
  for (const r of runners) byType.set(r.type, [...(byType.get(r.type) ?? []), r.name]);
  return [...byType].map(([type, names]) => ({
    type,
    label: names.length === 1 ? type : `${names.length} ${type} runners`,
    title: `runner${names.length === 1 ? "" : "s"} ${names.join(", ")}`,
  }));
}
