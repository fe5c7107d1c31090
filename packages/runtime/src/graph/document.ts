/**
 * Graph documents (spec §2.2–§2.3): normalizes a graph runner's `graph:` value or a standalone
 * graph file (TS-era dialect: top-level `name`/`steps`, `policy.transitions`, implicit result)
 * into a typed, validated `GraphDoc`. Pure: values in, values out.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { GraphRunner, RetryPolicy } from "../parser/runner-types.js";
import { checkGraph } from "./document-checks.js";
import {
  contextOf,
  groupOf,
  guardsOf,
  object,
  retryOf,
  strings,
  text,
  whenOf,
} from "./document-fields.js";
import { invalid, withStepId } from "./paths.js";
import type { KeyPath } from "./paths.js";
import type { StepRef } from "./references.js";

export type { StepRef } from "./references.js";

/** A `when:` condition or a policy guard comparison: `<step>.<path>` compared to a JSON value. */
export interface FieldCondition {
  field: StepRef;
  equals?: JsonValue;
  not_equals?: JsonValue;
}

/** A policy guard (`policy.guards[]`, TS-era `policy.transitions[]` with `to`). */
export interface GraphGuard extends FieldCondition {
  step: string;
  /** The author's words for why the step is blocked when the condition fails (optional). */
  reason?: string;
}

/** A fanout threshold gate: a numeric branch output above `above` fires `action`. */
export interface ThresholdGate {
  step: string;
  field: string;
  above: number;
  action: "pause" | "escalate";
}

/** A fanout conflict gate: distinct values of `field` across branches fire `action`. */
export interface ConflictGate {
  field: string;
  steps?: string[];
  action: "pause" | "escalate";
}

/** Fanout strategy; `threshold` is a runx-ts extension (quorum that pauses instead of halting). */
export type FanoutStrategy = "all" | "any" | "quorum" | "threshold";

/** A declared fanout group and its branch steps (contiguous, in declaration order). */
export interface FanoutGroup {
  id: string;
  strategy: FanoutStrategy;
  min_success?: number;
  on_branch_failure: "halt" | "continue";
  threshold_gates: ThresholdGate[];
  conflict_gates: ConflictGate[];
  steps: string[];
}

/**
 * What the runtime knows about a step from outside the graph document (the nested skill's
 * runner, the native tool catalog). Filled by `bindStepContracts`; absent means "unknown".
 */
export interface StepContract {
  /** Declared output keys (the semantic output contract). */
  outputs?: string[];
  /**
   * The outputs are a native tool's fixed named output (e.g. `http_execution`), not a
   * contract the graph or a nested skill declared; see `sharesResultKey`.
   */
  tool_output?: boolean;
  mutating?: boolean;
  retry?: RetryPolicy;
  idempotency_key?: string;
}

/** Fields every step has, whatever executes it. */
export interface GraphStepCommon {
  id: string;
  /** Position in `steps` (0-based). */
  index: number;
  label?: string;
  inputs: JsonObject;
  /** Context edges: input name → reference to an earlier step's structured output. */
  context: Record<string, StepRef>;
  scopes: string[];
  policy?: JsonObject;
  retry?: RetryPolicy;
  idempotency_key?: string;
  /** The step itself declares `mutation: true` (TS-era also `mutating: true`). */
  mutating: boolean;
  fanout_group?: string;
  when?: FieldCondition;
  artifacts?: JsonObject;
  outputs?: JsonObject;
  allowed_tools?: string[];
  context_skills?: string[];
  instructions?: string;
  /** Earlier steps whose success this step needs (context edges and `$steps.` references). */
  depends_on: string[];
  contract?: StepContract;
}

/** A step that calls a native or local tool. */
export interface ToolStep extends GraphStepCommon {
  kind: "tool";
  tool: string;
}

/** A step that runs a nested skill package (optionally a named runner). */
export interface SkillStep extends GraphStepCommon {
  kind: "skill";
  skill: string;
  runner?: string;
}

/** A step with an inline source (`run: {type, ...}`), including `run: {type: approval}`. */
export interface RunStep extends GraphStepCommon {
  kind: "run";
  run: JsonObject & { type: string };
}

/** One normalized graph step. */
export type GraphStep = ToolStep | SkillStep | RunStep;

/** A normalized, validated graph document. */
export interface GraphDoc {
  name: string;
  owner?: string;
  steps: GraphStep[];
  result_from: string[];
  /** True when `result_from` was absent (TS-era compat: the last step's output is the result). */
  result_from_defaulted: boolean;
  fanout: Record<string, FanoutGroup>;
  guards: GraphGuard[];
}

