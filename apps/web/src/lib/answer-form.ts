/**
 * The answer form model: one control per field of a pending request's answer contract (the
 * JSON Schema the runtime derives from the step's declared outputs or the input questions),
 * and the browser's check of an answer against it — the same top-level rules the API applies
 * (required, type, enum, no unexpected field where the contract is closed), worded the same
 * way, so a person sees the same refusal before sending as the API would give. Nested
 * constraints are left to the API, which checks the whole contract again. Pure.
 */

/** The contract of one pending request, as runs.get returns it. */
export interface AnswerContractView {
  kind: string;
  label: string;
  prompt: string | null;
  schema: Record<string, unknown>;
}

/** A pending request with its contract. */
export interface ContractedRequest {
  id: string;
  contract: AnswerContractView;
}

/** How a field is edited. */
export type FieldControl = "text" | "textarea" | "number" | "checkbox" | "select" | "json";

/** One generated control. */
export interface AnswerField {
  name: string;
  control: FieldControl;
  /** The JSON type the answer needs (null: any JSON value). */
  type: "string" | "number" | "integer" | "boolean" | "object" | "array" | null;
  required: boolean;
  description: string | null;
  /** Allowed values of an enum (select), in declared order. */
  options: unknown[] | null;
}

/** The form of one request. */
export interface RequestForm {
  requestId: string;
  label: string;
  fields: AnswerField[];
  /** Whether fields the contract does not name are refused. */
  closed: boolean;
  /** True when the contract names no fields: the whole answer is one JSON value. */
  free: boolean;
}

/** What a control holds: text for most, a boolean for a checkbox. */
export type FieldValue = string | boolean;

/** A refused answer, placed on the field it names (null: the answer or JSON as a whole). */
export interface FormProblem {
  requestId: string;
  field: string | null;
  message: string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const TYPES = new Set(["string", "number", "integer", "boolean", "object", "array"]);

/** Strings longer than this (or of unbounded length) get a multi-line box. */
const SHORT_TEXT = 120;

function fieldOf(name: string, raw: unknown, required: boolean): AnswerField {
  const spec = isRecord(raw) ? raw : {};
  const declared = typeof spec.type === "string" && TYPES.has(spec.type) ? spec.type : null;
  const type = declared as AnswerField["type"];
  const options = Array.isArray(spec.enum) ? (spec.enum as unknown[]) : null;
  const description = typeof spec.description === "string" ? spec.description : null;
  let control: FieldControl;
  if (options !== null) control = "select";
  else if (type === "string") {
    const short =
      (typeof spec.maxLength === "number" && spec.maxLength <= SHORT_TEXT) ||
      typeof spec.format === "string";
    control = short ? "text" : "textarea";
  } else if (type === "number" || type === "integer") control = "number";
  else if (type === "boolean") control = "checkbox";
  else control = "json";
  return { name, control, type, required, description, options };
}

/** The form of a request: one field per top-level property of its contract, in declared order. */
export function formOf(request: ContractedRequest): RequestForm {
  const schema = request.contract.schema;
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((r) => typeof r === "string") : [],
  );
  const fields = Object.entries(properties).map(([name, raw]) =>
    fieldOf(name, raw, required.has(name)),
  );
  return {
    requestId: request.id,
    label: request.contract.label,
    fields,
    closed: schema.additionalProperties === false,
    free: fields.length === 0 && schema.additionalProperties !== false,
  };
}

const ARTICLE: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "a list",
};

function valueText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** `answer for <label>: field "<name>" <words>`, with an enum's values when `listAllowed`. */
function say(
  form: RequestForm,
  field: AnswerField | string,
  words: string,
  listAllowed = true,
): FormProblem {
  const name = typeof field === "string" ? field : field.name;
  const options = typeof field === "string" ? null : field.options;
  const allowed =
    listAllowed && options !== null ? ` (one of: ${options.map(valueText).join(", ")})` : "";
  return {
    requestId: form.requestId,
    field: name,
    message: `answer for ${form.label}: field "${name}" ${words}${allowed}`,
  };
}

