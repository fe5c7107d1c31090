/**
 * Reference resolution for graph steps. Cross-step data flows only through
 * structured outputs: context edges `<step>.<path>` and the `$steps.<step>.<path>` alias.
 * Graph inputs are read with `$input.<path>`; TS-era idempotency keys use `{{path}}` templates
 * over the step's resolved inputs. Pure.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";

/** A reference to an earlier step's structured output: `first.result.data.message`. */
export interface StepRef {
  step: string;
  path: string[];
  /** The reference as written. */
  ref: string;
}

/** Where references read from: graph inputs and the outputs of succeeded steps. */
export interface ReferenceScope {
  inputs: JsonObject;
  /** The structured output of a succeeded step, or undefined when it has none (yet). */
  outputOf(stepId: string): JsonObject | undefined;
}

/** The parts of a step that input resolution needs. */
export interface ResolvableStep {
  id: string;
  inputs: JsonObject;
  context: Record<string, StepRef>;
}

const STEPS_PREFIX = "$steps.";
const INPUT_PREFIX = "$input";
const TEMPLATE = /\{\{\s*([^{}\s]+)\s*\}\}/g;

/** Parses `<step>.<path>` (optionally written `$steps.<step>.<path>`); undefined if malformed. */
export function parseStepRef(raw: string): StepRef | undefined {
  const body = raw.startsWith(STEPS_PREFIX) ? raw.slice(STEPS_PREFIX.length) : raw;
  const segments = body.split(".");
  const [step, ...path] = segments;
  if (step === undefined || step === "" || segments.some((s) => s === "")) return undefined;
  return { step, path, ref: raw };
}

/** Reads a dotted path (object keys; integer segments index arrays); undefined when absent. */
export function resolvePath(
  value: JsonValue | undefined,
  path: readonly string[],
): JsonValue | undefined {
  let current: JsonValue | undefined = value;
  for (const segment of path) {
    if (Array.isArray(current) && /^\d+$/.test(segment)) current = current[Number(segment)];
    else if (isJsonObject(current) && Object.hasOwn(current, segment)) current = current[segment];
    else return undefined;
  }
  return current;
}

/** The value a step reference points at, or undefined when the step or path is absent. */
export function readStepRef(ref: StepRef, scope: ReferenceScope): JsonValue | undefined {
  return resolvePath(scope.outputOf(ref.step), ref.path);
}

/** Every `$steps.` reference inside a value (any depth), for dependency analysis. */
export function stepRefsIn(value: JsonValue): StepRef[] {
  if (typeof value === "string") {
    const ref = value.startsWith(STEPS_PREFIX) ? parseStepRef(value) : undefined;
    return ref === undefined ? [] : [ref];
  }
  if (Array.isArray(value)) return value.flatMap(stepRefsIn);
  if (isJsonObject(value)) return Object.values(value).flatMap(stepRefsIn);
  return [];
}

function missing(stepId: string, where: string, ref: string, source?: string): never {
  const what =
    source === undefined ? "is not available" : `is not in the output of step '${source}'`;
  throw new RuntimeError(
    "GRAPH_REFERENCE_MISSING",
    `step '${stepId}': ${where} references ${ref}, which ${what}`,
    { step_id: stepId, path: `${stepId}.${where}`, reference: ref },
  );
}

/** The `$input.<path>` path of a string, or undefined when the string is not an input reference. */
function inputPath(value: string): string[] | undefined {
  if (value === INPUT_PREFIX) return [];
  return value.startsWith(`${INPUT_PREFIX}.`)
    ? value.slice(INPUT_PREFIX.length + 1).split(".")
    : undefined;
}

