/**
 * The decoding engine behind the receipt field tables (`shape.ts`). A table lists a
 * struct's members in upstream declaration order and how each behaves when empty; the
 * engine decodes a JSON value strictly (unknown members refused, defaults filled) into a
 * new object whose key order is the stored-file order. Decoding is idempotent, so the same
 * walk normalises values built in code.
 */
import { RuntimeError } from "../errors.js";
import { compareCodePoints, hasLoneSurrogate } from "./canonical.js";

/** How a member behaves when absent. */
export type Presence =
  /** Must be present and non-null. */
  | "required"
  /** Written as `null` when empty; may be missing or null on input. */
  | "nullable"
  /** Left out when empty; null on input counts as absent. */
  | "optional"
  /** An array written even when empty; missing on input means `[]`. */
  | "list"
  /** An array left out when empty. */
  | "list-skip-empty"
  /** A boolean left out when false. */
  | "skip-false";

/** The JSON type of a member. */
export type Kind =
  | { t: "str"; empty?: boolean; oneOf?: readonly string[]; pattern?: RegExp }
  | { t: "bool" }
  | { t: "uint" }
  | { t: "num" }
  | { t: "json-object" }
  | { t: "obj"; shape: () => Shape }
  | { t: "arr"; of: Kind };

/** One member: name, kind, presence. */
export type Field = readonly [name: string, kind: Kind, presence: Presence];
/** A struct: its members in declaration order. */
export interface Shape {
  readonly name: string;
  readonly fields: readonly Field[];
  /** The member names (unknown members are refused). */
  readonly known: ReadonlySet<string>;
}

/** A non-empty string. */
export const text: Kind = { t: "str" };
/** Any string, empty included. */
export const anyText: Kind = { t: "str", empty: true };
/** A snake_case identifier (open enumerations). */
export const snake: Kind = { t: "str", pattern: /^[a-z][a-z0-9_]*$/ };
/** An RFC 3339 timestamp. */
export const dateTime: Kind = {
  t: "str",
  pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
};
/** A non-negative safe integer. */
export const uint: Kind = { t: "uint" };
/** A boolean. */
export const bool: Kind = { t: "bool" };
/** One of the listed strings. */
export const oneOf = (...values: string[]): Kind => ({ t: "str", oneOf: values });
/** A nested struct (the thunk allows recursion and is evaluated once). */
export const obj = (thunk: () => Shape): Kind => {
  let cached: Shape | undefined;
  return { t: "obj", shape: () => (cached ??= thunk()) };
};
/** An array of `of`. */
export const arr = (of: Kind): Kind => ({ t: "arr", of });
/** A struct table. */
export const shape = (name: string, fields: Field[]): Shape => ({
  name,
  fields,
  known: new Set(fields.map(([member]) => member)),
});

/** A document that does not have the expected shape: RECEIPT_INVALID naming a JSONPath-like path. */
export function shapeError(path: string, reason: string): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", `${path}: ${reason}`, { path });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** Decodes free-form JSON; objects come out with members sorted by code point. */
export function decodeFree(value: unknown, path: string): unknown {
  if (typeof value === "string") {
    if (hasLoneSurrogate(value)) throw shapeError(path, "string is not valid Unicode");
    return value;
  }
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw shapeError(path, "number is not finite");
    return value;
  }
  if (value === null || typeof value === "boolean") return value;
  if (Array.isArray(value)) return value.map((item, i) => decodeFree(item, `${path}[${i}]`));
  if (isObject(value)) {
    // Free-form objects are ordered maps upstream: members come out sorted.
    const out: Record<string, unknown> = {};
    const keys = Object.keys(value).sort(compareCodePoints);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      const decoded = decodeFree(value[key], `${path}.${key}`);
      // A member named `__proto__` must stay data, not set the prototype.
      if (key === "__proto__") {
        Object.defineProperty(out, key, {
          value: decoded,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        out[key] = decoded;
      }
    }
    return out;
  }
  throw shapeError(path, `expected JSON, found ${describe(value)}`);
}

/** `base.key` or `base[index]`: built when a path is reported or descended into, not per value. */
const memberPath = (base: string, key: string | number): string =>
  typeof key === "number" ? `${base}[${key}]` : `${base}.${key}`;

/** Decodes the member `key` of the value at `base`. */
function decodeKind(kind: Kind, value: unknown, base: string, key: string | number): unknown {
  switch (kind.t) {
    case "str": {
      if (typeof value !== "string") {
        throw shapeError(memberPath(base, key), `expected a string, found ${describe(value)}`);
      }
      if (hasLoneSurrogate(value))
        throw shapeError(memberPath(base, key), "string is not valid Unicode");
      if (kind.empty !== true && value.length === 0) {
        throw shapeError(memberPath(base, key), "expected a non-empty string");
      }
      if (kind.oneOf !== undefined && !kind.oneOf.includes(value)) {
        throw shapeError(
          memberPath(base, key),
          `unknown variant, expected one of ${kind.oneOf.join(", ")}`,
        );
      }
      if (kind.pattern !== undefined && !kind.pattern.test(value)) {
        throw shapeError(memberPath(base, key), "string has the wrong format");
      }
      return value;
    }
    case "bool":
      if (typeof value !== "boolean") {
        throw shapeError(memberPath(base, key), `expected a boolean, found ${describe(value)}`);
      }
      return value;
    case "uint":
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
        throw shapeError(memberPath(base, key), "expected a non-negative integer");
      }
      return value;
    case "num":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        throw shapeError(memberPath(base, key), "expected a finite number");
      }
      return value;
    case "json-object":
      if (!isObject(value)) {
        throw shapeError(memberPath(base, key), `expected an object, found ${describe(value)}`);
      }
      return decodeFree(value, memberPath(base, key));
    case "arr":
      if (!Array.isArray(value)) {
        throw shapeError(memberPath(base, key), `expected an array, found ${describe(value)}`);
      }
      {
        const at = memberPath(base, key);
        const items: unknown[] = [];
        for (let index = 0; index < value.length; index++) {
          items.push(decodeKind(kind.of, value[index] as unknown, at, index));
        }
        return items;
      }
    case "obj":
      return decodeShape(kind.shape(), value, memberPath(base, key));
  }
}

/** Decodes `value` as the struct `target`, returning members in declaration order. */
export function decodeShape(target: Shape, value: unknown, path: string): Record<string, unknown> {
  if (!isObject(value)) {
    throw shapeError(path, `expected ${target.name} object, found ${describe(value)}`);
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (!target.known.has(key)) throw shapeError(`${path}.${key}`, "unknown field");
  }
  const out: Record<string, unknown> = {};
  const fields = target.fields;
  for (let i = 0; i < fields.length; i++) {
    const [name, kind, presence] = fields[i] as Field;
    const raw = value[name];
    // Only Option-typed members accept an explicit null; lists and flags do not.
    const absent =
      raw === undefined || (raw === null && (presence === "nullable" || presence === "optional"));
    if (absent) {
      if (presence === "required") throw shapeError(`${path}.${name}`, "missing field");
      if (presence === "nullable") out[name] = null;
      if (presence === "list") out[name] = [];
      continue;
    }
    const decoded = decodeKind(kind, raw, path, name);
    if (presence === "list-skip-empty" && (decoded as unknown[]).length === 0) continue;
    if (presence === "skip-false" && decoded === false) continue;
    out[name] = decoded;
  }
  return out;
}