/** Options for {@link normalizeGraph}. */
export interface NormalizeGraphOptions {
  /** Runner-level `policy` (graph runners may declare `policy.guards` beside `graph:`). */
  policy?: JsonObject;
  /** Set when the parser already defaulted `result_from` (GraphRunner.result_from_defaulted). */
  resultFromDefaulted?: boolean;
  /** Key path of the graph in its document, for error locations (e.g. `runners.x.graph`). */
  path?: KeyPath;
  file?: string;
}

// `kind`, `version` and `description` appear on standalone graph files; `charter_from` is
// accepted and left to the authority layer.
const GRAPH_KEYS = new Set([
  "name",
  "owner",
  "charter_from",
  "result_from",
  "fanout",
  "policy",
  "steps",
  "kind",
  "version",
  "description",
]);
const STEP_KEYS = new Set([
  "id",
  "label",
  "skill",
  "tool",
  "run",
  "runner",
  "inputs",
  "context",
  "context_skills",
  "scopes",
  "allowed_tools",
  "retry",
  "policy",
  "mode",
  "fanout_group",
  "when",
  "mutation",
  "mutating",
  "idempotency_key",
  "instructions",
  "artifacts",
  "outputs",
  "mint_authority",
  "requested_scope_from",
]);
const UNSUPPORTED_GRAPH_KEYS = new Set(["sync", "schedule", "schedules"]);

function sourceOf(raw: JsonObject, at: KeyPath, id: string) {
  const declared = (["skill", "tool", "run"] as const).filter((k) => raw[k] !== undefined);
  if (declared.length !== 1)
    invalid(`step '${id}' must declare exactly one of skill, tool or run`, at);
  if (raw.runner !== undefined && raw.skill === undefined)
    invalid(`step '${id}': runner is only valid with skill`, [...at, "runner"]);
  if (raw.skill !== undefined) {
    const skill = text(raw.skill, [...at, "skill"], "skill") ?? "";
    const runner = text(raw.runner, [...at, "runner"], "runner");
    return runner === undefined
      ? { kind: "skill" as const, skill }
      : { kind: "skill" as const, skill, runner };
  }
  if (raw.tool !== undefined)
    return { kind: "tool" as const, tool: text(raw.tool, [...at, "tool"], "tool") ?? "" };
  const run = object(raw.run, [...at, "run"], "run");
  if (run === undefined || typeof run.type !== "string" || run.type === "")
    invalid(`step '${id}': run.type is required`, [...at, "run"]);
  const type = run.type === "agent-step" ? "agent-task" : run.type;
  return { kind: "run" as const, run: { ...run, type } };
}

function stepOf(raw: JsonValue, index: number, base: KeyPath): GraphStep {
  const at: KeyPath = [...base, "steps", index];
  if (!isJsonObject(raw)) invalid("every step must be a mapping", at);
  const id = raw.id;
  if (typeof id !== "string" || id === "") invalid("step id must be a non-empty string", at);
  return withStepId(id, () => stepFields(raw, id, index, at));
}

function stepFields(raw: JsonObject, id: string, index: number, at: KeyPath): GraphStep {
  if (!/^[A-Za-z0-9_-]+$/.test(id))
    invalid(`step id '${id}' may use only letters, digits, '-' and '_'`, [...at, "id"]);
  for (const key of Object.keys(raw)) {
    if (key === "sync" || key === "stage")
      invalid(`step '${id}': ${key} is not supported`, [...at, key]);
    if (!STEP_KEYS.has(key)) invalid(`step '${id}': unknown key "${key}"`, [...at, key]);
  }
  const mode = raw.mode ?? (raw.fanout_group !== undefined ? "fanout" : "sequential");
  if (mode !== "sequential" && mode !== "fanout")
    invalid(`step '${id}': mode must be sequential or fanout`, [...at, "mode"]);
  const group = text(raw.fanout_group, [...at, "fanout_group"], "fanout_group");
  if ((mode === "fanout") !== (group !== undefined))
    invalid(`step '${id}': mode fanout and fanout_group go together`, at);
  for (const flag of ["mutation", "mutating"])
    if (raw[flag] !== undefined && typeof raw[flag] !== "boolean")
      invalid(`step '${id}': ${flag} must be a boolean`, [...at, flag]);
  const step: GraphStepCommon = {
    id,
    index,
    inputs: object(raw.inputs, [...at, "inputs"], "inputs") ?? {},
    context: contextOf(raw.context, [...at, "context"]),
    scopes: strings(raw.scopes, [...at, "scopes"], "scopes") ?? [],
    mutating: raw.mutation === true || raw.mutating === true,
    depends_on: [],
  };
  const label = text(raw.label, [...at, "label"], "label");
  const policy = object(raw.policy, [...at, "policy"], "policy");
  const retry = retryOf(raw.retry, [...at, "retry"]);
  const key = text(raw.idempotency_key, [...at, "idempotency_key"], "idempotency_key");
  const when = whenOf(raw.when, [...at, "when"]);
  const artifacts = object(raw.artifacts, [...at, "artifacts"], "artifacts");
  const outputs = object(raw.outputs, [...at, "outputs"], "outputs");
  const tools = strings(raw.allowed_tools, [...at, "allowed_tools"], "allowed_tools");
  const skills = strings(raw.context_skills, [...at, "context_skills"], "context_skills");
  const instructions = text(raw.instructions, [...at, "instructions"], "instructions");
  if (label !== undefined) step.label = label;
  if (policy !== undefined) step.policy = policy;
  if (retry !== undefined) step.retry = retry;
  if (key !== undefined) step.idempotency_key = key;
  if (group !== undefined) step.fanout_group = group;
  if (when !== undefined) step.when = when;
  if (artifacts !== undefined) step.artifacts = artifacts;
  if (outputs !== undefined) step.outputs = outputs;
  if (tools !== undefined) step.allowed_tools = tools;
  if (skills !== undefined) step.context_skills = skills;
  if (instructions !== undefined) step.instructions = instructions;
  return { ...step, ...sourceOf(raw, at, id) };
}

