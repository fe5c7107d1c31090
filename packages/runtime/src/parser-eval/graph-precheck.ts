/**
 * Upstream's graph checks, in upstream's order and with its sentences, run before our graph
 * normaliser (graph/document.ts) so a parser-eval rejection reads as upstream's does:
 * unsupported top-level keys, name/owner/charter_from, a non-empty steps list, fanout groups,
 * the policy's guards, each step's shape (unsupported keys, mode, id, exactly one target,
 * runner, context, when, retry), then the fanout bindings. Field names are relative to the
 * graph document (`steps.0.id`), as upstream reports them for nested graphs too. The
 * normaliser still decides everything else; this only words the first problem upstream
 * would find. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalBool,
  optionalNonEmptyString,
  optionalObject,
  optionalString,
  optionalStringArray,
  requiredString,
} from "./fields.js";

/** An array that must hold at least one entry (upstream words both failures this way). */
function nonEmptyArray(value: JsonValue | undefined, field: string): JsonValue[] {
  if (!Array.isArray(value)) return invalid(`${field} must be an array.`);
  if (value.length === 0) invalid(`${field} must contain at least one step.`);
  return value;
}

/** Exactly one of `equals` / `not_equals`. */
function condition(record: JsonObject, field: string): void {
  const equals = "equals" in record;
  const notEquals = "not_equals" in record;
  if (equals && notEquals) invalid(`${field} must not declare both equals and not_equals.`);
  if (!equals && !notEquals) invalid(`${field} must declare equals or not_equals.`);
}

function checkPolicy(value: JsonValue | undefined): void {
  if (value === undefined || value === null) return;
  if (!isJsonObject(value)) invalid("policy must be an object.");
  for (const key of Object.keys(value).sort())
    if (key !== "guards") invalid(`policy has unknown field '${key}'; only 'guards' is supported.`);
  const guards = value.guards;
  if (guards === undefined || guards === null) return;
  nonEmptyArray(guards, "policy.guards").forEach((guard, index) => {
    const field = `policy.guards.${index}`;
    if (!isJsonObject(guard)) invalid(`${field} must be an object.`);
    condition(guard, field);
    requiredString(guard.step, `${field}.step`);
    requiredString(guard.field, `${field}.field`);
  });
}

/**
 * A step input that reads like `<earlier step>.<output>` is refused: outputs of earlier steps
 * are bound through `context`, never through literal inputs.
 */
function rejectStepOutputRef(
  value: JsonValue | undefined,
  previous: ReadonlySet<string>,
  field: string,
): void {
  if (typeof value === "string") {
    const dot = value.indexOf(".");
    if (dot >= 0 && dot < value.length - 1 && previous.has(value.slice(0, dot)))
      invalid(
        `${field} looks like step output reference ${JSON.stringify(value)}; move it to context if you meant to read a previous step output.`,
      );
  } else if (Array.isArray(value)) {
    value.forEach((entry, index) => rejectStepOutputRef(entry, previous, `${field}.${index}`));
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value).sort())
      rejectStepOutputRef(value[key], previous, `${field}.${key}`);
  }
}

/** A number that must be an integer at or above `min` (upstream's graph retry readers). */
function integerAtLeast(value: JsonValue | undefined, field: string, min: 0 | 1): void {
  if (value === undefined || value === null) return;
  if (typeof value !== "number" || !Number.isFinite(value))
    invalid(`${field} must be a finite number.`);
  if (!Number.isInteger(value) || value < min)
    invalid(`${field} must be a ${min === 1 ? "positive" : "non-negative"} integer.`);
}

function checkRetry(value: JsonValue | undefined, field: string): void {
  const retry = optionalObject(value, field);
  if (retry === undefined) return;
  integerAtLeast(retry.max_attempts, `${field}.max_attempts`, 1);
  integerAtLeast(retry.backoff_ms, `${field}.backoff_ms`, 0);
}

function checkMode(step: JsonObject, field: string): void {
  const mode = optionalString(step.mode, `${field}.mode`);
  if (mode === undefined || mode === "sequential") return;
  if (mode === "fanout") {
    if (typeof step.fanout_group !== "string")
      invalid(`${field}.fanout_group is required when mode is fanout.`);
    return;
  }
  invalid(`${field}.mode '${mode}' is not supported by the local graph runner.`);
}

