/**
 * Input handling for a run: CLI flag parsing (re-exported), resolution of supplied values
 * against declarations (defaults, type checks, missing-input questions) and the JSON Schema
 * projection. Pure. Error messages and details never contain supplied values.
 *
 * Undeclared inputs: a runner that declares inputs rejects names it does not declare
 * (INPUT_INVALID) — upstream's input schema projection is closed (`additionalProperties:
 * false`) and no package in the conformance corpus supplies undeclared inputs. A runner that
 * declares no inputs (portable agent skills, legacy packages) receives everything unchanged.
 * Supplied values nest at most MAX_NESTING_DEPTH levels, the inputs object included (nesting.ts).
 */
import { RuntimeError } from "../errors.js";
import { valueMatchesType } from "./input-declarations.js";
import type { InputDeclaration, InputType } from "./input-declarations.js";
import { jsonTypeOf } from "./json.js";
import { findDeepNesting, MAX_NESTING_DEPTH, nestingTooDeep } from "./nesting.js";
import type { JsonObject, JsonValue } from "./json.js";
import type { SuppliedInput } from "./input-flags.js";

export { normalizeInputKey, parseInputFlags } from "./input-flags.js";
export type { ParsedInputFlags, SuppliedInput } from "./input-flags.js";
export { inputsJsonSchema, valueMatchesType } from "./input-declarations.js";
export type { InputDeclaration, InputType } from "./input-declarations.js";

/** A required input that was not supplied and has no default: a question for the caller. */
export interface MissingInput {
  id: string;
  prompt: string;
  required: boolean;
  type: InputType;
  description?: string;
}

/** The outcome of {@link resolveInputs}. */
export interface ResolvedInputs {
  values: Record<string, JsonValue>;
  missing: MissingInput[];
}

/** Wraps a parsed inputs document (`--inputs`) as supplied inputs (no CLI text to fall back to). */
export function suppliedFromDocument(document: JsonObject): Record<string, SuppliedInput> {
  return Object.fromEntries(Object.entries(document).map(([key, value]) => [key, { value }]));
}

const ARTICLE: Readonly<Record<InputType, string>> = {
  string: "a string",
  number: "a number",
  integer: "an integer",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  json: "JSON",
};

/**
 * Applies declarations to supplied inputs: defaults for absent inputs, type checks
 * (INPUT_INVALID naming `inputs.<name>` and the expected type), and a question for every
 * required input still missing. A declared string that received JSON-looking CLI text
 * (`--message 5`) gets the original text back.
 */
export function resolveInputs(
  declarations: Readonly<Record<string, InputDeclaration>>,
  supplied: Readonly<Record<string, SuppliedInput>>,
): ResolvedInputs {
  const values: Record<string, JsonValue> = {};
  const missing: MissingInput[] = [];
  const declaredNames = Object.keys(declarations);
  for (const [name, given] of Object.entries(supplied)) {
    // The inputs object is the first level; a value nests at most one level less. Checked
    // before anything hashes, clones or serialises the value (all recursive).
    const deep = findDeepNesting(given.value, MAX_NESTING_DEPTH - 1);
    if (deep !== undefined) {
      const path = `inputs.${name}${deep === "" || deep.startsWith("[") ? deep : `.${deep}`}`;
      throw nestingTooDeep({ path, input: name });
    }
    if (declaredNames.length > 0 && declarations[name] === undefined) {
      throw new RuntimeError("INPUT_INVALID", `inputs.${name} is not declared by this runner`, {
        path: `inputs.${name}`,
        input: name,
        declared: declaredNames,
      });
    }
  }
  for (const [name, declaration] of Object.entries(declarations)) {
    const given = supplied[name];
    if (given === undefined) {
      if (declaration.default !== undefined) values[name] = structuredClone(declaration.default);
      else if (declaration.required) {
        const question: MissingInput = {
          id: name,
          prompt: declaration.description ?? `Provide ${name}`,
          required: true,
          type: declaration.type,
        };
        if (declaration.description !== undefined) question.description = declaration.description;
        missing.push(question);
      }
      continue;
    }
    let value = given.value;
    if (declaration.type === "string" && typeof value !== "string" && given.raw !== undefined)
      value = given.raw;
    if (!valueMatchesType(value, declaration.type)) {
      throw new RuntimeError(
        "INPUT_INVALID",
        `inputs.${name} must be ${ARTICLE[declaration.type]}`,
        {
          path: `inputs.${name}`,
          input: name,
          expected: declaration.type,
          received: jsonTypeOf(value),
        },
      );
    }
    values[name] = value;
  }
  if (declaredNames.length === 0) {
    for (const [name, given] of Object.entries(supplied)) values[name] = given.value;
  }
  return { values, missing };
}
