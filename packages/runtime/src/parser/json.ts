/** A JSON-compatible value, as produced by the strict YAML parser and the JSON readers. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object (string keys, JSON values). */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** True for plain JSON objects (not arrays, not null). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The JSON type name of a value: null, boolean, number, string, array or object. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}
