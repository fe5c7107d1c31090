/**
 * Declared inputs: normalization with defaults, `{definition: <name>}` expansion,
 * value/type matching, and the JSON Schema projection used for examples and MCP tools.
 */
import { isJsonObject } from "./json.js";
import type { JsonObject, JsonValue } from "./json.js";
import type { PathSegment } from "./strict-yaml.js";

/** The declared type of an input; `json` accepts any JSON value. */
export type InputType = "string" | "number" | "integer" | "boolean" | "object" | "array" | "json";

/** One declared input after normalization (type defaults to string, required to false). */
export interface InputDeclaration {
  name: string;
  type: InputType;
  required: boolean;
  description?: string;
  default?: JsonValue;
  /** Extra JSON Schema constraints declared with the input (merged into the projection). */
  schema?: JsonObject;
  /** Packet id for packet-typed inputs. */
  packet?: string;
}

/** Reports a located problem and never returns (the caller decides the error code and file). */
export type FailAt = (path: readonly PathSegment[], message: string) => never;

const INPUT_TYPES: ReadonlySet<string> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
  "json",
]);

/** True when `value` is acceptable for an input of `type`. */
export function valueMatchesType(value: JsonValue, type: InputType): boolean {
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
      return isJsonObject(value);
    case "array":
      return Array.isArray(value);
    case "json":
      return true;
  }
}

function normalizeOne(
  name: string,
  raw: JsonObject,
  path: readonly PathSegment[],
  fail: FailAt,
): InputDeclaration {
  const type = raw.type ?? "string";
  if (typeof type !== "string" || !INPUT_TYPES.has(type))
    fail([...path, "type"], "unknown input type");
  const declaration: InputDeclaration = {
    name,
    type: type as InputType,
    required: raw.required === true,
  };
  if (typeof raw.description === "string") declaration.description = raw.description;
  if (isJsonObject(raw.schema)) declaration.schema = raw.schema;
  if (typeof raw.packet === "string") declaration.packet = raw.packet;
  if (raw.default !== undefined) {
    if (!valueMatchesType(raw.default, declaration.type))
      fail([...path, "default"], `default must be ${declaration.type}`);
    declaration.default = raw.default;
  }
  return declaration;
}

/**
 * Normalizes an `inputs` mapping found at `path`. Entries written as `{definition: <name>}`
 * are replaced by the named `input_definitions` entry; the reference must be the only key.
 */
export function normalizeInputDeclarations(
  raw: JsonValue | undefined,
  path: readonly PathSegment[],
  fail: FailAt,
  definitions: JsonObject = {},
): Record<string, InputDeclaration> {
  const out: Record<string, InputDeclaration> = {};
  if (raw === undefined || raw === null) return out;
  if (!isJsonObject(raw)) fail(path, "inputs must be a mapping");
  for (const [name, value] of Object.entries(raw)) {
    const entryPath = [...path, name];
    if (!isJsonObject(value)) fail(entryPath, `inputs.${name} must be an object`);
    if (value.definition !== undefined) {
      if (Object.keys(value).length !== 1)
        fail(entryPath, "a definition reference must be the only key of the input");
      const ref = typeof value.definition === "string" ? value.definition : "";
      const target = definitions[ref];
      if (!isJsonObject(target))
        fail([...entryPath, "definition"], `unknown input definition "${ref}"`);
      if (target.definition !== undefined)
        fail([...entryPath, "definition"], "input definitions cannot refer to other definitions");
      out[name] = normalizeOne(name, target, ["input_definitions", ref], fail);
    } else {
      out[name] = normalizeOne(name, value, entryPath, fail);
    }
  }
  return out;
}

const SCHEMA_TYPES: ReadonlySet<InputType> = new Set([
  "string",
  "number",
  "integer",
  "boolean",
  "object",
  "array",
]);

/**
 * JSON Schema projection of declared inputs: string/number/integer/boolean/object/
 * array map to the same JSON Schema type, `json` gets no type; per-input `schema` constraints
 * are merged in; `required` lists required inputs; no additional properties.
 */
export function inputsJsonSchema(
  declarations: Readonly<Record<string, InputDeclaration>>,
): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [name, input] of Object.entries(declarations)) {
    const property: JsonObject = {};
    if (SCHEMA_TYPES.has(input.type)) property.type = input.type;
    if (input.schema !== undefined) Object.assign(property, input.schema);
    if (input.description !== undefined) property.description = input.description;
    if (input.default !== undefined) property.default = input.default;
    properties[name] = property;
    if (input.required) required.push(name);
  }
  return { type: "object", properties, required, additionalProperties: false };
}
