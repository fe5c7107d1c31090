/**
 * Runner normalization: turns a flattened or `source:`-nested runner into a
 * typed RunnerDefinition, enforcing the per-type rules that a JSON Schema cannot express.
 */
import {
  CLI_TOOL_TIMEOUT_RANGE,
  JAVASCRIPT_TIMEOUT_RANGE,
  timeoutProblem,
} from "./runner-limits.js";
import { isJsonObject } from "./json.js";
import type { JsonObject, JsonValue } from "./json.js";
import { normalizeInputDeclarations, valueMatchesType } from "./input-declarations.js";
import type { FailAt, InputDeclaration } from "./input-declarations.js";
import type {
  AgentTaskRunner,
  CliToolRunner,
  GraphDocument,
  IdempotencyDeclaration,
  JavascriptRunner,
  OutputDeclaration,
  RetryPolicy,
  RunnerCommon,
  RunnerDefinition,
  RunnerEnvironment,
  RunnerType,
} from "./runner-types.js";
import type { PathSegment } from "./strict-yaml.js";

export type * from "./runner-types.js";

/** Fields that describe the execution source; they may sit on the runner or under `source:`. */
export const SOURCE_FIELDS: ReadonlySet<string> = new Set([
  "type",
  "command",
  "args",
  "cwd",
  "input_mode",
  "timeout_seconds",
  "environment",
  "env",
  "module",
  "export",
  "pages",
  "graph",
  "agent",
  "task",
  "context_skills",
  "server",
  "tool",
  "arguments",
  "agent_card_url",
  "agent_identity",
  "catalog_ref",
  "hook",
  "url",
  "method",
  "headers",
  "http",
  "allow_private_network",
  "external_adapter",
  "thread_outbox_provider",
  "act",
  "adapter",
]);

const REQUIRED_BY_TYPE: Readonly<Record<RunnerType, readonly string[]>> = {
  "cli-tool": ["command"],
  javascript: ["module"],
  agent: [],
  "agent-task": ["agent", "task"],
  approval: [],
  graph: ["graph"],
  mcp: ["server", "tool"],
  a2a: ["agent_card_url", "task"],
  catalog: ["catalog_ref"],
  "harness-hook": ["hook"],
  http: ["url"],
  "external-adapter": ["external_adapter"],
  "thread-outbox-provider": ["thread_outbox_provider"],
  adapter: ["adapter"],
};

const strings = (value: JsonValue | undefined): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
const str = (value: JsonValue | undefined): string | undefined =>
  typeof value === "string" ? value : undefined;
const obj = (value: JsonValue | undefined): JsonObject | undefined =>
  isJsonObject(value) ? value : undefined;

function environmentOf(value: JsonValue | undefined): RunnerEnvironment {
  const env = obj(value);
  return { required: strings(env?.required), optional: strings(env?.optional) };
}

function outputsOf(value: JsonValue | undefined): Record<string, OutputDeclaration> | undefined {
  const raw = obj(value);
  if (raw === undefined) return undefined;
  const out: Record<string, OutputDeclaration> = {};
  for (const [name, decl] of Object.entries(raw)) {
    const spec = obj(decl);
    if (typeof decl === "string" || spec === undefined) {
      out[name] = { type: str(decl) };
      continue;
    }
    const output: OutputDeclaration = {};
    if (typeof spec.type === "string") output.type = spec.type;
    if (typeof spec.description === "string") output.description = spec.description;
    if (typeof spec.required === "boolean") output.required = spec.required;
    if (typeof spec.wrap_as === "string") output.wrap_as = spec.wrap_as;
    if (Array.isArray(spec.enum)) output.enum = spec.enum;
    if (isJsonObject(spec.schema)) output.schema = spec.schema;
    out[name] = output;
  }
  return out;
}

/** Normalizes `retry: {max_attempts, backoff_ms?}` (also used for SKILL.md frontmatter). */
export function retryOf(value: JsonValue | undefined): RetryPolicy | undefined {
  const raw = obj(value);
  if (raw === undefined || typeof raw.max_attempts !== "number") return undefined;
  return typeof raw.backoff_ms === "number"
    ? { max_attempts: raw.max_attempts, backoff_ms: raw.backoff_ms }
    : { max_attempts: raw.max_attempts };
}

/** Normalizes `idempotency: "key"` or `{key}` to `{key}`. */
export function idempotencyOf(value: JsonValue | undefined): IdempotencyDeclaration | undefined {
  if (typeof value === "string") return { key: value };
  const key = obj(value)?.key;
  return typeof key === "string" ? { key } : undefined;
}

/** Context for {@link normalizeRunner}. */
export interface NormalizeRunnerOptions {
  /** Key path of the runner in its document (for error positions). */
  path: readonly PathSegment[];
  fail: FailAt;
  definitions?: JsonObject;
  implicit?: boolean;
}

