/**
 * The assertion engine. Pure: an observed case outcome and its expectation in, a list
 * of mismatches out. Each mismatch names the path, the expected and the actual value.
 */
import type { JsonValue } from "../parser/json.js";
import { isJsonObject } from "../parser/json.js";
import { receiptBodyDigest, receiptFullDigest } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import type { CaseExpectation, HarnessStatus, ValueExpectation } from "./fixture.js";

/** One failed expectation. */
export interface Mismatch {
  path: string;
  expected: unknown;
  actual: unknown;
}

/** What a case produced. */
export interface ObservedCase {
  status: HarnessStatus;
  output: JsonValue;
  /** The final root receipt (absent when the run was refused before sealing anything). */
  receipt?: Receipt;
  /** Child receipts of the root, in lineage order. */
  children: Receipt[];
  /** Each step's recorded structured output, by step id (graph runs). */
  stepOutputs?: Record<string, unknown>;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (isJsonObject(a) && isJsonObject(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

/**
 * First difference of `actual` against `expected`: exact is deep JSON equality; subset
 * recurses into objects (a missing key compares as null), matches arrays as an ordered
 * prefix and compares scalars for equality.
 */
export function firstDifference(
  expected: ValueExpectation,
  actual: unknown,
  path: string,
): Mismatch | undefined {
  if (expected.mode === "exact") {
    return deepEqual(expected.value, actual)
      ? undefined
      : exactDifference(expected.value, actual, path);
  }
  return subsetDifference(expected.value, actual, path);
}

function exactDifference(expected: unknown, actual: unknown, path: string): Mismatch {
  if (isJsonObject(expected) && isJsonObject(actual)) {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of [...keys].sort()) {
      if (!deepEqual(expected[key], actual[key])) {
        return exactDifference(expected[key], actual[key], `${path}.${key}`);
      }
    }
  }
  if (Array.isArray(expected) && Array.isArray(actual) && expected.length === actual.length) {
    const i = expected.findIndex((item, n) => !deepEqual(item, actual[n]));
    if (i >= 0) return exactDifference(expected[i], actual[i], `${path}[${i}]`);
  }
  return { path, expected: expected ?? null, actual: actual ?? null };
}

function subsetDifference(expected: unknown, actual: unknown, path: string): Mismatch | undefined {
  if (isJsonObject(expected)) {
    if (!isJsonObject(actual)) return { path, expected, actual: actual ?? null };
    for (const [key, value] of Object.entries(expected)) {
      const found = subsetDifference(value, actual[key] ?? null, `${path}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length < expected.length) {
      return { path, expected, actual: actual ?? null };
    }
    for (const [i, item] of expected.entries()) {
      const found = subsetDifference(item, actual[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return deepEqual(expected, actual) ? undefined : { path, expected, actual: actual ?? null };
}

/** A step's name: its receipt's first act id without the `act_` prefix. */
function stepName(receipt: Receipt): string {
  const id = receipt.acts[0]?.id ?? "";
  return id.startsWith("act_") ? id.slice(4) : id;
}

/** The observed step list: the children's names, or the root's own act for a single runner. */
export function observedSteps(observed: ObservedCase): string[] {
  if (observed.children.length > 0) return observed.children.map(stepName);
  return observed.receipt === undefined ? [] : [stepName(observed.receipt)];
}

function receiptFact(receipt: Receipt, children: readonly Receipt[], key: string): unknown {
  switch (key) {
    case "schema":
      return receipt.schema;
    case "body_digest":
      return receiptBodyDigest(receipt);
    case "receipt_id":
      return receipt.id;
    case "receipt_digest":
      return receiptFullDigest(receipt);
    case "harness_id":
      return receipt.subject.ref.uri;
    case "state":
      return receipt.seal.disposition === "deferred" ? "deferred" : "sealed";
    case "disposition":
      return receipt.seal.disposition;
    case "reason_code":
      return receipt.seal.reason_code ?? null;
    case "act_ids":
      return receipt.acts.map((act) => act.id);
    case "decision_ids":
      return receipt.decisions.map((decision) => decision.decision_id);
    case "child_receipt_refs":
      return (receipt.lineage?.children ?? []).map((reference) => reference.uri);
    case "child_receipt_count":
      return children.length;
    default:
      return undefined;
  }
}

/** Every mismatch of the observed case against its expectation, in a stable order. */
export function assertCase(observed: ObservedCase, expect: CaseExpectation): Mismatch[] {
  const out: Mismatch[] = [];
  if (expect.status !== undefined && expect.status !== observed.status) {
    out.push({ path: "expect.status", expected: expect.status, actual: observed.status });
  }
  if (expect.output !== undefined) {
    const found = firstDifference(expect.output, observed.output, "expect.output");
    if (found !== undefined) out.push(found);
  }
  if (expect.steps !== undefined) {
    const steps = observedSteps(observed);
    if (!deepEqual(expect.steps, steps)) {
      out.push({ path: "expect.steps", expected: expect.steps, actual: steps });
    }
  }
  for (const [step, expectation] of Object.entries(expect.stepOutputs ?? {})) {
    const found = firstDifference(
      expectation,
      observed.stepOutputs?.[step] ?? null,
      `expect.step_outputs.${step}`,
    );
    if (found !== undefined) out.push(found);
  }
  if (expect.receipt !== undefined) {
    const receipt = observed.receipt;
    for (const [key, value] of Object.entries(expect.receipt)) {
      const actual = receipt === undefined ? null : receiptFact(receipt, observed.children, key);
      const wanted = key === "schema" ? (value ?? "runx.receipt.v1") : value;
      if (actual !== undefined && !deepEqual(wanted, actual)) {
        out.push({ path: `expect.receipt.${key}`, expected: wanted, actual });
      }
    }
  }
  return out;
}

/** `path: expected X, got Y` with compact JSON values. */
export function formatMismatch(m: Mismatch): string {
  return `${m.path}: expected ${JSON.stringify(m.expected)}, got ${JSON.stringify(m.actual)}`;
}
