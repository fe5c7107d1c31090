/**
 * The answer contract of a pending request: what its answer must look like, as JSON Schema,
 * derived from what the package declared (an agent act's declared outputs, which its request
 * carries as `envelope.output`; the questions of a missing-input request; the questions an
 * adapter asked). Every entry point checks answers against it before a paused run is taken,
 * so an answer that breaks the contract is refused and the run stays paused as it was.
 * Pure: the contract is read from the request, never from package files or clocks.
 */
import { Ajv } from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { agentClosureProblem, withoutClosure } from "../contracts/agent-closure.js";
import { isAdapterQuestions, packetAnswers } from "./adapter-answers.js";
import type { DispatchQuestion } from "./adapter-answers.js";
import type { ResumeAnswers } from "./answers.js";
import type { RunRequest } from "../contracts/envelope.js";

/** What a pending agent or input request expects as its answer. */
export interface AnswerContract {
  /** Who is asked: an agent act, missing run inputs, or an adapter's questions. */
  kind: "agent" | "input" | "adapter";
  /** The short name errors use: the graph step, else the task, else the request id. */
  label: string;
  /** What is asked, in the package's words (the agent's instructions); null when nothing is. */
  prompt: string | null;
  /** JSON Schema of the answer: an object whose properties are its fields. */
  schema: JsonObject;
}

const str = (value: unknown): string | null =>
  typeof value === "string" && value !== "" ? value : null;

const JSON_TYPES: ReadonlySet<string> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
]);

function inputContract(request: Extract<RunRequest, { kind: "input" }>): AnswerContract {
  const properties: JsonObject = {};
  for (const q of request.questions) {
    const field: JsonObject = JSON_TYPES.has(q.type) ? { type: q.type } : {};
    if (q.description !== undefined) field.description = q.description;
    else if (q.prompt !== "") field.description = q.prompt;
    properties[q.id] = field;
  }
  return {
    kind: "input",
    label: request.id,
    prompt: null,
    // An input answer answers the questions it was asked: anything else would be refused as
    // an undeclared input after the run was taken.
    schema: {
      type: "object",
      properties,
      required: request.questions.filter((q) => q.required).map((q) => q.id),
      additionalProperties: false,
    },
  };
}

function adapterContract(request: RunRequest & { kind: "agent_act" }): AnswerContract {
  const questions = Array.isArray(request.invocation.questions)
    ? (request.invocation.questions as DispatchQuestion[])
    : [];
  const properties: JsonObject = {};
  for (const q of questions) {
    const declared = isJsonObject(q.answer_schema) ? q.answer_schema : {};
    const type = str(declared.type);
    properties[q.question_id] = {
      ...(type !== null && JSON_TYPES.has(type) ? { type } : {}),
      ...(typeof q.prompt === "string" && q.prompt !== "" ? { description: q.prompt } : {}),
    };
  }
  const adapter = str(request.invocation.adapter_id);
  return {
    kind: "adapter",
    label: adapter !== null ? `adapter ${adapter}` : request.id,
    prompt: null,
    schema: {
      type: "object",
      properties,
      required: questions.map((q) => q.question_id),
      additionalProperties: false,
    },
  };
}

function agentContract(request: RunRequest & { kind: "agent_act" }): AnswerContract {
  const envelope = isJsonObject(request.invocation.envelope) ? request.invocation.envelope : {};
  const output = isJsonObject(envelope.output) ? envelope.output : { type: "object" };
  return {
    kind: "agent",
    label: str(envelope.step_id) ?? str(request.invocation.task) ?? request.id,
    prompt: str(envelope.instructions),
    schema: output,
  };
}

/** The answer contract of a pending request; null for an approval (only a human decides it). */
export function answerContract(request: RunRequest): AnswerContract | null {
  if (request.kind === "approval") return null;
  if (request.kind === "input") return inputContract(request);
  return isAdapterQuestions(request) ? adapterContract(request) : agentContract(request);
}

/** A refused answer, described for people and for machines. */
export interface AnswerProblem {
  /** `answer for <label>: field "<field>" is required (one of: …)`. */
  message: string;
  /** The field (`a.b[0]` below the top level); null when the answer as a whole is wrong. */
  field: string | null;
  /** The allowed values, when the field has an enum. */
  allowed?: JsonValue[];
}