function splitSource(raw: JsonObject, path: readonly PathSegment[], fail: FailAt): JsonObject {
  const nested = obj(raw.source);
  const flattened: JsonObject = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!SOURCE_FIELDS.has(key)) continue;
    if (nested !== undefined)
      fail([...path, key], `"${key}" is declared both on the runner and under source`);
    flattened[key] = value;
  }
  return { ...(nested ?? flattened) };
}

function checkModulePath(module: string, path: readonly PathSegment[], fail: FailAt): void {
  const segments = module.split(/[\\/]/);
  if (/^([a-zA-Z]:)?[\\/]/.test(module) || segments.includes("..")) {
    fail(path, "module must be a relative path inside the package");
  }
  if (!/\.(mjs|js)$/.test(module)) fail(path, "module must be a .mjs or .js file");
}

function graphOf(
  source: JsonObject,
  path: readonly PathSegment[],
  fail: FailAt,
): [GraphDocument, boolean] {
  const graph = obj(source.graph);
  const steps = graph?.steps;
  if (
    graph === undefined ||
    !Array.isArray(steps) ||
    steps.length === 0 ||
    !steps.every(isJsonObject)
  ) {
    fail(path, "graph must be a mapping with a non-empty steps list");
  }
  const ids = steps.map((step) => step.id).filter((id): id is string => typeof id === "string");
  let resultFrom = graph.result_from;
  const defaulted = resultFrom === undefined;
  // Compat: graphs without result_from return the last step's contract. Upstream
  // example packages in the conformance corpus rely on this.
  if (resultFrom === undefined) resultFrom = ids.slice(-1);
  if (!Array.isArray(resultFrom) || resultFrom.length === 0)
    fail([...path, "result_from"], "result_from must name at least one step");
  resultFrom.forEach((entry, index) => {
    if (typeof entry !== "string" || !ids.includes(entry))
      fail([...path, "result_from", index], "result_from must name a declared step");
  });
  return [
    { ...graph, name: str(graph.name) ?? "", steps, result_from: resultFrom as string[] },
    defaulted,
  ];
}

/**
 * A runner's `runx.post_run.reflect` names when a post-run reflection runs: auto, always or never.
 * Anything else is refused at load rather than silently treated as never.
 */
function checkReflectPolicy(runx: JsonValue | undefined, path: PathSegment[], fail: FailAt): void {
  if (runx === undefined || runx === null) return;
  if (!isJsonObject(runx)) fail(path, "runx must be a mapping");
  const postRun = runx.post_run;
  if (postRun === undefined || postRun === null) return;
  if (!isJsonObject(postRun)) fail([...path, "post_run"], "post_run must be a mapping");
  const reflect = postRun.reflect;
  if (reflect === undefined || reflect === null) return;
  if (reflect !== "auto" && reflect !== "always" && reflect !== "never")
    fail([...path, "post_run", "reflect"], "reflect must be auto, always or never");
}

