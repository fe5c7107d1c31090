/**
 * `parser.validateToolManifestYaml` / `parser.validateToolManifestJson`: a `runx.tool.manifest.v1`
 * document validated field by field in upstream's order and answered as upstream's
 * `ValidatedTool` (name, version?, description?, source, inputs, scopes, risk?, retry?,
 * idempotency?, mutating?, artifacts?). Failures carry upstream's sentences. Pure.
 */
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
import { artifactContract } from "./artifact-contract.js";
import { sourceFieldsIr } from "./ir.js";
import { checkSource } from "./source-check.js";

const MANIFEST_FIELDS = [
  "schema",
  "name",
  "version",
  "description",
  "source",
  "inputs",
  "scopes",
  "risk",
  "retry",
  "idempotency",
  "mutating",
  "artifacts",
] as const;

const TOOL_MANIFEST_SCHEMA = "runx.tool.manifest.v1";

const TOOL_SOURCE_KINDS = new Set(["cli-tool", "javascript", "mcp", "a2a"]);

/** How upstream's JSON deserializer names a value it did not expect. */
function unexpected(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "number")
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? "sequence" : "map";
}

function checkSchema(value: JsonValue | undefined): void {
  if (value === undefined) invalid("schema is required");
  if (value === TOOL_MANIFEST_SCHEMA) return;
  const reason =
    typeof value === "string"
      ? `unknown variant \`${value}\`, expected \`${TOOL_MANIFEST_SCHEMA}\``
      : `invalid type: ${unexpected(value)}, expected string or map`;
  invalid(`schema is invalid: ${reason}`);
}

/** A source as upstream validates any skill source, then narrowed to the tool kinds. */
function toolSource(source: JsonObject): JsonObject {
  const type = checkSource(source, "reject");
  if (!TOOL_SOURCE_KINDS.has(type))
    invalid("source.type must be one of cli-tool, javascript, mcp, or a2a for tool manifests.");
  return sourceFieldsIr(type, source, source);
}

function toolInputs(value: JsonValue | undefined): JsonObject {
  const inputs = optionalObject(value, "inputs") ?? {};
  const out: JsonObject = {};
  for (const name of Object.keys(inputs).sort()) {
    const field = `inputs.${name}`;
    const input = requiredObject(inputs[name], field);
    const declared: JsonObject = {
      type: optionalString(input.type, `${field}.type`) ?? "string",
      required: optionalBool(input.required, `${field}.required`) ?? false,
    };
    const description = optionalString(input.description, `${field}.description`);
    if (description !== undefined) declared.description = description;
    if (input.default !== undefined) declared.default = input.default;
    out[name] = declared;
  }
  return out;
}

function toolScopes(value: JsonValue | undefined): string[] {
  const scopes = optionalStringArray(value, "scopes") ?? [];
  if (scopes.some((scope) => scope.trim() === ""))
    invalid("scopes must contain only non-empty scope strings");
  return scopes;
}

function toolRetry(value: JsonValue | undefined): JsonObject | undefined {
  const retry = optionalObject(value, "retry");
  if (retry === undefined) return undefined;
  const maxAttempts = optionalCount(retry.max_attempts, "retry.max_attempts") ?? 1;
  if (maxAttempts === 0) invalid("retry.max_attempts must be a positive integer.");
  return { maxAttempts };
}

function toolIdempotency(value: JsonValue | undefined): JsonObject | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") {
    if (value.trim() === "") invalid("idempotency must not be empty.");
    return { key: value };
  }
  const record = requiredObject(value, "idempotency");
  const key = optionalNonEmptyString(record.key, "idempotency.key");
  return key === undefined ? {} : { key };
}

/** Validates a parsed tool manifest document; throws UpstreamValidationError. */
export function validateToolManifestDocument(document: JsonObject): JsonObject {
  rejectUnknownFields(document, "tool_manifest", MANIFEST_FIELDS);
  checkSchema(document.schema);
  const source = toolSource(requiredObject(document.source, "source"));
  const out: JsonObject = { name: requiredString(document.name, "name") };
  const version = optionalString(document.version, "version");
  if (version !== undefined) out.version = version;
  const description = optionalString(document.description, "description");
  if (description !== undefined) out.description = description;
  out.source = source;
  out.inputs = toolInputs(document.inputs);
  out.scopes = toolScopes(document.scopes);
  if (document.risk !== undefined) out.risk = document.risk;
  const retry = toolRetry(document.retry);
  if (retry !== undefined) out.retry = retry;
  const idempotency = toolIdempotency(document.idempotency);
  if (idempotency !== undefined) out.idempotency = idempotency;
  const mutating = optionalBool(document.mutating, "mutating");
  if (mutating !== undefined) out.mutating = mutating;
  const artifacts = artifactContract(document.artifacts, "artifacts");
  if (artifacts !== undefined) out.artifacts = artifacts;
  return out;
}