function checkStep(step: JsonObject, field: string, previous: ReadonlySet<string>): string {
  for (const key of ["sync", "stage"])
    if (key in step)
      invalid(`${field}.${key} is not supported by the local sequential graph runner.`);
  checkMode(step, field);
  if (["run", "skill", "tool"].filter((key) => key in step).length > 1)
    invalid(`${field} must not declare more than one of run, skill, or tool.`);
  const id = requiredString(step.id, `${field}.id`);
  if (previous.has(id)) invalid(`${field}.id '${id}' must be unique.`);
  const skill = optionalNonEmptyString(step.skill, `${field}.skill`);
  const tool = optionalNonEmptyString(step.tool, `${field}.tool`);
  const run = optionalObject(step.run, `${field}.run`);
  if ([skill, tool, run].filter((target) => target !== undefined).length !== 1)
    invalid(`${field} must declare exactly one of skill, tool, or run.`);
  if (run !== undefined && typeof run.type !== "string") invalid(`${field}.run.type is required.`);
  const runner = optionalNonEmptyString(step.runner, `${field}.runner`);
  if (runner !== undefined && skill === undefined)
    invalid(`${field}.runner is only valid for nested skill steps.`);
  const context = optionalObject(step.context, `${field}.context`) ?? {};
  for (const key of Object.keys(context).sort())
    if (typeof context[key] !== "string") invalid(`${field}.context.${key} must be a string.`);
  const contextSkills = optionalStringArray(step.context_skills, `${field}.context_skills`) ?? [];
  if (contextSkills.length > 0 && skill === undefined && run?.type !== "agent-task")
    invalid(`${field}.context_skills is only valid for agent-task steps or nested agent skills.`);
  const inputs = optionalObject(step.inputs, `${field}.inputs`) ?? {};
  for (const key of Object.keys(inputs).sort())
    rejectStepOutputRef(inputs[key], previous, `${field}.inputs.${key}`);
  optionalStringArray(step.scopes, `${field}.scopes`);
  optionalNonEmptyString(step.requested_scope_from, `${field}.requested_scope_from`);
  optionalNonEmptyString(step.label, `${field}.label`);
  optionalString(step.instructions, `${field}.instructions`);
  optionalObject(step.artifacts, `${field}.artifacts`);
  optionalStringArray(step.allowed_tools, `${field}.allowed_tools`);
  checkRetry(step.retry, `${field}.retry`);
  optionalObject(step.policy, `${field}.policy`);
  optionalString(step.fanout_group, `${field}.fanout_group`);
  const when = optionalObject(step.when, `${field}.when`);
  if (when !== undefined) {
    condition(when, `${field}.when`);
    requiredString(when.field, `${field}.when.field`);
  }
  optionalBool(step.mutation, `${field}.mutation`);
  optionalNonEmptyString(step.idempotency_key, `${field}.idempotency_key`);
  return id;
}

function requireObject(value: JsonValue | undefined, field: string): JsonObject {
  if (!isJsonObject(value)) return invalid(`${field} must be an object.`);
  return value;
}

function oneOf(value: JsonValue | undefined, field: string, allowed: readonly string[]): string {
  const text = optionalString(value, field);
  if (text !== undefined && !allowed.includes(text)) {
    const words =
      allowed.length === 2
        ? allowed.join(" or ")
        : `${allowed.slice(0, -1).join(", ")}, or ${allowed.at(-1) ?? ""}`;
    invalid(`${field} must be ${words}.`);
  }
  return text ?? "";
}

const GATE_UNSUPPORTED = ["contains", "matches", "semantic", "prompt", "sentiment"];

/** A gate list: absent, or a non-empty array of gate mappings with structured fields only. */
function gates(value: JsonValue | undefined, field: string): JsonObject[] {
  if (value === undefined || value === null) return [];
  return nonEmptyArray(value, field).map((raw, index) => {
    const at = `${field}.${index}`;
    const gate = requireObject(raw, at);
    for (const key of GATE_UNSUPPORTED)
      if (key in gate)
        invalid(`${at}.${key} is not supported; graph policy must evaluate structured fields.`);
    return gate;
  });
}

interface FanoutGroupShape {
  minSuccess?: number;
  thresholdSteps: string[];
  conflictSteps: string[];
}

