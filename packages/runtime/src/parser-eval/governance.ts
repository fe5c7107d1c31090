/**
 * Upstream's governance and input checks shared by skills, runners and tool manifests: input
 * declarations (`InputDefinition`, with their JSON Schema fragments), retry, idempotency,
 * mutating, agent tool refs and execution semantics. Each answers upstream's normal form
 * (these contracts keep their snake_case keys) or fails with upstream's sentence. Pure, apart
 * from compiling input schemas with ajv.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalBool,
  optionalCount,
  optionalNonEmptyString,
  optionalObject,
  optionalString,
  optionalStringArray,
  rejectUnknownFields,
  requiredObject,
  requiredString,
} from "./fields.js";

const INPUT_FIELDS = ["type", "required", "description", "default", "artifact", "packet", "schema"];
const INPUT_TYPES = ["array", "boolean", "integer", "json", "number", "object", "string"];

function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

/** Whether `value` has the declared input type (upstream's `accepts_value`). */
function acceptsValue(type: string, value: JsonValue): boolean {
  switch (type) {
    case "json":
      return true;
    case "string":
      return typeof value === "string";
    case "number":
      return typeof value === "number";
    case "integer":
      return typeof value === "number" && Number.isInteger(value);
    case "boolean":
      return typeof value === "boolean";
    case "object":
      return isJsonObject(value);
    case "array":
      return Array.isArray(value);
    default:
      return false;
  }
}

/** The complete schema of one input: its fragment plus the declared type, description, default. */
function effectiveSchema(input: JsonObject): JsonObject {
  const schema: JsonObject = { ...(isJsonObject(input.schema) ? input.schema : {}) };
  if (typeof input.packet === "string") schema["x-runx-packet-id"] = input.packet;
  if (input.type !== "json") schema.type = input.type ?? "string";
  if (typeof input.description === "string") schema.description = input.description;
  if ("default" in input) schema.default = input.default ?? null;
  return schema;
}

const OBJECT_SHAPE_KEYWORDS = [
  "$ref",
  "additionalProperties",
  "allOf",
  "anyOf",
  "const",
  "enum",
  "if",
  "maxProperties",
  "minProperties",
  "not",
  "oneOf",
  "patternProperties",
  "properties",
  "propertyNames",
  "unevaluatedProperties",
];

/** Every object schema in the tree states its shape, or opts into openness explicitly. */
function explicitObjectContracts(schema: JsonValue | undefined, field: string): void {
  if (!isJsonObject(schema)) return;
  const type = schema.type;
  const declaresObject =
    type === "object" || (Array.isArray(type) && type.some((entry) => entry === "object"));
  if (declaresObject && !OBJECT_SHAPE_KEYWORDS.some((keyword) => keyword in schema))
    invalid(
      `${field} declares an object without a shape; define its properties or set additionalProperties explicitly for an intentional open object`,
    );
  for (const keyword of [
    "additionalProperties",
    "contains",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedProperties",
  ])
    if (isJsonObject(schema[keyword]))
      explicitObjectContracts(schema[keyword], `${field}.${keyword}`);
  for (const keyword of ["allOf", "anyOf", "oneOf", "prefixItems"]) {
    const children = schema[keyword];
    if (Array.isArray(children))
      children.forEach((child, index) =>
        explicitObjectContracts(child, `${field}.${keyword}[${index}]`),
      );
  }
  for (const keyword of [
    "$defs",
    "definitions",
    "dependentSchemas",
    "patternProperties",
    "properties",
  ]) {
    const children = schema[keyword];
    if (isJsonObject(children))
      for (const name of Object.keys(children).sort())
        explicitObjectContracts(children[name], `${field}.${keyword}.${name}`);
  }
}

let ajv: Ajv2020 | undefined;
function schemaCompiler(): Ajv2020 {
  ajv ??= new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  return ajv;
}

