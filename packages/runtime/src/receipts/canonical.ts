/**
 * Canonical JSON: `runx.stable-json.v1` for data digests and `runx.receipt.c14n.v1` for
 * receipts. Both write the same bytes: object keys sorted by Unicode code point, no
 * whitespace, numbers as ECMAScript prints them, and only the escapes JSON requires.
 * Anything that has no single JSON reading (non-finite numbers, lone surrogates,
 * `undefined`, class instances, cycles, ...) is refused rather than guessed at.
 */
import { sha256Hex, sha256Prefixed } from "../crypto/sha256.js";
import { RuntimeError } from "../errors.js";

/** Name of the general-purpose canonical form. */
export const STABLE_JSON_CANONICALIZATION = "runx.stable-json.v1";
/** Name of the receipt canonical form (same bytes as stable-json). */
export const RECEIPT_CANONICALIZATION = "runx.receipt.c14n.v1";

/** Orders two strings by Unicode code point (equivalently, by their UTF-8 bytes). */
export function compareCodePoints(left: string, right: string): number {
  const length = Math.min(left.length, right.length);
  for (let index = 0; index < length; index++) {
    const a = left.charCodeAt(index);
    const b = right.charCodeAt(index);
    if (a === b) continue;
    // Below the surrogate block UTF-16 order equals code-point order. A surrogate
    // (an astral code point) sorts after every BMP unit above the block.
    const aSurrogate = a >= 0xd800 && a <= 0xdfff;
    const bSurrogate = b >= 0xd800 && b <= 0xdfff;
    if (aSurrogate !== bSurrogate) {
      const other = aSurrogate ? b : a;
      if (other >= 0xe000) return aSurrogate ? 1 : -1;
    }
    return a - b;
  }
  return left.length - right.length;
}

/** `String.prototype.isWellFormed` (Node 20+; TypeScript's lib here predates ES2024). */
const wellFormed = (value: string): boolean =>
  (value as unknown as { isWellFormed(): boolean }).isWellFormed();

/** True when the string holds an unpaired UTF-16 surrogate (not valid Unicode). */
export function hasLoneSurrogate(value: string): boolean {
  return !wellFormed(value);
}

function refuse(path: string, reason: string): never {
  throw new RuntimeError("CANONICAL_JSON_INVALID", `cannot canonicalize ${path}: ${reason}`, {
    path,
  });
}

function writeString(value: string, path: string): string {
  if (hasLoneSurrogate(value)) refuse(path, "string contains an unpaired surrogate");
  // For well-formed strings JSON.stringify escapes exactly `"`, `\` and C0 controls
  // (short forms where they exist, lowercase \u00xx otherwise) and nothing else.
  return JSON.stringify(value);
}

function writeNumber(value: number, path: string): string {
  if (!Number.isFinite(value)) refuse(path, "number is not finite");
  // JSON.stringify prints -0 as 0 and uses ECMAScript Number::toString otherwise.
  return JSON.stringify(value);
}

