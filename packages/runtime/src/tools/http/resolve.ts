/**
 * Value filling for HTTP batch requests: a request may take values from the responses of
 * earlier requests in the same batch. In `path`, `query` and `body`, an object that is exactly
 * `{"$response": "<id>.<field>[.<key>...]"}` becomes that value; in the URL template,
 * `{$response:<id>.<field>...}` becomes the (scalar, percent-encoded) value. Then `{name}`
 * placeholders are filled from `path`, and every `path` entry must be used. Pure.
 */
import { RuntimeError } from "../../errors.js";
import type { Json, JsonRecord } from "../types.js";

/** Response records of earlier requests, by request id. */
export type PriorResponses = ReadonlyMap<string, JsonRecord>;

export const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function invalid(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", message, { path });
}

/** RFC 3986 unreserved characters stay; every other byte is percent-encoded (upper hex). */
export function percentEncode(value: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte);
    out += /[A-Za-z0-9\-._~]/.test(char)
      ? char
      : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The value a `<id>.<field>.<key>...` reference names, or undefined when it is unavailable. */
export function responseReference(prior: PriorResponses, reference: string): Json | undefined {
  const [id, ...path] = reference.split(".");
  if (id === undefined || path.length === 0) return undefined;
  let current: Json | undefined = prior.get(id);
  for (const segment of path) {
    if (!isRecord(current) || !Object.prototype.hasOwnProperty.call(current, segment))
      return undefined;
    current = current[segment];
  }
  return current;
}

/** A scalar's text for a URL, or undefined for null, arrays and objects. */
export function scalarText(value: Json | undefined): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** Replaces every `{"$response": ref}` object inside `value` with the value it names. */
export function resolveValue(value: Json, prior: PriorResponses, at: string): Json {
  if (Array.isArray(value)) return value.map((item, i) => resolveValue(item, prior, `${at}.${i}`));
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "$response") {
    const reference = value.$response;
    if (typeof reference !== "string") throw invalid("$response must be a string", at);
    const found = responseReference(prior, reference);
    if (found === undefined)
      throw invalid(`references unavailable response ${JSON.stringify(reference)}`, at);
    return found;
  }
  const out: JsonRecord = {};
  for (const key of keys) out[key] = resolveValue(value[key] as Json, prior, `${at}.${key}`);
  return out;
}

/** Fills `{$response:...}` and then `{name}` placeholders of a URL template. */
export function resolveUrlTemplate(
  template: string,
  prior: PriorResponses,
  path: JsonRecord,
  at: string,
): string {
  const prefix = "{$response:";
  let filled = "";
  let rest = template;
  for (let start = rest.indexOf(prefix); start >= 0; start = rest.indexOf(prefix)) {
    const end = rest.indexOf("}", start);
    if (end < 0) throw invalid("URL response reference is missing a closing brace", `${at}.url`);
    const reference = rest.slice(start + prefix.length, end);
    const value = scalarText(responseReference(prior, reference));
    if (value === undefined)
      throw invalid(
        `URL references unavailable response ${JSON.stringify(reference)}`,
        `${at}.url`,
      );
    filled += rest.slice(0, start) + percentEncode(value);
    rest = rest.slice(end + 1);
  }
  filled += rest;
  const used = new Set<string>();
  let out = "";
  rest = filled;
  for (let start = rest.indexOf("{"); start >= 0; start = rest.indexOf("{")) {
    const end = rest.indexOf("}", start);
    if (end < 0) throw invalid("URL path parameter is missing a closing brace", `${at}.url`);
    const name = rest.slice(start + 1, end);
    if (!/^[A-Za-z0-9_-]+$/.test(name))
      throw invalid(`invalid URL path parameter ${JSON.stringify(name)}`, `${at}.url`);
    const value = scalarText(path[name]);
    if (value === undefined)
      throw invalid(`URL path parameter ${JSON.stringify(name)} is missing`, `${at}.path.${name}`);
    out += rest.slice(0, start) + percentEncode(value);
    used.add(name);
    rest = rest.slice(end + 1);
  }
  out += rest;
  const unused = Object.keys(path).find((name) => !used.has(name));
  if (unused !== undefined)
    throw invalid(
      `path parameter ${JSON.stringify(unused)} is not present in the request URL`,
      `${at}.path.${unused}`,
    );
  return out;
}

/** The value at a dot path inside a JSON value (objects only), or undefined. */
export function valueAtPath(value: Json | undefined, path: string): Json | undefined {
  let current = value;
  for (const segment of path.split(".")) {
    if (!isRecord(current)) return undefined;
    current = current[segment];
  }
  return current;
}
