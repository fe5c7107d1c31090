import type { Metadata } from "next";
import Link from "next/link";
import { ApiError } from "@/components/ApiError";
import { ApprovalPreviews } from "@/components/ApprovalPreviews";
import { StartRunForm } from "@/components/StartRunForm";
import { load } from "@/lib/server-api";

type Params = Promise<{ name: string }>;

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Skill ${decodeURIComponent((await params).name)}` };
}

export default async function SkillPage({ params }: { params: Params }) {
  const name = decodeURIComponent((await params).name);
  const loaded = await load((api) => api.skills.get.query({ skill: name }));
  // A 404 from the API renders the not-found page inside load().
  if (!loaded.ok)
    return <ApiError title={`Skill ${name}`} error={loaded.error} problem={loaded.problem} />;
  const skill = loaded.value;
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
        <dt>Trust tier</dt>
        <dd>
          <span className="badge">{skill.trustTier}</span>
        </dd>
        <dt>Source</dt>
        <dd>
          {skill.source} (<code>{skill.ref}</code>)
        </dd>
        {skill.version !== null && (
          <>
            <dt>Version</dt>
            <dd>{skill.version}</dd>
          </>
        )}
        {skill.packageDigest !== null && (
          <>
            <dt>Package digest</dt>
            <dd>
              <code>{skill.packageDigest}</code>
            </dd>
          </>
        )}
        {skill.tags.length > 0 && (
          <>
            <dt>Tags</dt>
            <dd>{skill.tags.join(", ")}</dd>
          </>
        )}
        <dt>Status</dt>
        <dd>{skill.status}</dd>
        <dt>Runners</dt>
        <dd>
          {skill.runners.map((r) => (
            <div key={r.name}>
              <code>{r.name}</code> — {r.type}
              {r.default ? " (default)" : ""}
              {r.inputs.length === 0 ? (
                "; no inputs"
              ) : (
                <ul>
                  {r.inputs.map((i) => (
                    <li key={i.name}>
                      <code>{i.name}</code> ({i.type}
                      {i.required ? ", required" : ""})
                      {i.description !== null ? ` — ${i.description}` : ""}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          ))}
        </dd>
        <dt>Runs</dt>
        <dd>
          <Link href={`/runs?skill=${encodeURIComponent(skill.name)}`}>Runs of this skill</Link>
        </dd>
      </dl>
      <ApprovalPreviews runners={skill.runners} />
      {skill.problem !== null && (
        <section aria-labelledby="diagnostics">
          <h2 id="diagnostics">Diagnostics</h2>
          <p className="error">{skill.problem}</p>
        </section>
      )}
      <h2>Start a run</h2>
      {skill.status !== "ok" ? (
        <p className="error">This package is invalid; fix the diagnostics above to run it.</p>
      ) : canStart ? (
        <StartRunForm skill={skill.ref} cliRef={skill.cliRef} runners={skill.runners} />
      ) : (
        <p className="muted">Starting runs needs the approver or admin role.</p>
      )}
    </section>
  );
}
