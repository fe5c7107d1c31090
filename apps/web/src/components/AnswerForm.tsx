"use client";

import { useEffect, useMemo, useRef, useState } from "react";
import type { FormEvent } from "react";
import { useRouter } from "next/navigation";
import { TRPCClientError } from "@trpc/client";
import { browserApi } from "@/lib/client-api";
import { useHydrated } from "@/lib/hydrated";
import {
  answerFrom,
  answersFromRaw,
  formOf,
  rawFrom,
  valuesFrom,
  WHOLE_ANSWER,
} from "@/lib/answer-form";
import type {
  AnswerField,
  ContractedRequest,
  FieldValue,
  FormProblem,
  RequestForm,
} from "@/lib/answer-form";

type Values = Record<string, Record<string, FieldValue>>;

/** Where a problem shows: a field of one request, or the raw JSON box. */
const RAW_ID = "answer-json";
const fieldId = (ri: number, fi: number | "whole") => `answer-${ri}-${fi}`;

const TYPE_WORDS: Record<string, string> = {
  number: "number",
  integer: "whole number",
  boolean: "yes or no",
  object: "JSON object",
  array: "JSON list",
};

function optionText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/**
 * Answers a paused run's agent and input requests (never approvals) with a form generated
 * from each request's answer contract; the raw JSON stays available as an advanced mode. Both
 * are checked here before sending (the field named, focused and marked invalid) and again by
 * the API, which refuses an answer that breaks the contract without touching the run.
 */
