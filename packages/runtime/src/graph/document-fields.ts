/**
 * Field parsers for graph documents: lists, scalars, retry, conditions, context edges, fanout
 * groups and guards. Each throws GRAPH_INVALID with the key path it was given. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { RetryPolicy } from "../parser/runner-types.js";
import type { FanoutGroup, FieldCondition, GraphGuard } from "./document-types.js";
import { invalid } from "./paths.js";
import type { KeyPath } from "./paths.js";
import { parseStepRef } from "./references.js";
import type { StepRef } from "./references.js";

/** A list of non-empty strings, or undefined when absent. */
export function strings(
  value: JsonValue | undefined,
  at: KeyPath,
  what: string,
): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v !== ""))
    invalid(`${what} must be a list of non-empty strings`, at);
  return value as string[];
}

/** A non-empty string, or undefined when absent. */
export function text(value: JsonValue | undefined, at: KeyPath, what: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value === "") invalid(`${what} must be a non-empty string`, at);
  return value;
}

/** A non-empty string that must be present. */
function required(value: JsonValue | undefined, at: KeyPath, what: string): string {
  return text(value, at, what) ?? invalid(`${what} is required`, at);
}

/** A mapping, or undefined when absent. */
export function object(
  value: JsonValue | undefined,
  at: KeyPath,
  what: string,
): JsonObject | undefined {
  if (value === undefined) return undefined;
  if (!isJsonObject(value)) invalid(`${what} must be a mapping`, at);
  return value;
}

/** `retry: {max_attempts ≥ 1 (default 1), backoff_ms ≥ 0}`. */
export function retryOf(value: JsonValue | undefined, at: KeyPath): RetryPolicy | undefined {
  const raw = object(value, at, "retry");
  if (raw === undefined) return undefined;
  const max = raw.max_attempts ?? 1;
  if (typeof max !== "number" || !Number.isInteger(max) || max < 1)
    invalid("retry.max_attempts must be an integer ≥ 1", [...at, "max_attempts"]);
  const backoff = raw.backoff_ms;
  if (backoff !== undefined && (typeof backoff !== "number" || backoff < 0))
    invalid("retry.backoff_ms must be a number ≥ 0", [...at, "backoff_ms"]);
  return backoff === undefined ? { max_attempts: max } : { max_attempts: max, backoff_ms: backoff };
}

/** Parses `{field, equals | not_equals}` (exactly one comparison). */
function conditionOf(raw: JsonObject, at: KeyPath, what: string): FieldCondition {
  const field = raw.field;
  if (typeof field !== "string" || field === "")
    invalid(`${what}.field must be a non-empty string`, [...at, "field"]);
  if ("equals" in raw === "not_equals" in raw)
    invalid(`${what} must declare exactly one of equals or not_equals`, at);
  const ref = parseStepRef(field);
  if (ref === undefined) invalid(`${what}.field must be <step>.<path>`, [...at, "field"]);
  const out: FieldCondition = { field: ref };
  if (raw.equals !== undefined) out.equals = raw.equals;
  if (raw.not_equals !== undefined) out.not_equals = raw.not_equals;
  return out;
}

/** `when: {field, equals | not_equals}`; the field names an earlier step's output. */
export function whenOf(value: JsonValue | undefined, at: KeyPath): FieldCondition | undefined {
  const raw = object(value, at, "when");
  if (raw === undefined) return undefined;
  for (const key of Object.keys(raw))
    if (!["field", "equals", "not_equals"].includes(key))
      invalid(`unknown when key "${key}"`, [...at, key]);
  return conditionOf(raw, at, "when");
}

/** `context: {input: "<step>.<path>"}` (the `$steps.` prefix is accepted). */
export function contextOf(value: JsonValue | undefined, at: KeyPath): Record<string, StepRef> {
  const raw = object(value, at, "context") ?? {};
  const out: Record<string, StepRef> = {};
  for (const [name, ref] of Object.entries(raw)) {
    const parsed = typeof ref === "string" ? parseStepRef(ref) : undefined;
    if (parsed === undefined)
      invalid("context values must be references of the form <step>.<output path>", [...at, name]);
    out[name] = parsed;
  }
  return out;
}

function gateAction(value: JsonValue | undefined, at: KeyPath): "pause" | "escalate" {
  if (value !== "pause" && value !== "escalate")
    invalid("gate action must be pause or escalate", [...at, "action"]);
  return value;
}

