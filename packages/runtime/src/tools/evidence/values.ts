/**
 * Lenient readers and dotted paths shared by the evidence tools. Their inputs are loose JSON
 * (packets produced by other tools and agents), so a field of the wrong type reads as empty
 * and becomes a blocker or finding rather than a tool failure: the verifier's job is to say
 * what is unsupported, not to crash on it. Pure.
 */
import { RuntimeError } from "../../errors.js";
import { canonicalJson, compareCodePoints } from "../../receipts/canonical.js";
import { isRecord } from "../packet.js";
import type { Json, JsonRecord } from "../types.js";

/** One verification finding: a stable code, a sentence, and the input path it is about. */
export interface Finding {
  code: string;
  message: string;
  path?: string;
}

/** A finding as JSON (no `path` key when it has none). */
export function findingJson(finding: Finding): JsonRecord {
  const out: JsonRecord = { code: finding.code, message: finding.message };
  if (finding.path !== undefined) out.path = finding.path;
  return out;
}

const EMPTY: JsonRecord = Object.freeze({});

/** The value as an object, or an empty one. */
export function objectOf(value: Json | undefined): JsonRecord {
  return isRecord(value) ? value : EMPTY;
}

/** The value as an array, or an empty one. */
export function arrayOf(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : [];
}

/** The value as trimmed text; "" for anything that is not a string. */
export function textOf(value: Json | undefined): string {
  return typeof value === "string" ? value.trim() : "";
}

/** The non-empty trimmed strings of an array (other items are skipped). */
export function stringsOf(value: Json | undefined): string[] {
  return arrayOf(value)
    .filter((item): item is string => typeof item === "string")
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** `sha256:` and exactly 64 lowercase hex digits (the form the runtime writes). */
export function isLowerSha256(value: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(value);
}

/** An object's keys in code-point order, the order upstream's sorted JSON objects iterate. */
export function sortedKeys(value: JsonRecord): string[] {
  return Object.keys(value).sort(compareCodePoints);
}

/** Dotted paths: segments of ASCII letters, digits, `_` or `-` (no array indexes). */
function validPath(path: string): boolean {
  return path !== "" && path.split(".").every((segment) => /^[A-Za-z0-9_-]+$/.test(segment));
}

/** The value at a dotted path, or undefined when the path is invalid or does not resolve. */
export function valueAtPath(value: Json | undefined, path: string): Json | undefined {
  if (!validPath(path)) return undefined;
  let current = value;
  for (const segment of path.split(".")) {
    if (!isRecord(current) || !Object.hasOwn(current, segment)) return undefined;
    current = current[segment];
  }
  return current;
}

/** Non-empty: a non-blank string, a non-empty array or object, any number or boolean. */
export function present(value: Json | undefined): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === "string") return value.trim() !== "";
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

/** Equality of two values by canonical JSON; a missing value equals null. */
export function canonicalEqual(left: Json | undefined, right: Json | undefined): boolean {
  return canonicalJson(left ?? null) === canonicalJson(right ?? null);
}

/** Sets a dotted path, creating (or replacing non-object) intermediate objects. */
function setAtPath(target: JsonRecord, path: string, replacement: Json, tool: string): void {
  if (!validPath(path)) {
    throw new RuntimeError("INPUT_INVALID", `${tool}: invalid binding target path: ${path}`, {
      path,
    });
  }
  const segments = path.split(".");
  const last = segments.pop() as string;
  let current = target;
  for (const segment of segments) {
    const child = current[segment];
    if (!isRecord(child)) current[segment] = {};
    current = current[segment] as JsonRecord;
  }
  current[last] = replacement;
}

/**
 * Copies `source_path` values of `source` onto `target_path`s of a copy of `target`; a binding
 * whose source path does not resolve, or that names no target, is an INPUT_INVALID failure
 * naming `<field>[i]` (the artifact would otherwise be released with a hole in it).
 */
export function applyBindings(options: {
  target: JsonRecord;
  source: Json | undefined;
  bindings: readonly Json[];
  field: string;
  tool: string;
}): JsonRecord {
  const target = structuredClone(options.target);
  options.bindings.forEach((raw, index) => {
    const binding = objectOf(raw);
    const targetPath = textOf(binding.target_path);
    const replacement = valueAtPath(options.source, textOf(binding.source_path));
    if (replacement === undefined || targetPath === "") {
      const at = `${options.field}[${index}]`;
      throw new RuntimeError(
        "INPUT_INVALID",
        `${options.tool}: ${at} must bind existing target_path and source_path values`,
        { path: at },
      );
    }
    setAtPath(target, targetPath, structuredClone(replacement), options.tool);
  });
  return target;
}
