/**
 * Upstream's graph (`ExecutionGraph`): top-level fields, fanout groups, the policy's guards,
 * each step (its one target, inline sources, context edges to earlier steps, inputs, scopes,
 * authority minting, outputs, retry, condition), the fanout bindings and the declared result
 * producers, checked in upstream's order with its sentences and answered in its normal form
 * (camelCase typed fields beside `raw.document`). Field names are relative to the graph
 * document (`steps.0.id`), as upstream reports them for nested graphs too. The policy and
 * fan-out rules are parser-eval/graph-policy.ts; the shared field readers
 * parser-eval/graph-fields.ts. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { artifactContract } from "./artifact-contract.js";
import {
  invalid,
  optionalBool,
  optionalNonEmptyString,
  optionalObject,
  optionalString,
  optionalStringArray,
  put,
  requiredString,
  UpstreamValidationError,
} from "./fields.js";
import {
  condition,
  nonNegativeInteger,
  optionalNumber,
  positiveInteger,
  requiredArray,
  requiredObject,
  str,
} from "./graph-fields.js";
import { fanoutBindings, fanoutGroups, graphPolicy } from "./graph-policy.js";
import { toolRefProblem } from "./governance.js";
import { outputContract } from "./output-contract.js";

/**
 * The skill-source validator for a step's inline `run:` (source.ts's, passed in: a graph
 * source's graph is checked by this module, so the two cannot import each other).
 */
export type InlineSourceValidator = (source: JsonObject) => JsonObject;

/** A graph's inline `run:` target: the approval control, or an agent-task / cli / js source. */
function runTarget(
  raw: JsonObject,
  field: string,
  validateSource: InlineSourceValidator,
): { ir: JsonObject; type: string } {
  if (raw.type === "approval") {
    const extra = Object.keys(raw)
      .sort()
      .filter((key) => key !== "type");
    if (extra.length === 0) return { ir: { type: "approval" }, type: "approval" };
    invalid(`${field} approval control accepts only type; unsupported fields: ${extra.join(", ")}`);
  }
  let source: JsonObject;
  try {
    source = validateSource(raw);
  } catch (error) {
    if (!(error instanceof UpstreamValidationError)) throw error;
    return invalid(`${field} is not a valid inline source: ${error.message}`);
  }
  const type = typeof source.type === "string" ? source.type : "";
  if (type !== "agent-task" && type !== "cli-tool" && type !== "javascript")
    invalid(
      `${field}.type '${type}' is not an inline graph source; use a skill or tool target for supervised adapters`,
    );
  return { ir: raw, type };
}

/** `{{ name }}`: the retired input binding, answered with the name it should read. */
function legacyBinding(value: string): string | undefined {
  if (!value.startsWith("{{") || !value.endsWith("}}") || value.length < 4) return undefined;
  const name = value.slice(2, -2).trim();
  return name !== "" && /^[A-Za-z0-9_.]+$/.test(name) ? name : undefined;
}

function rejectLegacyBindings(value: JsonValue | undefined, field: string): void {
  if (typeof value === "string") {
    const name = legacyBinding(value);
    if (name !== undefined)
      invalid(
        `${field} uses retired graph input binding ${JSON.stringify(value)}; use "$input.${name}".`,
      );
  } else if (Array.isArray(value)) {
    value.forEach((entry, index) => rejectLegacyBindings(entry, `${field}.${index}`));
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value).sort())
      rejectLegacyBindings(value[key], `${field}.${key}`);
  }
}

function rejectStepOutputRefs(
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
    value.forEach((entry, index) => rejectStepOutputRefs(entry, previous, `${field}.${index}`));
  } else if (isJsonObject(value)) {
    for (const key of Object.keys(value).sort())
      rejectStepOutputRefs(value[key], previous, `${field}.${key}`);
  }
}

function stringObject(value: JsonValue | undefined, field: string): Record<string, string> {
  const record = optionalObject(value, field) ?? {};
  const out: Record<string, string> = {};
  for (const key of Object.keys(record).sort()) {
    const entry = record[key];
    if (typeof entry !== "string") return invalid(`${field}.${key} must be a string.`);
    out[key] = entry;
  }
  return out;
}