export function AnswerForm({ runId, requests }: { runId: string; requests: ContractedRequest[] }) {
  const router = useRouter();
  const hydrated = useHydrated();
  const forms = useMemo(() => requests.map(formOf), [requests]);
  const [values, setValues] = useState<Values>({});
  const [raw, setRaw] = useState<string | null>(null);
  const [problem, setProblem] = useState<FormProblem | null>(null);
  const [serverError, setServerError] = useState<{ message: string; code: string | null } | null>(
    null,
  );
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  /** Why the operator answers this way: the run's event history shows it on the resume. */
  const [note, setNote] = useState("");
  // Bumped on every refusal so focus moves to the field even when the same one is refused again.
  const [attempt, setAttempt] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);

  /** The id of the control a problem belongs to (the raw box in advanced mode). */
  function targetOf(p: FormProblem): string | null {
    if (raw !== null) return RAW_ID;
    const ri = forms.findIndex((f) => f.requestId === p.requestId);
    const form = forms[ri];
    if (form === undefined) return null;
    if (form.free) return fieldId(ri, "whole");
    const fi = form.fields.findIndex((f) => f.name === p.field);
    return fi >= 0 ? fieldId(ri, fi) : null;
  }
  const target = problem !== null ? targetOf(problem) : null;

  useEffect(() => {
    if (attempt === 0) return;
    const id = problem !== null ? targetOf(problem) : null;
    const el = id !== null ? document.getElementById(id) : null;
    (el ?? formRef.current?.querySelector<HTMLElement>("[data-answer-error]"))?.focus();
    // Only a new refusal moves focus (not typing, which also changes the problem).
  }, [attempt]);

  function refuse(p: FormProblem | null, server: { message: string; code: string | null } | null) {
    setProblem(p);
    setServerError(server);
    setAttempt((n) => n + 1);
  }

  function setValue(requestId: string, name: string, value: FieldValue) {
    setValues((v) => ({ ...v, [requestId]: { ...v[requestId], [name]: value } }));
    if (problem?.requestId === requestId && problem.field === name) setProblem(null);
  }

  function toggleRaw() {
    setProblem(null);
    setServerError(null);
    if (raw === null) {
      setRaw(rawFrom(forms, values));
      return;
    }
    // Back to the form: what the JSON says fills it where it can (unparseable JSON is dropped).
    try {
      const parsed = JSON.parse(raw) as unknown;
      const keyed =
        typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
          ? (parsed as Record<string, unknown>)
          : {};
      const next: Values = { ...values };
      for (const form of forms) {
        if (form.requestId in keyed) {
          next[form.requestId] = valuesFrom(form, keyed[form.requestId]);
        }
      }
      setValues(next);
    } catch {
      // keep the form as it was
    }
    setRaw(null);
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    setDone(null);
    let answers: Record<string, unknown>;
    if (raw !== null) {
      const read = answersFromRaw(raw, forms);
      if (!read.ok) return refuse(read.problem, null);
      answers = read.answers;
    } else {
      answers = {};
      for (const form of forms) {
        const built = answerFrom(form, values[form.requestId] ?? {});
        if (!built.ok) return refuse(built.problem, null);
        answers[form.requestId] = built.answer;
      }
    }
    setBusy(true);
    setProblem(null);
    setServerError(null);
    try {
      const why = note.trim();
      const result = await browserApi().runs.answer.mutate({
        runId,
        answers,
        ...(why !== "" ? { note: why.slice(0, 2000) } : {}),
      });
      setDone(
        result.state === "settled"
          ? `Answer accepted; the run is ${result.envelope.status === "sealed" ? "sealed" : result.envelope.status.replace("_", " ")}.`
          : "Answer accepted; the run continues.",
      );
      router.refresh();
    } catch (e) {
      if (e instanceof TRPCClientError) {
        const data = (e as TRPCClientError<never>).data as
          { runtimeCode?: string | null; requestId?: string; field?: string | null } | undefined;
        const located =
          data?.requestId !== undefined
            ? { requestId: data.requestId, field: data.field ?? null, message: e.message }
            : null;
        refuse(located, { message: e.message, code: data?.runtimeCode ?? null });
      } else {
        refuse(null, { message: e instanceof Error ? e.message : String(e), code: null });
      }
    } finally {
      setBusy(false);
    }
  }

  const errorText = problem?.message ?? serverError?.message ?? null;
  const fieldError = (id: string) =>
    target === id && errorText !== null ? (
      <p id={`${id}-error`} className="answer-field-error" role="alert">
        {errorText}
      </p>
    ) : null;
  const describedBy = (id: string, hint: boolean) =>
    [hint ? `${id}-hint` : null, target === id && errorText !== null ? `${id}-error` : null]
      .filter(Boolean)
      .join(" ") || undefined;

  function control(form: RequestForm, ri: number, field: AnswerField, fi: number) {
    const id = fieldId(ri, fi);
    const value = values[form.requestId]?.[field.name];
    const text = typeof value === "string" ? value : "";
    // Text and choices speak for themselves; other types say what to enter.
    const typeWords =
      field.control === "select" || field.type === "string"
        ? null
        : field.type !== null
          ? TYPE_WORDS[field.type]
          : "any JSON value";
    const hint = field.description !== null || typeWords !== null;
    const common = {
      id,
      name: `${form.requestId}.${field.name}`,
      "aria-invalid": target === id ? true : undefined,
      "aria-describedby": describedBy(id, hint),
      "aria-required": field.required ? true : undefined,
    } as const;
    const label = (
      <label htmlFor={id}>
        {field.name}
        {field.required && <span className="answer-required"> required</span>}
      </label>
    );
    const hintText = hint && (
      <p className="hint" id={`${id}-hint`}>
        {[typeWords, field.description].filter(Boolean).join(" · ")}
      </p>
    );
    if (field.control === "checkbox") {
      return (
        <div className="field checkbox" key={field.name}>
          <input
            {...common}
            type="checkbox"
            checked={value === true}
            onChange={(e) => setValue(form.requestId, field.name, e.target.checked)}
          />
          {label}
          {hintText}
          {fieldError(id)}
        </div>
      );
    }
    let input;
    if (field.control === "select") {
      input = (
        <select
          {...common}
          value={text}
          onChange={(e) => setValue(form.requestId, field.name, e.target.value)}
        >
          <option value="">{field.required ? "Choose…" : "— none —"}</option>
          {(field.options ?? []).map((option, i) => (
            <option key={i} value={String(i)}>
              {optionText(option)}
            </option>
          ))}
        </select>
      );
    } else if (field.control === "textarea" || field.control === "json") {
      input = (
        <textarea
          {...common}
          rows={field.control === "json" ? 4 : 3}
          className={field.control === "json" ? "mono" : undefined}
          spellCheck={field.control === "json" ? false : undefined}
          value={text}
          onChange={(e) => setValue(form.requestId, field.name, e.target.value)}
        />
      );
    } else {
      input = (
        <input
          {...common}
          type={field.control === "number" ? "number" : "text"}
          step={field.control === "number" ? (field.type === "integer" ? 1 : "any") : undefined}
          inputMode={field.control === "number" ? "decimal" : undefined}
          value={text}
          onChange={(e) => setValue(form.requestId, field.name, e.target.value)}
        />
      );
    }
    return (
      <div className="field" key={field.name}>
        {label}
        {input}
        {hintText}
        {fieldError(id)}
      </div>
    );
  }

  return (
    <form
      ref={formRef}
      method="post"
      noValidate
      onSubmit={(e) => void submit(e)}
      aria-label="Answer agent requests"
      className="stack answer-form"
    >
      <fieldset className="bare" disabled={!hydrated}>
        <div className="answer-mode">
          <button
            type="button"
            className="button ghost"
            aria-pressed={raw !== null}
            onClick={toggleRaw}
          >
            {raw === null ? "Raw JSON (advanced)" : "Back to the form"}
          </button>
        </div>
        {raw === null ? (
          forms.map((form, ri) => (
            <fieldset className="answer-request" key={form.requestId}>
              <legend>
                Answer for <strong>{form.label}</strong>
              </legend>
              {form.free ? (
                <div className="field">
                  <label htmlFor={fieldId(ri, "whole")}>Answer (JSON object)</label>
                  <textarea
                    id={fieldId(ri, "whole")}
                    className="mono"
                    rows={4}
                    spellCheck={false}
                    value={String(values[form.requestId]?.[WHOLE_ANSWER] ?? "")}
                    onChange={(e) => setValue(form.requestId, WHOLE_ANSWER, e.target.value)}
                    aria-invalid={target === fieldId(ri, "whole") ? true : undefined}
                    aria-describedby={describedBy(fieldId(ri, "whole"), false)}
                  />
                  {fieldError(fieldId(ri, "whole"))}
                </div>
              ) : form.fields.length === 0 ? (
                <p className="hint">Nothing to fill in: submit to continue.</p>
              ) : (
                form.fields.map((field, fi) => control(form, ri, field, fi))
              )}
            </fieldset>
          ))
        ) : (
          <div className="field">
            <label htmlFor={RAW_ID}>Answer JSON</label>
            <textarea
              id={RAW_ID}
              className="mono"
              rows={Math.min(16, 4 + forms.length * 3)}
              value={raw}
              onChange={(e) => {
                setRaw(e.target.value);
                setProblem(null);
              }}
              spellCheck={false}
              aria-invalid={target === RAW_ID ? true : undefined}
              aria-describedby={["answer-json-hint", describedBy(RAW_ID, false)]
                .filter(Boolean)
                .join(" ")}
            />
            <p id="answer-json-hint" className="hint">
              An object keyed by request id; with one pending request its answer alone. Checked
              against the same contract as the form. CLI equivalent:{" "}
              <code>runx resume {runId} answers.json</code> with <code>{`{"answers": …}`}</code>.
            </p>
            {fieldError(RAW_ID)}
          </div>
        )}
        {errorText !== null && target === null && (
          <p role="alert" className="error" tabIndex={-1} data-answer-error>
            {errorText}
          </p>
        )}
        {serverError?.code && (
          <details className="answer-error-details">
            <summary>Error details</summary>
            <code>{serverError.code}</code>
          </details>
        )}
        {done && (
          <p role="status" className="ok">
            {done}
          </p>
        )}
        <div className="field">
          <label htmlFor="answer-note">Reason (optional)</label>
          <textarea
            id="answer-note"
            rows={2}
            maxLength={2000}
            value={note}
            onChange={(e) => setNote(e.target.value)}
            aria-describedby="answer-note-hint"
          />
          <p id="answer-note-hint" className="hint">
            Why you answer this way; the run&apos;s event history shows it with your name.
          </p>
        </div>
        <div>
          <button type="submit" className="button primary" disabled={busy}>
            Submit answer
          </button>
        </div>
      </fieldset>
    </form>
  );
}
