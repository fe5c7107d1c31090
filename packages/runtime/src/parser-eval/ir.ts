/**
 * Upstream's graph IR normal form (`ExecutionGraph`): camelCase typed fields beside the raw
 * document. This module only maps a graph our real normaliser (graph/document.ts) already
 * accepted after graph-precheck.ts; it decides nothing about validity. Pure.
 */
import type { FanoutGroup, GraphDoc, GraphGuard, GraphStep } from "../graph/document.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { RetryPolicy } from "../parser/runner-types.js";

/** Copies the defined entries of `fields` onto `target` (undefined means "omit the key"). */
function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

const str = (value: JsonValue | undefined): string | undefined =>
  typeof value === "string" ? value : undefined;
const obj = (value: JsonValue | undefined): JsonObject | undefined =>
  isJsonObject(value) ? value : undefined;

function graphRetry(retry: RetryPolicy | undefined): JsonObject | undefined {
  if (retry === undefined) return undefined;
  return put({ maxAttempts: retry.max_attempts }, { backoffMs: retry.backoff_ms });
}

function conditionFields(condition: {
  equals?: JsonValue;
  not_equals?: JsonValue;
}): Record<string, JsonValue | undefined> {
  return { equals: condition.equals, notEquals: condition.not_equals };
}

function guardIr(guard: GraphGuard): JsonObject {
  return put({ step: guard.step, field: guard.field.ref }, conditionFields(guard));
}

function fanoutGroupIr(group: FanoutGroup): JsonObject {
  return put(
    {
      groupId: group.id,
      strategy: group.strategy,
      onBranchFailure: group.on_branch_failure,
      thresholdGates: group.threshold_gates.map((g) => ({
        step: g.step,
        field: g.field,
        above: g.above,
        action: g.action,
      })),
      conflictGates: group.conflict_gates.map((g) => ({
        field: g.field,
        steps: g.steps ?? [],
        action: g.action,
      })),
    },
    { minSuccess: group.min_success },
  );
}

function stepIr(step: GraphStep, raw: JsonObject): JsonObject {
  const context: JsonObject = {};
  const edges: JsonObject[] = [];
  for (const name of Object.keys(step.context).sort()) {
    const ref = step.context[name];
    if (ref === undefined) continue;
    context[name] = ref.ref;
    edges.push({ input: name, fromStep: ref.step, output: ref.path.join(".") });
  }
  const out: JsonObject = {
    id: step.id,
    inputs: step.inputs,
    context,
    contextEdges: edges,
    scopes: step.scopes,
    mutating: step.mutating,
  };
  const mint = obj(raw.mint_authority);
  put(out, {
    label: step.label,
    // Inline sources are reported as written (the parser only normalised `type`).
    run: step.kind === "run" ? (obj(raw.run) ?? step.run) : undefined,
    skill: step.kind === "skill" ? step.skill : undefined,
    runner: step.kind === "skill" ? step.runner : undefined,
    tool: step.kind === "tool" ? step.tool : undefined,
    artifacts: step.artifacts,
    contextSkills:
      step.context_skills !== undefined && step.context_skills.length > 0
        ? step.context_skills
        : undefined,
    allowedTools: step.allowed_tools,
    retry: graphRetry(step.retry),
    policy: step.policy,
    fanoutGroup: step.fanout_group,
    when:
      step.when === undefined
        ? undefined
        : put({ field: step.when.field.ref }, conditionFields(step.when)),
    idempotencyKey: step.idempotency_key,
    mintAuthority: mint === undefined ? undefined : put({}, { source: mint.source }),
    requestedScopeFrom: str(raw.requested_scope_from),
  });
  return out;
}

/** A graph (`ExecutionGraph`): `raw` is the document as parsed. */
export function graphIr(doc: GraphDoc, raw: JsonObject): JsonObject {
  const rawSteps = Array.isArray(raw.steps) ? raw.steps : [];
  const fanoutGroups: JsonObject = {};
  for (const id of Object.keys(doc.fanout).sort()) {
    const group = doc.fanout[id];
    if (group !== undefined) fanoutGroups[id] = fanoutGroupIr(group);
  }
  const policy = obj(raw.policy);
  return put(
    {
      name: doc.name,
      // Upstream keeps `result_from` as declared; our parser's default (last step) is ours.
      resultFrom: doc.result_from_defaulted ? [] : doc.result_from,
      steps: doc.steps.map((step, i) => stepIr(step, obj(rawSteps[i]) ?? {})),
      fanoutGroups,
      raw: { document: raw },
    },
    {
      owner: doc.owner,
      charterFrom: str(raw.charter_from),
      policy:
        policy === undefined
          ? undefined
          : { guards: doc.guards.filter((g) => g.step !== "").map(guardIr) },
    },
  );
}
