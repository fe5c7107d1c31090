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
  optionalObject,
  optionalString,
  optionalStringArray,
  rejectUnknownFields,
  requiredObject,
  requiredString,
} from "./fields.js";
import { artifactContract } from "./artifact-contract.js";
import { validateIdempotency, validateInputs, validateRetry } from "./governance.js";
import { validateSource } from "./source.js";

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
  const validated = validateSource(source);
  if (!TOOL_SOURCE_KINDS.has(typeof validated.type === "string" ? validated.type : ""))
    invalid("source.type must be one of cli-tool, javascript, mcp, or a2a for tool manifests.");
  return validated;
}

function toolScopes(value: JsonValue | undefined): string[] {
  const scopes = optionalStringArray(value, "scopes") ?? [];
  if (scopes.some((scope) => scope.trim() === ""))
    invalid("scopes must contain only non-empty scope strings");
  return scopes;
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
  out.inputs = validateInputs(optionalObject(document.inputs, "inputs") ?? {}, "inputs");
  out.scopes = toolScopes(document.scopes);
  if ("risk" in document) out.risk = document.risk ?? null;
  const retry = validateRetry(document.retry, "retry");
  if (retry !== undefined) out.retry = retry;
  const idempotency = validateIdempotency(document.idempotency, "idempotency");
  if (idempotency !== undefined) out.idempotency = idempotency;
  const mutating = optionalBool(document.mutating, "mutating");
  if (mutating !== undefined) out.mutating = mutating;
  const artifacts = artifactContract(document.artifacts, "artifacts");
  if (artifacts !== undefined) out.artifacts = artifacts;
  return out;
}
