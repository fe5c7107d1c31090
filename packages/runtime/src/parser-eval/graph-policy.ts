/**
 * The coordination rules of upstream's graph document: the graph `policy` with its guards,
 * the `fanout.groups` (sync strategy, quorum, branch-failure handling, threshold and conflict
 * gates, structured fields only) and the bindings between groups and the steps that form
 * them, checked with upstream's sentences. The steps themselves are parser-eval/graph.ts. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalObject,
  optionalString,
  optionalStringArray,
  put,
  requiredString,
} from "./fields.js";
import {
  condition,
  optionalNumber,
  positiveInteger,
  requiredArray,
  requiredObject,
  str,
} from "./graph-fields.js";

/** The graph `policy`: only `guards`, each an `equals` / `not_equals` condition on a step field. */
export function graphPolicy(value: JsonValue | undefined): JsonObject | undefined {
  const policy = optionalObject(value, "policy");
  if (policy === undefined) return undefined;
  for (const key of Object.keys(policy).sort())
    if (key !== "guards") invalid(`policy has unknown field '${key}'; only 'guards' is supported.`);
  const guards = policy.guards;
  if (guards === undefined || guards === null) return undefined;
  return {
    guards: requiredArray(guards, "policy.guards").map((raw, index) => {
      const field = `policy.guards.${index}`;
      const gate = requiredObject(raw, field);
      const compare = condition(gate, field);
      return put(
        {
          step: requiredString(gate.step, `${field}.step`),
          field: requiredString(gate.field, `${field}.field`),
        },
        compare,
      );
    }),
  };
}

const GATE_UNSUPPORTED = ["contains", "matches", "semantic", "prompt", "sentiment"];

function gateList(value: JsonValue | undefined, field: string): JsonObject[] {
  if (value === undefined || value === null) return [];
  return requiredArray(value, field).map((raw, index) => {
    const at = `${field}.${index}`;
    const gate = requiredObject(raw, at);
    for (const key of GATE_UNSUPPORTED)
      if (key in gate)
        invalid(`${at}.${key} is not supported; graph policy must evaluate structured fields.`);
    return gate;
  });
}

function gateAction(value: JsonValue | undefined, field: string): string {
  const action = optionalString(value, field);
  if (action !== "pause" && action !== "escalate")
    return invalid(`${field} must be pause or escalate.`);
  return action;
}

function choice(value: JsonValue | undefined, field: string, allowed: string[], words: string) {
  const text = optionalString(value, field);
  if (text !== undefined && !allowed.includes(text)) invalid(`${field} must be ${words}.`);
  return text;
}

/** The `fanout.groups` map: strategy, min_success, on_branch_failure, threshold and conflict gates. */
export function fanoutGroups(value: JsonValue | undefined): JsonObject {
  const fanout = optionalObject(value, "fanout");
  const out: JsonObject = {};
  if (fanout === undefined) return out;
  const groups = requiredObject(fanout.groups, "fanout.groups");
  for (const id of Object.keys(groups).sort()) {
    const at = `fanout.groups.${id}`;
    const group = requiredObject(groups[id], at);
    const strategy =
      choice(group.strategy, `${at}.strategy`, ["all", "any", "quorum"], "all, any, or quorum") ??
      "all";
    const min = optionalNumber(group.min_success, `${at}.min_success`);
    const minSuccess = min === undefined ? undefined : positiveInteger(min, `${at}.min_success`);
    if (strategy === "quorum" && minSuccess === undefined)
      invalid(`${at}.min_success must be a positive integer for quorum sync.`);
    const onBranchFailure =
      choice(
        group.on_branch_failure,
        `${at}.on_branch_failure`,
        ["halt", "continue"],
        "halt or continue",
      ) ?? (strategy === "all" ? "halt" : "continue");
    const thresholdGates = gateList(group.threshold_gates, `${at}.threshold_gates`).map(
      (gate, index) => {
        const gateAt = `${at}.threshold_gates.${index}`;
        const step = requiredString(gate.step, `${gateAt}.step`);
        const field = requiredString(gate.field, `${gateAt}.field`);
        const above = optionalNumber(gate.above, `${gateAt}.above`);
        if (above === undefined) return invalid(`${gateAt}.above is required.`);
        return {
          step,
          field,
          above,
          action: gateAction(gate.action, `${gateAt}.action`),
        };
      },
    );
    const conflictGates = gateList(group.conflict_gates, `${at}.conflict_gates`).map(
      (gate, index) => {
        const gateAt = `${at}.conflict_gates.${index}`;
        return {
          field: requiredString(gate.field, `${gateAt}.field`),
          steps: optionalStringArray(gate.steps, `${gateAt}.steps`) ?? [],
          action: gateAction(gate.action, `${gateAt}.action`),
        };
      },
    );
    out[id] = put(
      { groupId: id, strategy, onBranchFailure, thresholdGates, conflictGates },
      { minSuccess },
    );
  }
  return out;
}

/** Each fan-out group used by contiguous steps, its gates naming its own branches, no edge between branches. */
export function fanoutBindings(steps: JsonObject[], groups: JsonObject): void {
  const groupOf = new Map<string, string>();
  const members = new Map<string, string[]>();
  for (const s of steps) {
    const group = s.fanoutGroup;
    if (typeof group !== "string") continue;
    const id = str(s.id);
    if (!(group in groups))
      invalid(`steps.${id}.fanout_group references unknown fanout group '${group}'.`);
    groupOf.set(id, group);
    members.set(group, [...(members.get(group) ?? []), id]);
  }
  for (const group of Object.keys(groups).sort()) {
    const ids = members.get(group) ?? [];
    if (ids.length === 0) invalid(`fanout.groups.${group} is not used by any graph step.`);
    const indexes = steps.flatMap((s, index) => (ids.includes(str(s.id)) ? [index] : []));
    for (let i = Math.min(...indexes); i <= Math.max(...indexes); i++)
      if (steps[i]?.fanoutGroup !== group)
        invalid(`fanout group '${group}' steps must be contiguous.`);
    const policy = groups[group] as JsonObject;
    if (typeof policy.minSuccess === "number" && policy.minSuccess > ids.length)
      invalid(`fanout.groups.${group}.min_success cannot exceed the number of branches.`);
    for (const gate of policy.thresholdGates as JsonObject[])
      if (!ids.includes(str(gate.step)))
        invalid(
          `fanout.groups.${group}.threshold_gates step '${str(gate.step)}' is not in the fanout group.`,
        );
    for (const gate of policy.conflictGates as JsonObject[])
      for (const member of (gate.steps as JsonValue[]).map(str))
        if (!ids.includes(member))
          invalid(
            `fanout.groups.${group}.conflict_gates step '${member}' is not in the fanout group.`,
          );
  }
  for (const s of steps) {
    const group = typeof s.fanoutGroup === "string" ? s.fanoutGroup : undefined;
    if (group === undefined) continue;
    for (const edge of s.contextEdges as JsonObject[])
      if (groupOf.get(str(edge.fromStep)) === group)
        invalid(
          `steps.${str(s.id)}.context.${str(edge.input)} cannot depend on another branch in the same fanout group.`,
        );
  }
}