function checkInputSchema(input: JsonObject, field: string): void {
  if (input.packet !== undefined) {
    if (input.type !== "json") invalid(`${field}.packet requires ${field}.type to be json`);
    if (input.schema !== undefined)
      invalid(
        `${field}.packet and ${field}.schema are mutually exclusive; the packet catalog owns the schema`,
      );
    if ("default" in input) invalid(`${field}.packet cannot declare a default packet value`);
    return;
  }
  const fragment = input.schema;
  if (!isJsonObject(fragment)) {
    const type = typeof input.type === "string" ? input.type : "string";
    if ("default" in input && !acceptsValue(type, input.default ?? null))
      invalid(`${field}.default must match declared type ${type}`);
    return;
  }
  const duplicate = ["type", "description", "default"].find((name) => name in fragment);
  if (duplicate !== undefined)
    invalid(`${field}.schema.${duplicate} duplicates ${field}.${duplicate}`);
  if (fragment.examples !== undefined && !Array.isArray(fragment.examples))
    invalid(`${field}.schema.examples must be an array`);
  const schema = effectiveSchema(input);
  const compiler = schemaCompiler();
  if (!compiler.validateSchema(schema))
    invalid(
      `${field}.schema is invalid: ${compiler.errorsText(compiler.errors, { dataVar: "schema" })}`,
    );
  explicitObjectContracts(schema, `${field}.schema`);
  const values: [string, JsonValue][] = [];
  if ("default" in input) values.push(["default", input.default ?? null]);
  if (Array.isArray(fragment.examples))
    fragment.examples.forEach((example, index) =>
      values.push([`schema.examples[${index}]`, example]),
    );
  if (values.length === 0) return;
  let validate;
  try {
    validate = compiler.compile(schema);
  } catch (error) {
    return invalid(
      `${field}.schema is invalid: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  for (const [label, value] of values)
    if (!validate(value)) invalid(`${field}.${label} must match the declared input schema`);
}

/** Input declarations under `prefix` (`inputs`, `runners.x.inputs`), by sorted name. */
export function validateInputs(inputs: JsonObject, prefix: string): JsonObject {
  const out: JsonObject = {};
  for (const name of Object.keys(inputs).sort()) {
    const field = `${prefix}.${name}`;
    const input = requiredObject(inputs[name], field);
    rejectUnknownFields(input, field, INPUT_FIELDS);
    const type = optionalString(input.type, `${field}.type`) ?? "string";
    if (!INPUT_TYPES.includes(type))
      invalid(
        `${field}.type must be one of array, boolean, integer, json, number, object, or string`,
      );
    const validated = put(
      { type, required: optionalBool(input.required, `${field}.required`) ?? false },
      {
        description: optionalString(input.description, `${field}.description`),
        default: "default" in input ? (input.default ?? null) : undefined,
        artifact: optionalBool(input.artifact, `${field}.artifact`),
        packet: optionalNonEmptyString(input.packet, `${field}.packet`),
        schema: optionalObject(input.schema, `${field}.schema`),
      },
    );
    checkInputSchema(validated, field);
    out[name] = validated;
  }
  return out;
}

/** `retry`: `{max_attempts}` with upstream's default of one attempt. */
export function validateRetry(value: JsonValue | undefined, field: string): JsonObject | undefined {
  const retry = optionalObject(value, field);
  if (retry === undefined) return undefined;
  const maxAttempts = optionalCount(retry.max_attempts, `${field}.max_attempts`) ?? 1;
  if (maxAttempts === 0) invalid(`${field}.max_attempts must be a positive integer.`);
  return { max_attempts: maxAttempts };
}

/** `idempotency`: a key string or `{key}`. */
export function validateIdempotency(
  value: JsonValue | undefined,
  field: string,
): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") {
    if (value.trim() === "") invalid(`${field} must not be empty.`);
    return { key: value };
  }
  const record = requiredObject(value, field);
  return put({}, { key: optionalNonEmptyString(record.key, `${field}.key`) });
}

/** Why an agent tool ref is not admissible, or undefined when it is. */
export function toolRefProblem(raw: string): string | undefined {
  const value = raw.trim();
  if (value === "") return "tool ref must not be empty";
  if (value.startsWith("/") || value.startsWith("\\"))
    return "tool ref must not be an absolute path";
  if (value.includes("/") || value.includes("\\") || value.includes(".."))
    return "tool ref must not contain path traversal or separators";
  const lower = value.toLowerCase();
  if ([".json", ".yaml", ".yml", ".toml"].some((suffix) => lower.endsWith(suffix)))
    return "tool ref must not look like a manifest or data file path";
  const segments = value.split(".");
  if (segments.length < 2) return "tool ref must include a namespace, for example fs.read";
  if (segments.some((segment) => !/^[A-Za-z0-9_-]+$/.test(segment)))
    return "tool ref segments must contain only letters, numbers, hyphens, or underscores";
  return undefined;
}

/** `runx.allowed_tools`: catalog-style tool refs an agent may call. */
export function validateAllowedTools(
  value: JsonValue | undefined,
  field: string,
): string[] | undefined {
  const tools = optionalStringArray(value, field);
  for (const tool of tools ?? []) {
    const problem = toolRefProblem(tool);
    if (problem !== undefined)
      invalid(
        `${field} entry ${JSON.stringify(tool)} is not an admissible agent tool ref: ${problem}.`,
      );
  }
  return tools;
}

function oneOfWords(
  value: JsonValue | undefined,
  field: string,
  allowed: readonly string[],
  sentence: string,
): string | undefined {
  const text = optionalString(value, field);
  if (text !== undefined && !allowed.includes(text))
    invalid(`${field} must be one of ${sentence}.`);
  return text;
}

function surfaceRefs(value: JsonValue | undefined, field: string): JsonValue[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return invalid(`${field} must be an array when present.`);
  return value.map((entry, index) => {
    const at = `${field}[${index}]`;
    const record = requiredObject(entry, at);
    return put(
      {
        type: requiredString(record.type, `${at}.type`),
        uri: requiredString(record.uri, `${at}.uri`),
      },
      { label: optionalString(record.label, `${at}.label`) },
    );
  });
}

/** `execution`: the governed disposition, outcome and evidence a runner declares. */
export function validateExecution(
  value: JsonValue | undefined,
  field: string,
): JsonObject | undefined {
  const record = optionalObject(value, field);
  if (record === undefined) return undefined;
  const disposition = oneOfWords(
    record.disposition,
    `${field}.disposition`,
    ["completed", "needs_agent", "policy_denied", "approval_required", "observing", "escalated"],
    "completed, needs_agent, policy_denied, approval_required, observing, escalated",
  );
  const outcomeState = oneOfWords(
    record.outcome_state,
    `${field}.outcome_state`,
    ["pending", "complete", "expired"],
    "pending, complete, or expired",
  );
  const outcomeRecord = optionalObject(record.outcome, `${field}.outcome`);
  const at = `${field}.outcome`;
  const outcome =
    outcomeRecord === undefined
      ? undefined
      : put(
          {},
          {
            code: optionalString(outcomeRecord.code, `${at}.code`),
            summary: optionalString(outcomeRecord.summary, `${at}.summary`),
            observed_at: optionalString(outcomeRecord.observed_at, `${at}.observed_at`),
            data: optionalObject(outcomeRecord.data, `${at}.data`),
          },
        );
  const contextRecord = optionalObject(record.input_context, `${field}.input_context`);
  let inputContext: JsonObject | undefined;
  if (contextRecord !== undefined) {
    const ctx = `${field}.input_context`;
    const maxBytes = optionalCount(contextRecord.max_bytes, `${ctx}.max_bytes`);
    if (maxBytes === 0) invalid(`${ctx}.max_bytes must be a positive integer.`);
    inputContext = put(
      {},
      {
        capture: optionalBool(contextRecord.capture, `${ctx}.capture`),
        source: optionalString(contextRecord.source, `${ctx}.source`),
        max_bytes: maxBytes,
        snapshot: "snapshot" in contextRecord ? (contextRecord.snapshot ?? null) : undefined,
      },
    );
  }
  return put(
    {},
    {
      disposition,
      outcome_state: outcomeState,
      outcome,
      input_context: inputContext,
      surface_refs: surfaceRefs(record.surface_refs, `${field}.surface_refs`),
      evidence_refs: surfaceRefs(record.evidence_refs, `${field}.evidence_refs`),
    },
  );
}

/** The first of two alternatives that is present (upstream's `first_value`). */
export const first = (a: JsonValue | undefined, b: JsonValue | undefined): JsonValue | undefined =>
  a === undefined || a === null ? b : a;
