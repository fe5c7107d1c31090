/**
 * Packet helpers shared by the native planning tools: the artifact envelope a named tool
 * output is returned in (`<step>.<name>.data.<field>` in graph context), and small readers
 * over schema-validated JSON.
 */
import type { Json, JsonRecord } from "./types.js";

/** An artifact envelope `{type, version: "1", data}` for one packet. */
export function packetEnvelope(type: string, data: JsonRecord): JsonRecord {
  return { type, version: "1", data };
}

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Calls `visit` on every string (object keys included) in a JSON value, with its path. */
export function eachString(
  value: Json,
  path: string,
  visit: (text: string, at: string) => void,
): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value))
    value.forEach((item, i) => eachString(item, `${path}[${i}]`, visit));
  else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      const at = path === "" ? key : `${path}.${key}`;
      visit(key, at);
      eachString(item, at, visit);
    }
  }
}