/** `fanout.groups`: each group's strategy, min_success, branch-failure policy and gates. */
function checkFanout(value: JsonValue | undefined): Map<string, FanoutGroupShape> {
  const groups = new Map<string, FanoutGroupShape>();
  const fanout = optionalObject(value, "fanout");
  if (fanout === undefined) return groups;
  const raw = requireObject(fanout.groups, "fanout.groups");
  for (const id of Object.keys(raw).sort()) {
    const at = `fanout.groups.${id}`;
    const group = requireObject(raw[id], at);
    const strategy = oneOf(group.strategy, `${at}.strategy`, ["all", "any", "quorum"]);
    const min = group.min_success;
    if (min !== undefined && min !== null) {
      if (typeof min !== "number" || !Number.isFinite(min))
        invalid(`${at}.min_success must be a finite number.`);
      if (!Number.isInteger(min) || min < 1)
        invalid(`${at}.min_success must be a positive integer.`);
    } else if (strategy === "quorum") {
      invalid(`${at}.min_success must be a positive integer for quorum sync.`);
    }
    oneOf(group.on_branch_failure, `${at}.on_branch_failure`, ["halt", "continue"]);
    const thresholdSteps = gates(group.threshold_gates, `${at}.threshold_gates`).map(
      (gate, index) => {
        const gateAt = `${at}.threshold_gates.${index}`;
        const step = requiredString(gate.step, `${gateAt}.step`);
        requiredString(gate.field, `${gateAt}.field`);
        const above = gate.above;
        if (above === undefined || above === null) invalid(`${gateAt}.above is required.`);
        if (typeof above !== "number") invalid(`${gateAt}.above must be a finite number.`);
        if (gate.action !== "pause" && gate.action !== "escalate") {
          optionalString(gate.action, `${gateAt}.action`);
          invalid(`${gateAt}.action must be pause or escalate.`);
        }
        return step;
      },
    );
    const conflictSteps = gates(group.conflict_gates, `${at}.conflict_gates`).flatMap(
      (gate, index) => {
        const gateAt = `${at}.conflict_gates.${index}`;
        requiredString(gate.field, `${gateAt}.field`);
        const steps = optionalStringArray(gate.steps, `${gateAt}.steps`) ?? [];
        if (gate.action !== "pause" && gate.action !== "escalate") {
          optionalString(gate.action, `${gateAt}.action`);
          invalid(`${gateAt}.action must be pause or escalate.`);
        }
        return steps;
      },
    );
    const shape: FanoutGroupShape = { thresholdSteps, conflictSteps };
    if (typeof min === "number") shape.minSuccess = min;
    groups.set(id, shape);
  }
  return groups;
}

/** A checked step: its validated id beside the document. */
interface CheckedStep {
  id: string;
  step: JsonObject;
}

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/** Steps name declared groups; each group is used, contiguous, and its gates name its steps. */
function checkFanoutBindings(steps: CheckedStep[], groups: Map<string, FanoutGroupShape>): void {
  const groupOf = new Map<string, string>();
  const members = new Map<string, string[]>();
  for (const { id, step } of steps) {
    const group = step.fanout_group;
    if (typeof group !== "string") continue;
    if (!groups.has(group))
      invalid(`steps.${id}.fanout_group references unknown fanout group '${group}'.`);
    groupOf.set(id, group);
    members.set(group, [...(members.get(group) ?? []), id]);
  }
  for (const [group, shape] of [...groups.entries()].sort(byKey)) {
    const ids = members.get(group) ?? [];
    if (ids.length === 0) invalid(`fanout.groups.${group} is not used by any graph step.`);
    const indexes = steps.flatMap(({ id }, index) => (ids.includes(id) ? [index] : []));
    for (let i = Math.min(...indexes); i <= Math.max(...indexes); i++)
      if (steps[i]?.step.fanout_group !== group)
        invalid(`fanout group '${group}' steps must be contiguous.`);
    if (shape.minSuccess !== undefined && shape.minSuccess > ids.length)
      invalid(`fanout.groups.${group}.min_success cannot exceed the number of branches.`);
    for (const step of shape.thresholdSteps)
      if (!ids.includes(step))
        invalid(
          `fanout.groups.${group}.threshold_gates step '${step}' is not in the fanout group.`,
        );
    for (const step of shape.conflictSteps)
      if (!ids.includes(step))
        invalid(`fanout.groups.${group}.conflict_gates step '${step}' is not in the fanout group.`);
  }
  for (const { id, step } of steps) {
    const group = groupOf.get(id);
    if (group === undefined || !isJsonObject(step.context)) continue;
    for (const input of Object.keys(step.context).sort()) {
      const ref = step.context[input];
      const from = typeof ref === "string" ? ref.slice(0, Math.max(ref.indexOf("."), 0)) : "";
      if (groupOf.get(from) === group)
        invalid(
          `steps.${id}.context.${input} cannot depend on another branch in the same fanout group.`,
        );
    }
  }
}

/** Runs upstream's graph checks over a parsed graph document; throws UpstreamValidationError. */
export function precheckGraph(document: JsonObject): void {
  for (const key of ["sync", "schedule", "schedules"])
    if (key in document) invalid(`${key} is not supported by the local sequential graph runner.`);
  requiredString(document.name, "name");
  optionalString(document.owner, "owner");
  optionalString(document.charter_from, "charter_from");
  const steps = nonEmptyArray(document.steps, "steps");
  const groups = checkFanout(document.fanout);
  checkPolicy(document.policy);
  const seen = new Set<string>();
  const checked = steps.map((step, index): CheckedStep => {
    const field = `steps.${index}`;
    if (!isJsonObject(step)) return invalid(`${field} must be an object.`);
    const id = checkStep(step, field, seen);
    seen.add(id);
    return { id, step };
  });
  checkFanoutBindings(checked, groups);
}