/** Normalizes and validates a graph value; throws GRAPH_INVALID naming the step and key path. */
export function normalizeGraph(value: JsonValue, options: NormalizeGraphOptions = {}): GraphDoc {
  const base = options.path ?? [];
  try {
    if (!isJsonObject(value)) invalid("a graph must be a mapping", base);
    for (const key of Object.keys(value)) {
      if (UNSUPPORTED_GRAPH_KEYS.has(key))
        invalid(`${key} is not supported by the local sequential graph runner`, [...base, key]);
      if (!GRAPH_KEYS.has(key)) invalid(`unknown graph key "${key}"`, [...base, key]);
    }
    const name = text(value.name, [...base, "name"], "graph name");
    if (name === undefined) invalid("a graph must declare a name", [...base, "name"]);
    const rawSteps = value.steps;
    if (!Array.isArray(rawSteps) || rawSteps.length === 0)
      invalid("a graph must declare a non-empty steps list", [...base, "steps"]);
    const steps = rawSteps.map((raw, i) => stepOf(raw, i, base));
    const declared = strings(value.result_from, [...base, "result_from"], "result_from");
    const defaulted = declared === undefined || options.resultFromDefaulted === true;
    const lastId = steps[steps.length - 1]?.id ?? "";
    const fanoutRaw = object(value.fanout, [...base, "fanout"], "fanout");
    const groupsRaw =
      object(fanoutRaw?.groups, [...base, "fanout", "groups"], "fanout.groups") ?? {};
    const fanout: Record<string, FanoutGroup> = {};
    for (const [id, raw] of Object.entries(groupsRaw))
      fanout[id] = groupOf(id, raw, [...base, "fanout", "groups", id]);
    const graphPolicy = object(value.policy, [...base, "policy"], "policy");
    const doc: GraphDoc = {
      name,
      steps,
      result_from: declared ?? [lastId],
      result_from_defaulted: defaulted,
      fanout,
      guards: [
        ...guardsOf(graphPolicy, [...base, "policy"]),
        ...guardsOf(options.policy, [...base.slice(0, -1), "policy"]),
      ],
    };
    const owner = text(value.owner, [...base, "owner"], "owner");
    if (owner !== undefined) doc.owner = owner;
    checkGraph(doc, base);
    return doc;
  } catch (error) {
    if (error instanceof RuntimeError && options.file !== undefined)
      error.details.file = options.file;
    throw error;
  }
}

/** Normalizes the graph of a parsed graph runner (runner-level `policy.guards` included). */
export function graphFromRunner(runner: GraphRunner, path: KeyPath = []): GraphDoc {
  const options: NormalizeGraphOptions = {
    resultFromDefaulted: runner.result_from_defaulted,
    path: [...path, "graph"],
  };
  if (runner.policy !== undefined) options.policy = runner.policy;
  return normalizeGraph(runner.graph, options);
}

/** The step with this id; throws GRAPH_INVALID when the document has none. */
export function stepById(doc: GraphDoc, id: string): GraphStep {
  const step = doc.steps.find((s) => s.id === id);
  if (step === undefined)
    throw new RuntimeError("GRAPH_INVALID", `graph has no step '${id}'`, { step_id: id });
  return step;
}
