"use client";

import { useMemo, useState } from "react";
import type { FormEvent } from "react";
import { useRouter } from "next/navigation";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import { buildInputs, cliCommand, defaultRunner, fieldsOf } from "@/lib/skill-form";
import type { RunnerInfo } from "@/lib/skill-form";

/**
 * The form generated from the skill's runner inputs; on success it opens the run. `cliRef` is
 * the catalog's reference for `runx skill` (the CLI-equivalent line follows the form).
 */
export function StartRunForm({
  skill,
  cliRef,
  runners,
}: {
  skill: string;
  cliRef: string;
  runners: RunnerInfo[];
}) {
  const router = useRouter();
  const [runnerName, setRunnerName] = useState(defaultRunner(runners)?.name ?? "");
  const hydrated = useHydrated();
  const runner = runners.find((r) => r.name === runnerName);
  const fields = useMemo(() => fieldsOf(runner?.inputs), [runner]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [asJson, setAsJson] = useState(false);
  const [allowSpawn, setAllowSpawn] = useState(false);
  // Adapter dispatches launch only with it; the catalog says which runners may dispatch.
  const dispatches = runner?.dispatches ?? (runner?.type === "adapter" || runner?.type === "graph");
  const [error, setError] = useState<{ field: string | null; message: string } | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildInputs(fields, values, asJson);
    if (!built.ok) return setError({ field: built.field, message: built.error });
    setBusy(true);
    setError(null);
    try {
      const isDefault = runner?.default ?? true;
      const result = await browserApi().runs.start.mutate({
        skill,
        inputs: built.inputs,
        ...(isDefault || !runner ? {} : { runner: runner.name }),
        ...(dispatches && allowSpawn ? { allowSpawn: true } : {}),
      });
      router.push(`/runs/${encodeURIComponent(result.runId)}`);
    } catch (e) {
      setError({ field: null, message: errorMessage(e) });
      setBusy(false);
    }
  }

  const fid = (name: string) => `input-${name}`.replace(/[^A-Za-z0-9_-]/g, "_");
  return (
    <form
      method="post"
      className="card start-form"
      aria-label="Start run"
      onSubmit={(e) => void submit(e)}
    >
      <fieldset className="bare" disabled={!hydrated}>
        {runners.length > 1 && (
          <div className="field">
            <label htmlFor="runner">Runner</label>
            <select id="runner" value={runnerName} onChange={(e) => setRunnerName(e.target.value)}>
              {runners.map((r) => (
                <option key={r.name} value={r.name}>
                  {r.name} ({r.type}){r.default ? " — default" : ""}
                </option>
              ))}
            </select>
          </div>
        )}
        {fields.length === 0 && <p className="muted">This runner declares no inputs.</p>}
        {fields.map((field) => (
          <div className="field" key={field.name}>
            <label htmlFor={fid(field.name)}>{field.name}</label>
            <input
              id={fid(field.name)}
              name={field.name}
              value={values[field.name] ?? ""}
              onChange={(e) => setValues((v) => ({ ...v, [field.name]: e.target.value }))}
              required={field.required}
              aria-invalid={error?.field === field.name ? true : undefined}
              aria-describedby={field.description ? `${fid(field.name)}-d` : undefined}
              className={field.type === "object" || field.type === "array" ? "mono" : undefined}
            />
            {field.description && (
              <p className="hint" id={`${fid(field.name)}-d`}>
                {field.type ? `${field.type}. ` : ""}
                {field.description}
              </p>
            )}
          </div>
        ))}
        {fields.length > 0 && (
          <div className="field checkbox">
            <input
              id="as-json"
              type="checkbox"
              checked={asJson}
              onChange={(e) => setAsJson(e.target.checked)}
            />
            <label htmlFor="as-json">Values are JSON</label>
          </div>
        )}
        {dispatches && (
          <div className="field checkbox">
            <input
              id="allow-spawn"
              type="checkbox"
              checked={allowSpawn}
              onChange={(e) => setAllowSpawn(e.target.checked)}
              aria-describedby="allow-spawn-hint"
            />
            <label htmlFor="allow-spawn">Allow spawn</label>
            <p className="hint" id="allow-spawn-hint">
              Lets this run&apos;s adapter dispatches launch their process, recorded with your name
              in each dispatch receipt. A dispatch that needs approval still waits for another
              approver. Unchecked, every dispatch is recorded as a dry run and nothing launches.
            </p>
          </div>
        )}
        {error && (
          <p role="alert" className="error">
            {error.message}
          </p>
        )}
        <div>
          <button type="submit" className="button primary" disabled={busy}>
            Start run
          </button>
        </div>
        <p className="hint">
          CLI equivalent (from the workspace root):{" "}
          <code data-testid="cli-equivalent">
            {cliCommand({
              cliRef,
              runner,
              fields,
              values,
              asJson,
              allowSpawn: dispatches && allowSpawn,
            })}
          </code>
        </p>
      </fieldset>
    </form>
  );
}
