/**
 * Field readers that fail with upstream's parser sentences (`<field> is required.`,
 * `<field> must be a string.`, …). The parser-eval surface mirrors upstream's validation
 * messages verbatim, so every check here names the dotted field the way upstream does. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";

/** `target` with each defined entry of `fields` set (undefined leaves the key out). */
export function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

/** A validation failure carrying upstream's exact sentence. */
export class UpstreamValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UpstreamValidationError";
  }
}

export function invalid(message: string): never {
  throw new UpstreamValidationError(message);
}

const absent = (value: JsonValue | undefined): value is undefined | null =>
  value === undefined || value === null;

/** A string that must be present and non-empty. */
export function requiredString(value: JsonValue | undefined, field: string): string {
  const text = optionalString(value, field);
  if (text === undefined || text === "") return invalid(`${field} is required.`);
  return text;
}

export function optionalString(value: JsonValue | undefined, field: string): string | undefined {
  if (absent(value)) return undefined;
  if (typeof value !== "string") return invalid(`${field} must be a string.`);
  return value;
}

export function optionalNonEmptyString(
  value: JsonValue | undefined,
  field: string,
): string | undefined {
  const text = optionalString(value, field);
  if (text !== undefined && text.trim() === "") return invalid(`${field} must not be empty.`);
  return text;
}

export function requiredObject(value: JsonValue | undefined, field: string): JsonObject {
  if (absent(value)) return invalid(`${field} is required.`);
  if (!isJsonObject(value)) return invalid(`${field} must be an object.`);
  return value;
}

export function optionalObject(
  value: JsonValue | undefined,
  field: string,
): JsonObject | undefined {
  if (absent(value)) return undefined;
  if (!isJsonObject(value)) return invalid(`${field} must be an object.`);
  return value;
}

export function optionalStringArray(
  value: JsonValue | undefined,
  field: string,
): string[] | undefined {
  if (absent(value)) return undefined;
  if (!Array.isArray(value)) return invalid(`${field} must be an array of strings.`);
  const strings: string[] = [];
  for (const entry of value) {
    if (typeof entry !== "string") invalid(`${field} must be an array of strings.`);
    strings.push(entry);
  }
  return strings;
}

export function optionalBool(value: JsonValue | undefined, field: string): boolean | undefined {
  if (absent(value)) return undefined;
  if (typeof value !== "boolean") return invalid(`${field} must be a boolean.`);
  return value;
}

/** A non-negative integer (upstream's `u64` reader). */
export function optionalCount(value: JsonValue | undefined, field: string): number | undefined {
  if (absent(value)) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value))
    return invalid(`${field} must be a finite number.`);
  if (!Number.isInteger(value) || value < 0) return invalid(`${field} must be a positive integer.`);
  return value;
}

/** Rejects keys outside `allowed`, listing them in upstream's order. */
export function rejectUnknownFields(
  object: JsonObject,
  field: string,
  allowed: readonly string[],
): void {
  for (const key of Object.keys(object).sort())
    if (!allowed.includes(key))
      invalid(`${field}.${key} is not supported; allowed fields: ${allowed.join(", ")}.`);
}

/** The post-run reflect policy of a runner's `runx` block: auto, always or never (default). */
export function postRunReflectPolicy(runx: JsonObject | undefined, field: string): string {
  const postRun = optionalObject(runx?.post_run, `${field}.post_run`);
  const reflect = optionalString(postRun?.reflect, `${field}.post_run.reflect`) ?? "never";
  if (reflect !== "auto" && reflect !== "always" && reflect !== "never")
    invalid(`${field}.post_run.reflect must be auto, always, or never.`);
  return reflect;
}

/** How upstream's JSON deserializer names a value it did not expect (`invalid type: …`). */
export function serdeKind(value: JsonValue): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "number")
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  return Array.isArray(value) ? "sequence" : "map";
}
