/**
 * The strict readers upstream's harness contracts are deserialised with, mirroring serde:
 * structs that refuse unknown fields, required and optional fields, sequences, maps, string
 * variants and counts, each failure worded as serde words it (`missing field`, `unknown
 * field`, `invalid type: …, expected …`), plus upstream's own `invalid harness fixture`
 * sentence. Used by parser-eval/harness.ts and parser-eval/harness-lanes.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { serdeKind } from "./fields.js";

/** A value read as a string field (already checked as one). */
export const text = (value: JsonValue | undefined): string =>
  typeof value === "string" ? value : "";

/** A deserializer failure in upstream's words (`missing field`, `unknown field`, …). */
export class SerdeError extends Error {}

/** Throws a SerdeError with `message`. */
export const fail = (message: string): never => {
  throw new SerdeError(message);
};

/** Field or variant names as serde lists them in an error (`a`, `a or b`, `one of a, b, c`). */
export const ticks = (names: readonly string[]): string => {
  const quoted = names.map((name) => `\`${name}\``);
  if (quoted.length === 1) return quoted[0] ?? "";
  if (quoted.length === 2) return `${quoted[0]} or ${quoted[1]}`;
  return `one of ${quoted.join(", ")}`;
};

/** How one field is read: its reader gets the value (undefined when absent). */
export type Reader = (value: JsonValue | undefined) => JsonValue | undefined;

/** A struct with these fields, unknown ones refused (`deny_unknown_fields`) unless `open`. */
export function struct(
  name: string,
  fields: Record<string, Reader>,
  value: JsonValue | undefined,
  open = false,
): JsonObject {
  if (!isJsonObject(value))
    return fail(`invalid type: ${serdeKind(value ?? null)}, expected struct ${name}`);
  const names = Object.keys(fields);
  const out: JsonObject = {};
  // Keys are read in the mapping's (sorted) order; absent fields take their defaults after.
  for (const key of Object.keys(value).sort()) {
    const reader = fields[key];
    if (reader === undefined) {
      if (open) continue;
      fail(`unknown field \`${key}\`, expected ${ticks(names)}`);
    } else {
      const read = reader(value[key]);
      if (read !== undefined) out[key] = read;
    }
  }
  for (const key of names) {
    const reader = fields[key];
    if (reader === undefined || key in value) continue;
    const read = reader(undefined);
    if (read !== undefined) out[key] = read;
  }
  return out;
}

/** A field that must be present (`missing field` otherwise). */
export const required =
  (name: string, reader: Reader): Reader =>
  (value) =>
    value === undefined ? fail(`missing field \`${name}\``) : reader(value);

/** A string. */
export const string: Reader = (value) =>
  typeof value === "string"
    ? value
    : fail(`invalid type: ${serdeKind(value ?? null)}, expected a string`);

/** An `Option`: absent or null reads as null. */
export const option =
  (reader: Reader): Reader =>
  (value) =>
    value === undefined || value === null ? null : reader(value);

/** An `Option` skipped when none: absent or null leaves the field out. */
export const skipNone =
  (reader: Reader): Reader =>
  (value) =>
    value === undefined || value === null ? undefined : reader(value);

/** A sequence (absent reads as empty; left out when empty with `skipEmpty`). */
export const list =
  (reader: Reader, skipEmpty = false): Reader =>
  (value) => {
    if (value === undefined) return skipEmpty ? undefined : [];
    if (!Array.isArray(value))
      return fail(`invalid type: ${serdeKind(value)}, expected a sequence`);
    const items = value.map((item) => reader(item) ?? null);
    return skipEmpty && items.length === 0 ? undefined : items;
  };

/** One of the `allowed` unit variants. */
export const variant =
  (allowed: readonly string[]): Reader =>
  (value) => {
    if (typeof value !== "string")
      return fail(
        `invalid type: ${serdeKind(value ?? null)}, expected ${allowed.length === 1 ? `\`${allowed[0]}\`` : "a string"}`,
      );
    return allowed.includes(value)
      ? value
      : fail(`unknown variant \`${value}\`, expected ${ticks(allowed)}`);
  };

/** Any JSON value, as given. */
export const anyValue: Reader = (value) => (value === undefined ? undefined : value);
/** A map of any values (absent reads as empty). */
export const map: Reader = (value) =>
  value === undefined
    ? {}
    : isJsonObject(value)
      ? value
      : fail(`invalid type: ${serdeKind(value)}, expected a map`);

/** A `usize`: a non-negative integer. */
export const count: Reader = (value) =>
  typeof value === "number" && Number.isInteger(value) && value >= 0
    ? value
    : fail(`invalid type: ${serdeKind(value ?? null)}, expected usize`);

/** A map of strings (absent reads as empty). */
export const stringMap: Reader = (value) => {
  if (value === undefined) return {};
  if (!isJsonObject(value)) return fail(`invalid type: ${serdeKind(value)}, expected a map`);
  for (const key of Object.keys(value).sort()) string(value[key]);
  return value;
};

/** A harness failure as upstream words it (`invalid harness fixture <field>: …`). */
export const harnessInvalid = (field: string, message: string): never =>
  fail(`invalid harness fixture ${field}: ${message}`);
