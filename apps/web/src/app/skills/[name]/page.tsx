import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { ApiError } from "@/components/ApiError";
import { StartRunForm } from "@/components/StartRunForm";
import { load } from "@/lib/server-api";

type Params = Promise<{ name: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Skill ${decodeURIComponent((await params).name)}` };
}

export default async function SkillPage({ params }: { params: Params }) {
  const name = decodeURIComponent((await params).name);
  const loaded = await load((api) => api.skills.search.query({ query: name, limit: 200 }));
  if (!loaded.ok) return <ApiError title={`Skill ${name}`} error={loaded.error} />;
  const skill = loaded.value.find((s) => s.name === name);
  if (!skill) notFound();
  const me = await load((api) => api.auth.me.query());
  const canStart = me.ok && (me.value.role === "approver" || me.value.role === "admin");
  return (
    <section className="page">
      <p className="crumbs">
        <Link href="/skills">Skills</Link> / {skill.name}
      </p>
      <h1>{skill.name}</h1>
      <p>{skill.description ?? <span className="muted">No description.</span>}</p>
      <dl className="facts card">
        <dt>Kind</dt>
        <dd>{skill.kind}</dd>
        <dt>Source</dt>
        <dd>
          {skill.source} (<code>{skill.path}</code>)
        </dd>
        <dt>Status</dt>
        <dd>{skill.status}</dd>
        <dt>Runners</dt>
        <dd>
          {skill.runners.map((r) => (
            <div key={r.name}>
              <code>{r.name}</code> — {r.type}
              {r.default ? " (default)" : ""}; inputs: {r.inputs.join(", ") || "none"}
            </div>
          ))}
        </dd>
        <dt>Runs</dt>
        <dd>
          <Link href={`/runs?skill=${encodeURIComponent(skill.name)}`}>Runs of this skill</Link>
        </dd>
      </dl>
      {skill.diagnostics.length > 0 && (
        <section aria-labelledby="diagnostics">
          <h2 id="diagnostics">Diagnostics</h2>
          <ul>
            {skill.diagnostics.map((d, i) => (
              <li key={i} className="error">
                <code>{d.code}</code> {d.file ? `${d.file}${d.line ? `:${d.line}` : ""}: ` : ""}
                {d.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      <h2>Start a run</h2>
      {skill.status !== "ok" ? (
        <p className="error">This package is invalid; fix the diagnostics above to run it.</p>
      ) : canStart ? (
        <StartRunForm skill={skill.name} runners={skill.runners} />
      ) : (
        <p className="muted">Starting runs needs the approver or admin role.</p>
      )}
    </section>
  );
}