function mintAuthority(
  value: JsonValue | undefined,
  field: string,
  charter: boolean,
  scopes: string[],
  requestedScopeFrom: string | undefined,
): JsonObject | undefined {
  const record = optionalObject(value, `${field}.mint_authority`);
  if (record === undefined) {
    if (requestedScopeFrom !== undefined)
      invalid(`${field}.requested_scope_from is only valid with a mint_authority directive.`);
    return undefined;
  }
  if (!charter) invalid(`${field}.mint_authority requires the graph to declare charter_from.`);
  const at = `${field}.mint_authority.source`;
  const source = requiredString(record.source, at);
  if (source !== "static_scopes" && source !== "requested_scope")
    invalid(`${at} '${source}' must be static_scopes or requested_scope.`);
  if (source === "static_scopes") {
    if (scopes.length === 0)
      invalid(`${field}.mint_authority source static_scopes requires a non-empty scopes list.`);
    if (requestedScopeFrom !== undefined)
      invalid(
        `${field}.mint_authority source static_scopes must not declare requested_scope_from.`,
      );
  } else {
    if (requestedScopeFrom === undefined)
      invalid(`${field}.mint_authority source requested_scope requires requested_scope_from.`);
    if (scopes.length > 0)
      invalid(
        `${field}.mint_authority source requested_scope must not declare a static scopes list.`,
      );
  }
  return { source };
}

function contextEdge(
  input: string,
  reference: string,
  previous: ReadonlySet<string>,
  field: string,
): JsonObject {
  const dot = reference.indexOf(".");
  if (dot <= 0 || dot === reference.length - 1)
    invalid(`${field} must use '<step-id>.<output-field>' syntax.`);
  const fromStep = reference.slice(0, dot);
  if (!previous.has(fromStep)) invalid(`${field} references unknown or later step '${fromStep}'.`);
  return { input, fromStep, output: reference.slice(dot + 1) };
}

function retry(value: JsonValue | undefined, field: string): JsonObject | undefined {
  const record = optionalObject(value, field);
  if (record === undefined) return undefined;
  const attempts = optionalNumber(record.max_attempts, `${field}.max_attempts`);
  const maxAttempts =
    attempts === undefined ? 1 : positiveInteger(attempts, `${field}.max_attempts`);
  const backoff = optionalNumber(record.backoff_ms, `${field}.backoff_ms`);
  return put(
    { maxAttempts },
    {
      backoffMs:
        backoff === undefined ? undefined : nonNegativeInteger(backoff, `${field}.backoff_ms`),
    },
  );
}

function when(value: JsonValue | undefined, field: string): JsonObject | undefined {
  const record = optionalObject(value, field);
  if (record === undefined) return undefined;
  const compare = condition(record, field);
  return put({ field: requiredString(record.field, `${field}.field`) }, compare);
}

function allowedTools(value: JsonValue | undefined, field: string): string[] | undefined {
  const tools = optionalStringArray(value, `${field}.allowed_tools`);
  for (const tool of tools ?? []) {
    const problem = toolRefProblem(tool);
    if (problem !== undefined)
      invalid(
        `${field}.allowed_tools entry ${JSON.stringify(tool)} is not an admissible agent tool ref: ${problem}.`,
      );
  }
  return tools;
}