/** Normalizes one runner definition found at `options.path`, enforcing the per-runner rules. */
export function normalizeRunner(
  name: string,
  raw: JsonObject,
  options: NormalizeRunnerOptions,
): RunnerDefinition {
  const path = options.path;
  const fail: FailAt = options.fail;
  if (raw.instructions !== undefined) {
    fail(
      [...path, "instructions"],
      "runner instructions are not allowed; put agent operating instructions in the owning SKILL.md",
    );
  }
  checkReflectPolicy(raw.runx, [...path, "runx"], fail);
  const source = splitSource(raw, path, fail);
  const sourcePath = raw.source !== undefined ? [...path, "source"] : path;
  const declared = source.type;
  if (typeof declared !== "string") fail(path, 'runner must declare "type"');
  const type = (declared === "agent-step" ? "agent-task" : declared) as RunnerType;
  source.type = type;
  const required = (REQUIRED_BY_TYPE as Partial<Record<string, readonly string[]>>)[type];
  if (required === undefined) fail([...sourcePath, "type"], "unknown runner type");
  for (const field of required) {
    if (source[field] === undefined)
      fail(sourcePath, `missing required field "${field}" for a ${type} runner`);
  }
  if (
    (type === "agent-task" || type === "harness-hook") &&
    (source.command !== undefined || source.args !== undefined)
  ) {
    fail(
      [...sourcePath, source.command !== undefined ? "command" : "args"],
      `a ${type} runner must not declare command or args`,
    );
  }
  if (type === "javascript" && raw.credential !== undefined) {
    fail([...path, "credential"], "credential is not allowed on a javascript runner");
  }
  if (type === "graph") {
    for (const field of ["artifacts", "environment", "outputs"]) {
      if (raw[field] !== undefined || source[field] !== undefined) {
        fail(
          [...(raw[field] !== undefined ? path : sourcePath), field],
          `a graph runner must not declare ${field}; declare it on the producing step`,
        );
      }
    }
  }

  const inputs = normalizeInputDeclarations(
    raw.inputs,
    [...path, "inputs"],
    fail,
    options.definitions,
  );
  const examples = Array.isArray(raw.examples) ? raw.examples.filter(isJsonObject) : [];
  examples.forEach((example, index) =>
    checkExample(example, inputs, [...path, "examples", index], fail),
  );

  const common: RunnerCommon = {
    name,
    default: raw.default === true,
    inputs,
    scopes: strings(raw.scopes),
    examples,
    source,
    implicit: options.implicit === true,
  };
  if (typeof raw.credential === "string") common.credential = raw.credential;
  const outputs = outputsOf(raw.outputs);
  if (outputs !== undefined) common.outputs = outputs;
  for (const key of ["artifacts", "execution", "runx", "policy"] as const) {
    const value = obj(raw[key]);
    if (value !== undefined) common[key] = value;
  }
  if (obj(source.act) !== undefined) common.act = obj(source.act);
  if (Array.isArray(raw.allowed_tools)) common.allowed_tools = strings(raw.allowed_tools);
  if (typeof raw.mutating === "boolean") common.mutating = raw.mutating;
  const retry = retryOf(raw.retry);
  if (retry !== undefined) common.retry = retry;
  const idempotency = idempotencyOf(raw.idempotency);
  if (idempotency !== undefined) common.idempotency = idempotency;
  for (const key of ["auth", "risk", "runtime"] as const)
    if (raw[key] !== undefined) common[key] = raw[key];

  const timeout = typeof source.timeout_seconds === "number" ? source.timeout_seconds : undefined;
  switch (type) {
    case "cli-tool": {
      const tooLong = timeoutProblem(source.timeout_seconds, CLI_TOOL_TIMEOUT_RANGE, type);
      if (tooLong !== undefined) fail([...sourcePath, "timeout_seconds"], tooLong);
      // execve takes C strings: a NUL byte would end the command early (or fail to spawn).
      if (typeof source.command === "string" && source.command.includes("\0")) {
        fail([...sourcePath, "command"], "command must not contain a NUL byte");
      }
      const runner: CliToolRunner = {
        ...common,
        type,
        command: str(source.command) ?? "",
        args: strings(source.args),
        input_mode: (str(source.input_mode) ?? "args") as CliToolRunner["input_mode"],
        environment: environmentOf(source.environment),
        env: Object.fromEntries(
          Object.entries(obj(source.env) ?? {}).filter(
            (e): e is [string, string] => typeof e[1] === "string",
          ),
        ),
      };
      if (typeof source.cwd === "string") runner.cwd = source.cwd;
      if (timeout !== undefined) runner.timeout_seconds = timeout;
      return runner;
    }
    case "javascript": {
      const module = str(source.module) ?? "";
      checkModulePath(module, [...sourcePath, "module"], fail);
      const tooLong = timeoutProblem(source.timeout_seconds, JAVASCRIPT_TIMEOUT_RANGE, type);
      if (tooLong !== undefined) fail([...sourcePath, "timeout_seconds"], tooLong);
      const runner: JavascriptRunner = {
        ...common,
        type,
        module,
        environment: environmentOf(source.environment),
      };
      if (typeof source.export === "string") runner.export = source.export;
      if (timeout !== undefined) runner.timeout_seconds = timeout;
      if (source.pages !== undefined) runner.pages = source.pages;
      return runner;
    }
    case "graph": {
      const [graph, defaulted] = graphOf(source, [...sourcePath, "graph"], fail);
      return { ...common, type, graph, result_from_defaulted: defaulted };
    }
    case "agent-task": {
      const runner: AgentTaskRunner = {
        ...common,
        type,
        agent: str(source.agent) ?? "",
        task: str(source.task) ?? "",
      };
      if (Array.isArray(source.context_skills))
        runner.context_skills = strings(source.context_skills);
      return runner;
    }
    case "agent":
    case "approval":
      return { ...common, type };
    case "adapter": {
      const block = obj(source.adapter);
      if (block === undefined) fail([...sourcePath, "adapter"], "adapter must be a mapping");
      return { ...common, type, adapter: block };
    }
    default:
      return { ...common, type };
  }
}

/** Checks one `examples[]` entry against the runner's declared inputs (names, required, types). */
function checkExample(
  example: JsonObject,
  inputs: Readonly<Record<string, InputDeclaration>>,
  path: readonly PathSegment[],
  fail: FailAt,
): void {
  const declared = Object.keys(inputs);
  for (const [key, value] of Object.entries(example)) {
    const input = inputs[key];
    if (input === undefined) {
      if (declared.length > 0) fail([...path, key], `example input "${key}" is not declared`);
      continue;
    }
    if (!valueMatchesType(value, input.type)) fail([...path, key], `must be ${input.type}`);
  }
  for (const input of Object.values(inputs)) {
    if (input.required && example[input.name] === undefined)
      fail(path, `example is missing required input "${input.name}"`);
  }
}
