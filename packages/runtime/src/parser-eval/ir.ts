/**
 * Upstream's parser IR normal form (the `expected.validated` shape of the conformance parser
 * fixtures): camelCase typed fields beside the raw documents. This module only maps values our
 * real parser already validated (graph/document.ts, parser/execution-profile.ts,
 * parser/package.ts); it decides nothing about validity. Pure.
 */
import type { FanoutGroup, GraphDoc, GraphGuard, GraphStep } from "../graph/document.js";
import type { ExecutionProfile } from "../parser/execution-profile.js";
import type { InputDeclaration } from "../parser/input-declarations.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { SkillPackage } from "../parser/package.js";
import type { RetryPolicy, RunnerDefinition } from "../parser/runner-types.js";
import { SOURCE_FIELDS } from "../parser/runners.js";
import { artifactContract } from "./artifact-contract.js";

/** Copies the defined entries of `fields` onto `target` (undefined means "omit the key"). */
function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

const str = (value: JsonValue | undefined): string | undefined =>
  typeof value === "string" ? value : undefined;
const obj = (value: JsonValue | undefined): JsonObject | undefined =>
  isJsonObject(value) ? value : undefined;
const strings = (value: JsonValue | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

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

function inputIr(input: InputDeclaration): JsonObject {
  return put(
    { type: input.type, required: input.required },
    { description: input.description, default: input.default, packet: input.packet },
  );
}

function inputsIr(inputs: Record<string, InputDeclaration>): JsonObject {
  const out: JsonObject = {};
  for (const name of Object.keys(inputs).sort()) {
    const input = inputs[name];
    if (input !== undefined) out[name] = inputIr(input);
  }
  return out;
}

/** The source fields of a runner as written: its `source:` mapping, else the flattened fields. */
export function rawSourceOf(rawRunner: JsonObject): JsonObject {
  const nested = obj(rawRunner.source);
  if (nested !== undefined) return nested;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(rawRunner))
    if (SOURCE_FIELDS.has(key)) out[key] = value;
  return out;
}

function environmentIr(value: JsonValue | undefined): JsonValue | undefined {
  const env = obj(value);
  if (env === undefined) return undefined;
  const required = strings(env.required);
  const optional = strings(env.optional);
  if (required.length === 0 && optional.length === 0) return undefined;
  return put(
    {},
    {
      required: required.length > 0 ? required : undefined,
      optional: optional.length > 0 ? optional : undefined,
    },
  );
}

/**
 * A skill source (`SkillSource`): typed camelCase fields from the validated runner, `raw` as
 * written. `graph` is the already-normalised graph of a graph runner.
 */
export function sourceIr(
  runner: RunnerDefinition,
  raw: JsonObject,
  graph?: JsonObject,
): JsonObject {
  return sourceFieldsIr(runner.type, runner.source, raw, graph);
}

/** The typed fields of a validated source of kind `type` (`source`), `raw` as written. */
export function sourceFieldsIr(
  type: string,
  source: JsonObject,
  raw: JsonObject,
  graph?: JsonObject,
): JsonObject {
  const server = obj(source.server);
  return put(
    { type, args: strings(source.args), raw },
    {
      command: str(source.command),
      module: str(source.module),
      export: str(source.export),
      pages: source.pages,
      cwd: str(source.cwd),
      timeoutSeconds:
        typeof source.timeout_seconds === "number" ? source.timeout_seconds : undefined,
      inputMode: str(source.input_mode),
      environment: environmentIr(source.environment),
      server:
        server === undefined
          ? undefined
          : put(
              { command: str(server.command) ?? "", args: strings(server.args) },
              {
                cwd: str(server.cwd),
              },
            ),
      catalogRef: str(source.catalog_ref),
      tool: str(source.tool),
      arguments: obj(source.arguments),
      agentCardUrl: str(source.agent_card_url),
      agentIdentity: str(source.agent_identity),
      agent: str(source.agent),
      task: str(source.task),
      hook: str(source.hook),
      outputs: obj(source.outputs),
      graph,
      externalAdapter: source.external_adapter,
      threadOutboxProvider: source.thread_outbox_provider,
      act: obj(source.act),
    },
  );
}