/** One step (`GraphStep`). */
function step(
  raw: JsonObject,
  field: string,
  previous: ReadonlySet<string>,
  charter: boolean,
  validateSource: InlineSourceValidator,
) {
  if ("instructions" in raw)
    invalid(
      `${field}.instructions is not supported; put agent operating instructions in the owning SKILL.md`,
    );
  if ("effect_family" in raw)
    invalid(
      `${field}.effect_family is not supported; effect ownership is derived from the resolved target`,
    );
  for (const key of ["sync", "stage"])
    if (key in raw)
      invalid(`${field}.${key} is not supported by the local sequential graph runner.`);
  const mode = optionalString(raw.mode, `${field}.mode`);
  if (mode === "fanout" && typeof raw.fanout_group !== "string")
    invalid(`${field}.fanout_group is required when mode is fanout.`);
  if (mode !== undefined && mode !== "sequential" && mode !== "fanout")
    invalid(`${field}.mode '${mode}' is not supported by the local graph runner.`);
  if (["run", "skill", "tool"].filter((key) => key in raw).length > 1)
    invalid(`${field} must not declare more than one of run, skill, or tool.`);
  const id = requiredString(raw.id, `${field}.id`);
  if (previous.has(id)) invalid(`${field}.id '${id}' must be unique.`);
  const runRecord = optionalObject(raw.run, `${field}.run`);
  const run =
    runRecord === undefined ? undefined : runTarget(runRecord, `${field}.run`, validateSource);
  const skill = optionalNonEmptyString(raw.skill, `${field}.skill`);
  const tool = optionalNonEmptyString(raw.tool, `${field}.tool`);
  if ([skill, tool, run].filter((target) => target !== undefined).length !== 1)
    invalid(`${field} must declare exactly one of skill, tool, or run.`);
  if (tool !== undefined) {
    const problem = toolRefProblem(tool);
    if (problem !== undefined)
      invalid(
        `${field}.tool ${JSON.stringify(tool)} is not an admissible catalog tool ref: ${problem}.`,
      );
  }
  const runner = optionalNonEmptyString(raw.runner, `${field}.runner`);
  if ((run !== undefined || tool !== undefined) && runner !== undefined)
    invalid(`${field}.runner is only valid for nested skill steps.`);
  const context = stringObject(raw.context, `${field}.context`);
  const contextSkills = optionalStringArray(raw.context_skills, `${field}.context_skills`) ?? [];
  if (contextSkills.length > 0 && skill === undefined && run?.type !== "agent-task")
    invalid(`${field}.context_skills is only valid for agent-task steps or nested agent skills.`);
  const inputs = optionalObject(raw.inputs, `${field}.inputs`) ?? {};
  for (const key of Object.keys(inputs).sort())
    rejectLegacyBindings(inputs[key], `${field}.inputs.${key}`);
  for (const key of Object.keys(inputs).sort())
    rejectStepOutputRefs(inputs[key], previous, `${field}.inputs.${key}`);
  const collisions = Object.keys(inputs)
    .sort()
    .filter((key) => key in context);
  if (collisions.length > 0)
    invalid(
      `${field} binds the same input through both inputs and context: ${collisions.join(", ")}.`,
    );
  const scopes = optionalStringArray(raw.scopes, `${field}.scopes`) ?? [];
  if (scopes.some((scope) => scope.trim() === ""))
    invalid(`${field}.scopes must contain only non-empty scope strings.`);
  const requestedScopeFrom = optionalNonEmptyString(
    raw.requested_scope_from,
    `${field}.requested_scope_from`,
  );
  const mint = mintAuthority(raw.mint_authority, field, charter, scopes, requestedScopeFrom);
  const outputs = optionalObject(raw.outputs, `${field}.outputs`);
  if (outputs !== undefined) outputContract(outputs, `${field}.outputs is invalid: `);
  const label = optionalNonEmptyString(raw.label, `${field}.label`);
  const artifacts = artifactContract(raw.artifacts, `${field}.artifacts`);
  const contextEdges = Object.keys(context).map((input) =>
    contextEdge(input, context[input] ?? "", previous, `${field}.context.${input}`),
  );
  const tools = allowedTools(raw.allowed_tools, field);
  const retryPolicy = retry(raw.retry, `${field}.retry`);
  const policy = optionalObject(raw.policy, `${field}.policy`);
  const fanoutGroup = optionalString(raw.fanout_group, `${field}.fanout_group`);
  const condition = when(raw.when, `${field}.when`);
  const mutating = optionalBool(raw.mutation, `${field}.mutation`) ?? false;
  const idempotencyKey = optionalNonEmptyString(raw.idempotency_key, `${field}.idempotency_key`);
  return put(
    { id, inputs, context, contextEdges, scopes, mutating },
    {
      label,
      skill,
      tool,
      run: run?.ir,
      artifacts,
      outputs,
      runner,
      contextSkills: contextSkills.length > 0 ? contextSkills : undefined,
      allowedTools: tools,
      retry: retryPolicy,
      policy,
      fanoutGroup,
      when: condition,
      idempotencyKey,
      mintAuthority: mint,
      requestedScopeFrom,
    },
  );
}

/** Validates a graph document; throws UpstreamValidationError with upstream's sentence. */
export function validateGraph(
  document: JsonObject,
  validateSource: InlineSourceValidator,
): JsonObject {
  for (const key of ["sync", "schedule", "schedules"])
    if (key in document) invalid(`${key} is not supported by the local sequential graph runner.`);
  const name = requiredString(document.name, "name");
  const owner = optionalString(document.owner, "owner");
  const resultFrom = optionalStringArray(document.result_from, "result_from") ?? [];
  const charterFrom = optionalString(document.charter_from, "charter_from");
  const rawSteps = requiredArray(document.steps, "steps");
  const groups = fanoutGroups(document.fanout);
  const policy = graphPolicy(document.policy);
  const seen = new Set<string>();
  const steps = rawSteps.map((raw, index) => {
    const field = `steps.${index}`;
    const validated = step(
      requiredObject(raw, field),
      field,
      seen,
      charterFrom !== undefined,
      validateSource,
    );
    seen.add(str(validated.id));
    return validated;
  });
  fanoutBindings(steps, groups);
  const producers = new Set<string>();
  resultFrom.forEach((id, index) => {
    if (id.trim() === "") invalid(`result_from.${index} must not be empty.`);
    if (!seen.has(id)) invalid(`result_from.${index} references unknown step '${id}'.`);
    if (producers.has(id)) invalid(`result_from contains duplicate step '${id}'.`);
    producers.add(id);
  });
  return put(
    { name, resultFrom, steps, fanoutGroups: groups, raw: { document } },
    { owner, charterFrom, policy },
  );
}
