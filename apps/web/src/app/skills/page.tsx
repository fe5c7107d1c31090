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
                <span className="badge" title="trust tier">
                  {s.trustTier}
                </span>{" "}
                <span className="badge">{s.source}</span>{" "}
                {s.status !== "ok" && <span className="badge status-invalid">{s.status}</span>}
                {s.runners.map((r) => (
                  <span key={r.name} className="badge" title={`runner ${r.name}`}>
                    {r.type}
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