function matchesType(value: unknown, type: NonNullable<AnswerField["type"]>): boolean {
  switch (type) {
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isRecord(value);
    case "array":
      return Array.isArray(value);
  }
}

const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Checks one answer (from the form or pasted JSON) against the request's form: the first
 * problem, or null when the answer keeps the top-level contract.
 */
export function checkAnswer(form: RequestForm, answer: unknown): FormProblem | null {
  if (!isRecord(answer)) {
    const names = form.fields.map((f) => f.name);
    return {
      requestId: form.requestId,
      field: null,
      message: `answer for ${form.label} must be a JSON object${names.length > 0 ? ` with the fields ${names.join(", ")}` : ""}`,
    };
  }
  for (const field of form.fields) {
    const value = answer[field.name];
    if (value === undefined) {
      if (field.required) return say(form, field, "is required");
      continue;
    }
    if (field.type !== null && !matchesType(value, field.type)) {
      return say(form, field, `must be ${ARTICLE[field.type]}`);
    }
    if (field.options !== null && !field.options.some((o) => sameJson(o, value))) {
      return say(form, field, `must be one of: ${field.options.map(valueText).join(", ")}`, false);
    }
  }
  if (form.closed) {
    const known = form.fields.map((f) => f.name);
    const extra = Object.keys(answer).find((k) => !known.includes(k));
    if (extra !== undefined) {
      return say(
        form,
        extra,
        `is not expected${known.length > 0 ? ` (expected: ${known.join(", ")})` : ""}`,
      );
    }
  }
  return null;
}

type ReadField =
  { kind: "empty" } | { kind: "value"; value: unknown } | { kind: "problem"; problem: FormProblem };

/** One control's value as the answer holds it; an empty control gives nothing. */
function readField(
  form: RequestForm,
  field: AnswerField,
  value: FieldValue | undefined,
): ReadField {
  if (field.control === "checkbox") {
    // An unchecked optional box says nothing; a required one says false.
    if (value === true) return { kind: "value", value: true };
    return field.required ? { kind: "value", value: false } : { kind: "empty" };
  }
  const text = typeof value === "string" ? value : "";
  if (text.trim() === "") return { kind: "empty" };
  if (field.control === "select") {
    const option = field.options?.[Number(text)];
    return option === undefined ? { kind: "empty" } : { kind: "value", value: option };
  }
  if (field.control === "number") {
    const n = Number(text.trim());
    return Number.isFinite(n)
      ? { kind: "value", value: n }
      : {
          kind: "problem",
          problem: say(form, field, `must be ${ARTICLE[field.type ?? "number"]}`),
        };
  }
  if (field.control === "json") {
    try {
      return { kind: "value", value: JSON.parse(text) as unknown };
    } catch {
      return { kind: "problem", problem: say(form, field, "is not valid JSON", false) };
    }
  }
  return { kind: "value", value: text };
}

/** The result of turning form values into an answer. */
export type AnswerResult = { ok: true; answer: unknown } | { ok: false; problem: FormProblem };

/** The key of a free-form request's one JSON box in the values map. */
export const WHOLE_ANSWER = "";

/**
 * Form values → the request's answer. Empty controls are left out (a required one is then
 * refused by name); numbers and JSON boxes are parsed; a select gives its declared value.
 */
export function answerFrom(
  form: RequestForm,
  values: Readonly<Record<string, FieldValue>>,
): AnswerResult {
  if (form.free) {
    const text = values[WHOLE_ANSWER];
    const raw = typeof text === "string" && text.trim() !== "" ? text : "{}";
    try {
      const answer = JSON.parse(raw) as unknown;
      const problem = checkAnswer(form, answer);
      return problem === null ? { ok: true, answer } : { ok: false, problem };
    } catch {
      return {
        ok: false,
        problem: {
          requestId: form.requestId,
          field: WHOLE_ANSWER,
          message: `answer for ${form.label} is not valid JSON`,
        },
      };
    }
  }
  const answer: Record<string, unknown> = {};
  for (const field of form.fields) {
    const read = readField(form, field, values[field.name]);
    if (read.kind === "problem") return { ok: false, problem: read.problem };
    if (read.kind === "value") answer[field.name] = read.value;
  }
  const problem = checkAnswer(form, answer);
  return problem === null ? { ok: true, answer } : { ok: false, problem };
}