function gateKeys(raw: JsonObject, allowed: readonly string[], at: KeyPath): void {
  for (const key of Object.keys(raw))
    if (!allowed.includes(key))
      invalid(`fanout gates compare structured fields only; unknown key "${key}"`, [...at, key]);
}

/** One `fanout.groups.<id>` entry, with spec defaults (strategy all; halt for all, else continue). */
export function groupOf(id: string, value: JsonValue, at: KeyPath): FanoutGroup {
  const raw = object(value, at, `fanout group '${id}'`) ?? {};
  const strategy = raw.strategy ?? "all";
  if (strategy !== "all" && strategy !== "any" && strategy !== "quorum" && strategy !== "threshold")
    invalid("strategy must be all, any, quorum or threshold", [...at, "strategy"]);
  const onFailure = raw.on_branch_failure ?? (strategy === "all" ? "halt" : "continue");
  if (onFailure !== "halt" && onFailure !== "continue")
    invalid("on_branch_failure must be halt or continue", [...at, "on_branch_failure"]);
  const group: FanoutGroup = {
    id,
    strategy,
    on_branch_failure: onFailure,
    threshold_gates: [],
    conflict_gates: [],
    steps: [],
  };
  const min = raw.min_success;
  if (min !== undefined || strategy === "quorum" || strategy === "threshold") {
    if (typeof min !== "number" || !Number.isInteger(min) || min < 1)
      invalid(`min_success must be an integer ≥ 1 for strategy ${strategy}`, [
        ...at,
        "min_success",
      ]);
    group.min_success = min;
  }
  const thresholds = raw.threshold_gates ?? [];
  if (!Array.isArray(thresholds))
    invalid("threshold_gates must be a list", [...at, "threshold_gates"]);
  thresholds.forEach((gate, i) => {
    const g = object(gate, [...at, "threshold_gates", i], "threshold gate") ?? {};
    gateKeys(g, ["step", "field", "above", "action"], [...at, "threshold_gates", i]);
    if (typeof g.above !== "number")
      invalid("above must be a number", [...at, "threshold_gates", i]);
    group.threshold_gates.push({
      step: required(g.step, [...at, "threshold_gates", i, "step"], "step"),
      field: required(g.field, [...at, "threshold_gates", i, "field"], "field"),
      above: g.above,
      action: gateAction(g.action, [...at, "threshold_gates", i]),
    });
  });
  const conflicts = raw.conflict_gates ?? [];
  if (!Array.isArray(conflicts))
    invalid("conflict_gates must be a list", [...at, "conflict_gates"]);
  conflicts.forEach((gate, i) => {
    const g = object(gate, [...at, "conflict_gates", i], "conflict gate") ?? {};
    gateKeys(g, ["field", "steps", "action"], [...at, "conflict_gates", i]);
    const steps = strings(g.steps, [...at, "conflict_gates", i, "steps"], "steps");
    const field = required(g.field, [...at, "conflict_gates", i, "field"], "field");
    const action = gateAction(g.action, [...at, "conflict_gates", i]);
    group.conflict_gates.push(steps === undefined ? { field, action } : { field, steps, action });
  });
  return group;
}

/** `policy.guards` (and TS-era `policy.transitions`, whose `to` names the guarded step). */
export function guardsOf(policy: JsonObject | undefined, at: KeyPath): GraphGuard[] {
  if (policy === undefined) return [];
  const out: GraphGuard[] = [];
  for (const listKey of ["guards", "transitions"]) {
    const list = policy[listKey];
    if (list === undefined) continue;
    if (!Array.isArray(list)) invalid(`policy.${listKey} must be a list`, [...at, listKey]);
    list.forEach((entry, i) => {
      const gAt: KeyPath = [...at, listKey, i];
      const raw = object(entry, gAt, "guard") ?? {};
      // TS-era transitions name the guarded step `to`.
      const step = text(raw.step ?? raw.to, [...gAt, "step"], "guard step");
      if (step === undefined) invalid("guard must name the guarded step", gAt);
      // `reason` says in words why the step may not run; a blocked run seals with it.
      const reason = text(raw.reason, [...gAt, "reason"], "guard reason");
      out.push({
        step,
        ...conditionOf(raw, gAt, "guard"),
        ...(reason !== undefined ? { reason } : {}),
      });
    });
  }
  return out;
}
