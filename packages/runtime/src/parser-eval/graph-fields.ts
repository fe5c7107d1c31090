/**
 * The field readers of upstream's graph validator, worded as its graph reader words them
 * (an absent object reads as "must be an object", an empty step list as "must contain at
 * least one step"), and the `equals` / `not_equals` condition shared by guards and `when`.
 * Used by parser-eval/graph.ts and parser-eval/graph-policy.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { invalid } from "./fields.js";

/** A field this module already checked as a string. */
export const str = (value: JsonValue | undefined): string =>
  typeof value === "string" ? value : "";

/** The graph reader's object: absent and null read as "must be an object", like a wrong type. */
export function requiredObject(value: JsonValue | undefined, field: string): JsonObject {
  if (!isJsonObject(value)) return invalid(`${field} must be an object.`);
  return value;
}

/** A non-empty array (upstream words both failures of its graph array reader this way). */
export function requiredArray(value: JsonValue | undefined, field: string): JsonValue[] {
  if (!Array.isArray(value)) return invalid(`${field} must be an array.`);
  if (value.length === 0) invalid(`${field} must contain at least one step.`);
  return value;
}

export function optionalNumber(value: JsonValue | undefined, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value))
    return invalid(`${field} must be a finite number.`);
  return value;
}

export function positiveInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 1) invalid(`${field} must be a positive integer.`);
  return value;
}

export function nonNegativeInteger(value: number, field: string): number {
  if (!Number.isInteger(value) || value < 0) invalid(`${field} must be a non-negative integer.`);
  return value;
}

/** `equals` / `not_equals`: exactly one, kept as written (a null counts as declared). */
export function condition(
  record: JsonObject,
  field: string,
): Record<string, JsonValue | undefined> {
  const equals = "equals" in record;
  const notEquals = "not_equals" in record;
  if (equals && notEquals) invalid(`${field} must not declare both equals and not_equals.`);
  if (!equals && !notEquals) invalid(`${field} must declare equals or not_equals.`);
  return {
    equals: equals ? (record.equals ?? null) : undefined,
    notEquals: notEquals ? (record.not_equals ?? null) : undefined,
  };
}