/**
 * An answer → form values (what the form shows after the raw JSON was edited). Values a
 * control cannot hold are shown as JSON in a JSON box, or dropped.
 */
export function valuesFrom(form: RequestForm, answer: unknown): Record<string, FieldValue> {
  if (form.free) return { [WHOLE_ANSWER]: JSON.stringify(answer ?? {}, null, 2) };
  const values: Record<string, FieldValue> = {};
  if (!isRecord(answer)) return values;
  for (const field of form.fields) {
    const value = answer[field.name];
    if (value === undefined) continue;
    if (field.control === "checkbox") values[field.name] = value === true;
    else if (field.control === "select") {
      const index = field.options?.findIndex((o) => sameJson(o, value)) ?? -1;
      if (index >= 0) values[field.name] = String(index);
    } else if (field.control === "json") values[field.name] = JSON.stringify(value, null, 2);
    else if (field.control === "number") {
      if (typeof value === "number") values[field.name] = String(value);
    } else if (typeof value === "string") values[field.name] = value;
  }
  return values;
}

/**
 * The raw JSON the advanced mode starts with: every request id → what the form holds so far
 * (only filled fields, so an untouched form shows `{}` per request).
 */
export function rawFrom(
  forms: readonly RequestForm[],
  values: Readonly<Record<string, Readonly<Record<string, FieldValue>>>>,
): string {
  const out: Record<string, unknown> = {};
  for (const form of forms) {
    const own = values[form.requestId] ?? {};
    if (form.free) {
      const text = own[WHOLE_ANSWER];
      try {
        out[form.requestId] =
          typeof text === "string" && text.trim() !== "" ? (JSON.parse(text) as unknown) : {};
      } catch {
        out[form.requestId] = {};
      }
      continue;
    }
    const partial: Record<string, unknown> = {};
    for (const field of form.fields) {
      // What is filled in: an unchecked box or a box that does not parse shows nothing yet.
      const read = readField(form, { ...field, required: false }, own[field.name]);
      if (read.kind === "value") partial[field.name] = read.value;
    }
    out[form.requestId] = partial;
  }
  return JSON.stringify(out, null, 2);
}

/** The result of reading the advanced mode's JSON. */
export type RawResult =
  { ok: true; answers: Record<string, unknown> } | { ok: false; problem: FormProblem };

/**
 * The advanced mode's JSON → `runs.answer`'s answers (keyed by request id; with one pending
 * request its bare answer is accepted too), each checked as the form checks it.
 */
export function answersFromRaw(text: string, forms: readonly RequestForm[]): RawResult {
  const ids = forms.map((f) => f.requestId);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    return {
      ok: false,
      problem: {
        requestId: "",
        field: null,
        message: `the answer is not valid JSON: ${(error as Error).message}`,
      },
    };
  }
  let answers: Record<string, unknown>;
  if (
    isRecord(value) &&
    Object.keys(value).length > 0 &&
    Object.keys(value).every((k) => ids.includes(k))
  ) {
    answers = value;
  } else if (ids.length === 1 && ids[0] !== undefined) {
    answers = { [ids[0]]: value };
  } else {
    return {
      ok: false,
      problem: {
        requestId: "",
        field: null,
        message: `the answer must be an object keyed by request id (${ids.join(", ")})`,
      },
    };
  }
  for (const form of forms) {
    if (!(form.requestId in answers)) continue;
    const problem = checkAnswer(form, answers[form.requestId]);
    if (problem !== null) return { ok: false, problem };
  }
  return { ok: true, answers };
}
