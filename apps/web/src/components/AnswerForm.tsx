"use client";

import { useState } from "react";
import type { FormEvent } from "react";
import { useRouter } from "next/navigation";
import { browserApi, errorMessage } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import { answersTemplate, parseAnswers } from "@/lib/answers";

/** Answers a paused run's agent/input requests with pasted JSON (never approvals). */
export function AnswerForm({
  runId,
  requestIds,
  template,
}: {
  runId: string;
  requestIds: string[];
  /** The JSON the textarea starts with (default: each request id → {}). */
  template?: string;
}) {
  const router = useRouter();
  const [text, setText] = useState(() => template ?? answersTemplate(requestIds));
  const hydrated = useHydrated();
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const parsed = parseAnswers(text, requestIds);
    if (!parsed.ok) return setError(parsed.error);
    setBusy(true);
    setError(null);
    try {
      const result = await browserApi().runs.answer.mutate({ runId, answers: parsed.answers });
      setDone(
        result.state === "settled"
          ? `Answer accepted; run is ${result.envelope.status}.`
          : "Answer accepted; the run continues.",
      );
      router.refresh();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      method="post"
      onSubmit={(e) => void submit(e)}
      aria-label="Answer agent requests"
      className="stack"
    >
      <fieldset className="bare" disabled={!hydrated}>
        <label htmlFor="answer-json">Answer JSON</label>
        <textarea
          id="answer-json"
          className="mono"
          rows={Math.min(16, 4 + requestIds.length * 3)}
          value={text}
          onChange={(e) => setText(e.target.value)}
          spellCheck={false}
          aria-describedby="answer-hint"
        />
        <p id="answer-hint" className="hint">
          An object keyed by request id; with one pending request you may paste its answer alone.
          CLI equivalent: <code>runx resume {runId} answers.json</code> with{" "}
          <code>{`{"answers": …}`}</code>.
        </p>
        {error && (
          <p role="alert" className="error">
            {error}
          </p>
        )}
        {done && (
          <p role="status" className="ok">
            {done}
          </p>
        )}
        <div>
          <button type="submit" className="button primary" disabled={busy}>
            Submit answer
          </button>
        </div>
      </fieldset>
    </form>
  );
}