function isPlainObject(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function write(value: unknown, path: string, active: Set<object>): string {
  switch (typeof value) {
    case "string":
      return writeString(value, path);
    case "number":
      return writeNumber(value, path);
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return refuse(path, "value is undefined");
    case "bigint":
      return refuse(path, "bigint has no JSON form");
    case "function":
    case "symbol":
      return refuse(path, `${typeof value} has no JSON form`);
    default:
      break;
  }
  if (value === null) return "null";
  const object = value as object;
  if (active.has(object)) refuse(path, "value contains a cycle");
  active.add(object);
  try {
    if (Array.isArray(object)) return writeArray(object as unknown[], path, active);
    if (!isPlainObject(object)) refuse(path, "only plain objects and arrays are JSON");
    if (Object.getOwnPropertySymbols(object).length > 0) refuse(path, "object has symbol keys");
    return writeObject(object as Record<string, unknown>, path, active);
  } finally {
    active.delete(object);
  }
}

function writeArray(items: unknown[], path: string, active: Set<object>): string {
  const parts: string[] = [];
  for (let index = 0; index < items.length; index++) {
    const itemPath = `${path}[${index}]`;
    if (!(index in items)) refuse(itemPath, "array has a hole");
    parts.push(write(items[index], itemPath, active));
  }
  return `[${parts.join(",")}]`;
}

function writeObject(object: Record<string, unknown>, path: string, active: Set<object>): string {
  const keys = Object.keys(object).sort(compareCodePoints);
  const parts: string[] = [];
  for (const key of keys) {
    const keyPath = `${path}.${key}`;
    parts.push(`${writeString(key, keyPath)}:${write(object[key], keyPath, active)}`);
  }
  return `{${parts.join(",")}}`;
}

/** Thrown by the fast writer when it meets anything the careful writer must explain. */
const UNWRITABLE = new Error("canonical JSON fast path: unwritable value");

/**
 * A string that JSON writes as itself between quotes: no quote, backslash or C0 control (the
 * only characters JSON escapes) and no surrogate (so it is well formed, and as a key it sorts
 * the same by UTF-16 unit as by code point).
 */
// eslint-disable-next-line no-control-regex
const NEEDS_CARE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Sorts keys by UTF-16 unit (what `keys.sort()` does); objects of a few keys, the usual case,
 * by insertion, which costs less than the built-in sort's set-up.
 */
function sortPlainKeys(keys: string[]): void {
  if (keys.length > 8) {
    keys.sort();
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    while (at >= 0 && (keys[at] as string) > key) {
      keys[at + 1] = keys[at] as string;
      at--;
    }
    keys[at + 1] = key;
  }
}

/** The JSON string of `value`; throws UNWRITABLE for a lone surrogate. */
function quoteFast(value: string): string {
  if (!NEEDS_CARE.test(value)) return `"${value}"`;
  if (!wellFormed(value)) throw UNWRITABLE;
  return JSON.stringify(value);
}

/**
 * The writer every call runs first: the same bytes as `write`, without building a path string
 * per key or a Set per call. Whatever it would have to refuse, it hands to `write` (by
 * throwing UNWRITABLE), which refuses it with the path. `ancestors` holds the objects being
 * written (cycle check); with `safeIntegers`, an integer beyond 2^53 − 1 is unwritable too.
 */
function fastWrite(value: unknown, ancestors: object[], safeIntegers: boolean): string {
  switch (typeof value) {
    case "string":
      return quoteFast(value);
    case "number":
      // Number::toString, as JSON.stringify prints finite numbers (-0 as 0).
      if (!Number.isFinite(value)) throw UNWRITABLE;
      if (safeIntegers && Number.isInteger(value) && !Number.isSafeInteger(value)) {
        throw UNWRITABLE;
      }
      return String(value);
    case "boolean":
      return value ? "true" : "false";
    case "object":
      break;
    default:
      throw UNWRITABLE;
  }
  if (value === null) return "null";
  if (ancestors.includes(value)) throw UNWRITABLE;
  ancestors.push(value);
  let out: string;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    out = "[";
    for (let index = 0; index < items.length; index++) {
      if (!(index in items)) throw UNWRITABLE;
      if (index > 0) out += ",";
      out += fastWrite(items[index], ancestors, safeIntegers);
    }
    out += "]";
  } else {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) throw UNWRITABLE;
    if (Object.getOwnPropertySymbols(value).length > 0) throw UNWRITABLE;
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    // Keys without quotes, backslashes, controls or surrogates: UTF-16 order (the default
    // sort) is code-point order and each key is written as itself.
    let plain = true;
    for (let index = 0; index < keys.length; index++) {
      if (NEEDS_CARE.test(keys[index] as string)) {
        plain = false;
        break;
      }
    }
    if (keys.length > 1) {
      if (plain) sortPlainKeys(keys);
      else keys.sort(compareCodePoints);
    }
    out = "{";
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      if (index > 0) out += ",";
      out += plain ? `"${key}":` : `${quoteFast(key)}:`;
      out += fastWrite(object[key], ancestors, safeIntegers);
    }
    out += "}";
  }
  ancestors.pop();
  return out;
}

/** Writes `value` as runx.stable-json.v1 / runx.receipt.c14n.v1; throws CANONICAL_JSON_INVALID. */
export function canonicalJson(value: unknown): string {
  try {
    return fastWrite(value, [], false);
  } catch (error) {
    if (error !== UNWRITABLE) throw error;
  }
  // Something must be refused: the careful writer names the path (and always throws here).
  return write(value, "$", new Set());
}

/**
 * `canonicalJson(value)` when it writes without refusal and holds no integer beyond 2^53 − 1;
 * otherwise undefined (the caller finds and names the problem). One pass for callers that
 * refuse unportable integers (the data store's events).
 */
export function canonicalJsonOfPortable(value: unknown): string | undefined {
  try {
    return fastWrite(value, [], true);
  } catch (error) {
    if (error !== UNWRITABLE) throw error;
    return undefined;
  }
}

/**
 * The canonical JSON of one string: the bytes `canonicalJson(value)` writes, without its
 * per-call setup (for templates whose keys are fixed and whose values are known strings).
 * Throws CANONICAL_JSON_INVALID for a lone surrogate, as canonicalJson does.
 */
export function canonicalString(value: string): string {
  if (!NEEDS_CARE.test(value)) return `"${value}"`;
  return canonicalJson(value);
}

/** The canonical JSON of one number (as canonicalJson writes it; non-finite is refused). */
export function canonicalNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : canonicalJson(value);
}

/** `sha256:` + lowercase hex SHA-256 of the bytes, and the bare hex (strings as UTF-8). */
export { sha256Hex, sha256Prefixed };

/** `sha256:<hex>` of the canonical JSON of `value`. */
export function hashCanonical(value: unknown): string {
  return sha256Prefixed(canonicalJson(value));
}

/** True for `sha256:` followed by exactly 64 lowercase or uppercase hex digits. */
export function isSha256Digest(value: string): boolean {
  return /^sha256:[0-9a-fA-F]{64}$/.test(value);
}
