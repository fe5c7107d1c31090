/**
 * The declared output contract of an agent act as JSON Schema, and
 * the validation of answers against it. Pure.
 *
 * Contract decisions:
 * - An answer is always a JSON object; each declared output is a property of it.
 * - A declared output is required unless it says `required: false`.
 * - Extra top-level keys are allowed and kept: the runtime reads only declared names
 *   (`named_emits`, `wrap_as`, graph context paths), and resume answers written by people
 *   often carry notes. A declaration that wants a closed shape says so in its own `schema`
 *   (`additionalProperties: false`), which is enforced as written.
 * - A bare type outside the JSON types (`json`, `any`, ...) or a declaration without a type
 *   constrains nothing but presence.
 */
import { Ajv } from "ajv";
import type { ErrorObject, ValidateFunction } from "ajv";
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { agentClosureProblem, withoutClosure } from "../contracts/agent-closure.js";
import type { OutputDeclaration } from "../parser/runner-types.js";

/** Declared outputs of a runner or graph step, by output name. */
export type OutputDeclarations = Readonly<Record<string, OutputDeclaration>>;

/** The result of checking an answer: the answer, or the first bad path and why. */
export type AnswerCheck =
  { ok: true; value: JsonObject } | { ok: false; path: string; message: string };

/** A compiled answer check for one output contract. */
export type AnswerValidator = (answer: unknown) => AnswerCheck;

const JSON_TYPES: ReadonlySet<string> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "array",
  "object",
  "null",
]);

function outputSchema(decl: OutputDeclaration): JsonObject {
  const schema: JsonObject = {};
  if (decl.schema !== undefined) {
    for (const [key, value] of Object.entries(decl.schema)) {
      // A draft marker inside one property cannot select a dialect for the whole contract.
      if (key !== "$schema") schema[key] = value;
    }
  }
  if (decl.type !== undefined && JSON_TYPES.has(decl.type) && schema.type === undefined) {
    schema.type = decl.type;
  }
  if (decl.enum !== undefined && schema.enum === undefined) schema.enum = decl.enum;
  if (decl.description !== undefined && schema.description === undefined) {
    schema.description = decl.description;
  }
  return schema;
}

/** The JSON Schema of an answer to an agent act with these declared outputs. */
export function outputContractSchema(outputs: OutputDeclarations | undefined): JsonObject {
  if (outputs === undefined) return { type: "object" };
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [name, decl] of Object.entries(outputs)) {
    properties[name] = outputSchema(decl);
    if (decl.required !== false) required.push(name);
  }
  return { type: "object", properties, required, additionalProperties: true };
}

function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => raw.replace(/~1/g, "/").replace(/~0/g, "~"));
}

/** Formats key path segments as `a.b[0].c`; the empty path is the answer itself. */
function formatPath(segments: readonly string[]): string {
  let out = "";
  for (const segment of segments) {
    if (/^(0|[1-9][0-9]*)$/.test(segment)) out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

function describe(error: ErrorObject): { path: string; message: string } {
  const segments = pointerSegments(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    return { path: formatPath([...segments, params.missingProperty]), message: "is required" };
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return {
      path: formatPath([...segments, params.additionalProperty]),
      message: "is not allowed here",
    };
  }
  if (error.keyword === "enum") {
    return { path: formatPath(segments), message: "must be one of the allowed values" };
  }
  return { path: formatPath(segments), message: error.message ?? `fails ${error.keyword}` };
}

/** Compiles the answer check for a contract once (refuses an output schema ajv cannot compile). */
export function compileAnswerValidator(outputs: OutputDeclarations | undefined): AnswerValidator {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false, logger: false });
  let validate: ValidateFunction;
  try {
    validate = ajv.compile(outputContractSchema(outputs));
  } catch (error) {
    throw new RuntimeError("PROFILE_INVALID", "a declared output schema is not valid JSON Schema", {
      path: "outputs",
      cause: error instanceof Error ? error.message : String(error),
    });
  }
  return (answer) => {
    if (!isJsonObject(answer)) {
      return { ok: false, path: "", message: "the answer must be a JSON object" };
    }
    // An agent's own closure (how it ended the act) is control metadata beside the declared
    // outputs: checked on its own, never against the output contract.
    const closure = agentClosureProblem(answer);
    if (closure !== null) return { ok: false, path: closure.field, message: closure.message };
    if (validate(withoutClosure(answer))) return { ok: true, value: answer };
    const first = validate.errors?.[0];
    if (first === undefined) return { ok: false, path: "", message: "the answer is invalid" };
    return { ok: false, ...describe(first) };
  };
}

/** Checks one answer against the declared outputs; names the first bad path when it fails. */
export function validateAgentAnswer(
  outputs: OutputDeclarations | undefined,
  answer: unknown,
): AnswerCheck {
  return compileAnswerValidator(outputs)(answer);
}

/** One line for a failed check: `<path>: <message>` (or the message alone at the root). */
export function formatAnswerProblem(check: { path: string; message: string }): string {
  return check.path === "" ? check.message : `${check.path}: ${check.message}`;
}