/** Governance fields shared by runners and skills, in IR spelling. */
function governanceIr(fields: {
  auth?: JsonValue;
  risk?: JsonValue;
  runtime?: JsonValue;
  retry?: RetryPolicy;
  idempotency?: { key: string };
  mutating?: boolean;
  artifacts?: JsonObject;
  execution?: JsonObject;
  runx?: JsonObject;
}): Record<string, JsonValue | undefined> {
  return {
    auth: fields.auth,
    risk: fields.risk,
    runtime: fields.runtime,
    // Upstream's skill retry policy carries only the attempt count.
    retry: fields.retry === undefined ? undefined : { maxAttempts: fields.retry.max_attempts },
    idempotency: fields.idempotency === undefined ? undefined : { ...fields.idempotency },
    mutating: fields.mutating,
    // The contract in upstream's form (`emits` a list, camelCase keys); omitted when empty.
    artifacts:
      fields.artifacts === undefined ? undefined : artifactContract(fields.artifacts, "artifacts"),
    execution: fields.execution,
    runx: fields.runx,
  };
}

/** One runner (`SkillRunnerDefinition`); `graph` as for {@link sourceIr}. */
export function runnerIr(
  runner: RunnerDefinition,
  raw: JsonObject,
  graph?: JsonObject,
): JsonObject {
  return put(
    {
      name: runner.name,
      default: runner.default,
      source: sourceIr(runner, rawSourceOf(raw), graph),
      inputs: inputsIr(runner.inputs),
      scopes: runner.scopes,
      raw,
    },
    {
      credential: runner.credential,
      allowedTools: runner.allowed_tools,
      ...governanceIr(runner),
    },
  );
}

/** Catalog metadata with upstream's default visibility. */
function catalogIr(catalog: JsonObject | undefined): JsonObject | undefined {
  if (catalog === undefined) return undefined;
  return { visibility: "public", ...catalog };
}

/** A runner manifest (`SkillRunnerManifest`); `graphs` holds each graph runner's graph IR. */
export function runnerManifestIr(
  profile: ExecutionProfile,
  text: string,
  graphs: Record<string, JsonObject>,
): JsonObject {
  const rawRunners = obj(profile.raw.runners) ?? {};
  const runners: JsonObject = {};
  for (const name of Object.keys(profile.runners).sort()) {
    const runner = profile.runners[name];
    if (runner === undefined) continue;
    runners[name] = runnerIr(runner, obj(rawRunners[name]) ?? {}, graphs[name]);
  }
  const credentials: JsonObject = {};
  for (const name of Object.keys(profile.credentials).sort()) {
    const value = profile.credentials[name];
    if (value !== undefined) credentials[name] = value;
  }
  return put(
    { credentials, runners, raw: { document: profile.raw, raw: text } },
    {
      skill: profile.skill,
      version: profile.version,
      runx: profile.runx,
      policy: profile.raw.policy,
      emits: profile.emits,
      catalog: catalogIr(profile.catalog),
      harness: profile.raw.harness,
    },
  );
}

/** Raw SKILL.md parts as upstream keeps them beside the validated skill. */
export interface RawSkillParts {
  frontmatter: JsonObject;
  rawFrontmatter: string;
  body: string;
}

/**
 * A SKILL.md-only package (`ValidatedSkill`): its implicit runner supplies `source`; `graph` is
 * the normalised graph IR of a graph source.
 */
export function skillIr(pkg: SkillPackage, raw: RawSkillParts, graph?: JsonObject): JsonObject {
  const runner = Object.values(pkg.runners)[0];
  const rawSource = obj(pkg.frontmatter.source) ?? { type: "agent" };
  const runx = obj(pkg.frontmatter.runx);
  const runxCategory = str(runx?.category)?.trim();
  return put(
    {
      name: pkg.name,
      body: pkg.body,
      inputs: inputsIr(pkg.inputs),
      allowedTools: pkg.settings.allowed_tools ?? null,
      raw: { frontmatter: raw.frontmatter, rawFrontmatter: raw.rawFrontmatter, body: raw.body },
    },
    {
      description: pkg.description,
      category: pkg.category,
      runxCategory: runxCategory === "" ? undefined : runxCategory,
      source: runner === undefined ? undefined : sourceIr(runner, rawSource, graph),
      ...governanceIr(pkg.settings),
    },
  );
}