/** Resolves `$input.` / `$steps.` strings at any depth; absent `$input` values are dropped. */
function resolveValue(
  value: JsonValue,
  scope: ReferenceScope,
  stepId: string,
  where: string,
): JsonValue | undefined {
  if (typeof value === "string") {
    const path = inputPath(value);
    if (path !== undefined) return resolvePath(scope.inputs, path);
    const ref = value.startsWith(STEPS_PREFIX) ? parseStepRef(value) : undefined;
    if (ref === undefined) return value;
    const resolved = readStepRef(ref, scope);
    return resolved === undefined ? missing(stepId, where, value, ref.step) : resolved;
  }
  if (Array.isArray(value))
    return value
      .map((item, i) => resolveValue(item, scope, stepId, `${where}[${i}]`))
      .filter((item): item is JsonValue => item !== undefined);
  if (isJsonObject(value)) {
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      const resolved = resolveValue(item, scope, stepId, `${where}.${key}`);
      if (resolved !== undefined) out[key] = resolved;
    }
    return out;
  }
  return value;
}

/**
 * A step's inputs: optionally the graph inputs (ambient) minus names a context edge produces,
 * overlaid with the declared inputs, then (unless `contextAsInputs` is false) the context
 * values. Inside the declared inputs, `$input.<name>` sees the graph inputs overlaid with the
 * step's own context values, so a step can pick fields out of what its context edges bring.
 * Throws GRAPH_REFERENCE_MISSING naming the step and path when a step reference is absent.
 */
export function resolveStepInputs(
  step: ResolvableStep,
  scope: ReferenceScope,
  options: { ambient?: boolean; contextAsInputs?: boolean } = {},
): JsonObject {
  const context: JsonObject = {};
  for (const [name, ref] of Object.entries(step.context)) {
    const value = readStepRef(ref, scope);
    if (value === undefined) missing(step.id, `context.${name}`, ref.ref, ref.step);
    context[name] = value;
  }
  const templates =
    Object.keys(context).length === 0
      ? scope
      : { ...scope, inputs: { ...scope.inputs, ...context } };
  const out: JsonObject = {};
  if (options.ambient === true)
    for (const [name, value] of Object.entries(scope.inputs))
      if (!Object.hasOwn(step.context, name)) out[name] = value;
  const declared = resolveValue(step.inputs, templates, step.id, "inputs");
  if (isJsonObject(declared)) Object.assign(out, declared);
  if (options.contextAsInputs !== false) Object.assign(out, context);
  return out;
}

function scalarText(value: JsonValue | undefined): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/**
 * Resolves an idempotency key: `$input.<path>` from graph inputs (kept as written when absent,
 * for the effect boundary to refuse), `{{path}}` templates from the step's resolved inputs
 * (an absent template value is GRAPH_REFERENCE_MISSING), anything else is a literal key.
 */
export function resolveIdempotencyKey(
  key: string,
  stepId: string,
  graphInputs: JsonObject,
  stepInputs: JsonObject,
): string {
  const path = inputPath(key);
  if (path !== undefined) return scalarText(resolvePath(graphInputs, path)) ?? key;
  return key.replace(TEMPLATE, (_match, name: string) => {
    const value = scalarText(resolvePath(stepInputs, name.split(".")));
    return value ?? missing(stepId, "idempotency_key", `{{${name}}}`);
  });
}

/** Structural JSON equality (object key order does not matter). */
export function jsonEqual(left: JsonValue, right: JsonValue): boolean {
  if (left === right) return true;
  if (Array.isArray(left) || Array.isArray(right)) {
    if (!Array.isArray(left) || !Array.isArray(right) || left.length !== right.length) return false;
    return left.every((item, i) => jsonEqual(item, right[i] as JsonValue));
  }
  if (!isJsonObject(left) || !isJsonObject(right)) return false;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every(
    (k) => Object.hasOwn(right, k) && jsonEqual(left[k] as JsonValue, right[k] as JsonValue),
  );
}

/** Evaluates `{field, equals | not_equals}`; undefined when the field cannot be resolved. */
export function evaluateCondition(
  condition: { field: StepRef; equals?: JsonValue; not_equals?: JsonValue },
  scope: ReferenceScope,
): boolean | undefined {
  const value = readStepRef(condition.field, scope);
  if (value === undefined) return undefined;
  if (condition.equals !== undefined) return jsonEqual(value, condition.equals);
  return condition.not_equals === undefined ? undefined : !jsonEqual(value, condition.not_equals);
}