function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function fieldPath(segments: readonly string[]): string {
  let out = "";
  for (const segment of segments) {
    if (/^(0|[1-9][0-9]*)$/.test(segment)) out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

const ARTICLE: Readonly<Record<string, string>> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
};

function valueText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function enumOf(schema: unknown): JsonValue[] | undefined {
  return isJsonObject(schema) && Array.isArray(schema.enum) ? schema.enum : undefined;
}

function notAnObject(label: string, schema: JsonObject): AnswerProblem {
  const fields = isJsonObject(schema.properties) ? Object.keys(schema.properties) : [];
  return {
    message: `answer for ${label} must be a JSON object${fields.length > 0 ? ` with the fields ${fields.join(", ")}` : ""}`,
    field: null,
  };
}

/** One ajv error (the first; checks stop there) in plain words. */
function describe(error: ErrorObject, label: string, schema: JsonObject): AnswerProblem {
  const segments = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent = error.parentSchema;
  // A field with an enum always shows its allowed values, once.
  const say = (field: string, words: string, allowed?: JsonValue[]): AnswerProblem => ({
    message: `answer for ${label}: field "${field}" ${words}${allowed !== undefined ? ` (one of: ${allowed.map(valueText).join(", ")})` : ""}`,
    field,
    ...(allowed !== undefined ? { allowed } : {}),
  });
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    const props = parent !== undefined && isJsonObject(parent.properties) ? parent.properties : {};
    return say(
      fieldPath([...segments, params.missingProperty]),
      "is required",
      enumOf(props[params.missingProperty]),
    );
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    const props = parent !== undefined && isJsonObject(parent.properties) ? parent.properties : {};
    const known = Object.keys(props);
    return {
      message: `answer for ${label}: field "${fieldPath([...segments, params.additionalProperty])}" is not expected${
        known.length > 0 ? ` (expected: ${known.join(", ")})` : ""
      }`,
      field: fieldPath([...segments, params.additionalProperty]),
    };
  }
  if (segments.length === 0) {
    return error.keyword === "type"
      ? notAnObject(label, schema)
      : {
          message: `answer for ${label} ${error.message ?? `fails ${error.keyword}`}`,
          field: null,
        };
  }
  const field = fieldPath(segments);
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    const allowed = params.allowedValues as JsonValue[];
    return {
      message: `answer for ${label}: field "${field}" must be one of: ${allowed.map(valueText).join(", ")}`,
      field,
      allowed,
    };
  }
  if (error.keyword === "type" && typeof params.type === "string") {
    const types = params.type.split(",").map((t) => ARTICLE[t] ?? t);
    return say(field, `must be ${types.join(" or ")}`, enumOf(parent));
  }
  return say(field, error.message ?? `fails ${error.keyword}`);
}

/** A compiled check of answers against one contract. */
export type AnswerChecker = (answer: unknown) => AnswerProblem | null;

/** Compiles the check of a contract (a schema ajv cannot compile refuses every answer). */
export function compileAnswerChecker(contract: AnswerContract): AnswerChecker {
  const ajv = new Ajv({
    strict: false,
    allErrors: false,
    validateFormats: false,
    logger: false,
    verbose: true,
  });
  let validate: ValidateFunction;
  try {
    // A draft marker inside a declared schema cannot select a dialect for the contract.
    const { $schema: _dialect, ...schema } = contract.schema;
    validate = ajv.compile(schema);
  } catch {
    return () => ({
      message: `answer for ${contract.label}: the declared output contract is not valid JSON Schema, so no answer can be checked`,
      field: null,
    });
  }
  return (answer) => {
    if (!isJsonObject(answer)) return notAnObject(contract.label, contract.schema);
    // An agent's own closure is control metadata beside its outputs, never one of them.
    const problem = contract.kind === "agent" ? agentClosureProblem(answer) : null;
    if (problem !== null) {
      return {
        message: `answer for ${contract.label}: field "${problem.field}" ${problem.message}`,
        field: problem.field,
      };
    }
    if (validate(contract.kind === "agent" ? withoutClosure(answer) : answer)) return null;
    const first = validate.errors?.[0];
    return first === undefined
      ? { message: `answer for ${contract.label} is invalid`, field: null }
      : describe(first, contract.label, contract.schema);
  };
}

/** Checks one answer against its request's contract; the problem, or null when it holds. */
export function answerProblem(request: RunRequest, answer: unknown): AnswerProblem | null {
  const contract = answerContract(request);
  if (contract === null) return null;
  return compileAnswerChecker(contract)(answer);
}

/**
 * Refuses (ANSWERS_INVALID) the first answer of a resume document that breaks its pending
 * request's contract, naming the request and the field. Answers for ids that are not pending
 * are refused earlier (answers.ts checkAgainstRequests).
 */
export function checkAnswerContracts(doc: ResumeAnswers, pending: readonly RunRequest[]): void {
  for (const request of pending) {
    const answer = doc.answers[request.id];
    if (answer === undefined) continue;
    // An adapter's questions keep their own check: it also builds the next packet's answers.
    if (isAdapterQuestions(request)) {
      packetAnswers(request, answer);
      continue;
    }
    const problem = answerProblem(request, answer);
    if (problem === null) continue;
    throw new RuntimeError("ANSWERS_INVALID", problem.message, {
      request_id: request.id,
      field: problem.field,
      ...(problem.allowed !== undefined ? { allowed: problem.allowed } : {}),
    });
  }
}
