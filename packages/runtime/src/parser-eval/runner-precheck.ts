/**
 * Upstream's runner-manifest checks, in upstream's order and with its sentences, run before our
 * execution-profile parser so a parser-eval rejection reads as upstream's does. Per runner
 * (sorted by name): input-definition references, `instructions`, the allowed runner fields,
 * the `runx` block (no execution requirements, reflect policy), the source, governance
 * (retry, idempotency, mutating, artifacts), lane constraints, inputs, examples, default,
 * scopes and credential. Our parser still decides everything else. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalBool,
  optionalCount,
  optionalNonEmptyString,
  optionalObject,
  optionalString,
  optionalStringArray,
  postRunReflectPolicy,
  rejectUnknownFields,
  requiredObject,
} from "./fields.js";
import { precheckGraph } from "./graph-precheck.js";
import { rawSourceOf } from "./ir.js";
import { checkSource } from "./source-check.js";
import { artifactContract } from "./artifact-contract.js";

/** The top-level fields of a runner manifest, in upstream's order (its allowed-fields list). */
const MANIFEST_FIELDS = [
  "skill",
  "version",
  "runx",
  "policy",
  "emits",
  "catalog",
  "credentials",
  "input_definitions",
  "marketplace",
  "runners",
  "harness",
] as const;

/** The fields a runner definition may carry, in upstream's order (its allowed-fields list). */
const RUNNER_FIELDS = [
  "act",
  "agent",
  "agent_card_url",
  "agent_identity",
  "allowed_tools",
  "args",
  "arguments",
  "artifacts",
  "auth",
  "command",
  "credential",
  "context",
  "context_skills",
  "cwd",
  "default",
  "environment",
  "examples",
  "execution",
  "external_adapter",
  "export",
  "graph",
  "headers",
  "hook",
  "http",
  "idempotency",
  "input_mode",
  "inputs",
  "method",
  "module",
  "mutating",
  "outputs",
  "pages",
  "policy",
  "retry",
  "risk",
  "runx",
  "runtime",
  "server",
  "scopes",
  "source",
  "task",
  "thread_outbox_provider",
  "timeout_seconds",
  "tool",
  "type",
  "url",
  "allow_private_network",
] as const;

/** Execution requirements belong on the runner or its source, never in its `runx` block. */
const RUNX_FORBIDDEN = ["auth", "credential", "environment", "runtime", "sandbox", "scopes"];

/** The first of two alternatives that is present (upstream's `first_value`). */
export const first = (a: JsonValue | undefined, b: JsonValue | undefined): JsonValue | undefined =>
  a === undefined || a === null ? b : a;

/** Input declarations: each a mapping with a string type, boolean required, string description. */
export function checkInputs(inputs: JsonObject, field: string): void {
  for (const name of Object.keys(inputs).sort()) {
    const at = `${field}.${name}`;
    const input = requiredObject(inputs[name], at);
    optionalString(input.type, `${at}.type`);
    optionalBool(input.required, `${at}.required`);
    optionalString(input.description, `${at}.description`);
  }
}

/** A runner's `inputs` with `{definition: <name>}` entries resolved against input_definitions. */
function expandInputs(runner: JsonObject, name: string, definitions: JsonObject): JsonObject {
  const inputs = runner.inputs;
  if (inputs === undefined) return {};
  const declared = requiredObject(inputs, `runners.${name}.inputs`);
  const expanded: JsonObject = {};
  for (const [input, declaration] of Object.entries(declared)) {
    const reference =
      isJsonObject(declaration) && Object.keys(declaration).length === 1
        ? declaration.definition
        : undefined;
    if (typeof reference !== "string") {
      expanded[input] = declaration;
      continue;
    }
    const definition = definitions[reference];
    if (definition === undefined)
      invalid(
        `runners.${name}.inputs.${input}.definition references unknown input_definitions.${reference}`,
      );
    expanded[input] = definition;
  }
  return expanded;
}

export function checkRetry(value: JsonValue | undefined, field: string): void {
  const retry = optionalObject(value, field);
  if (retry === undefined) return;
  if (optionalCount(retry.max_attempts, `${field}.max_attempts`) === 0)
    invalid(`${field}.max_attempts must be a positive integer.`);
}

export function checkIdempotency(value: JsonValue | undefined, field: string): void {
  if (value === undefined || value === null) return;
  if (typeof value === "string") {
    if (value.trim() === "") invalid(`${field} must not be empty.`);
    return;
  }
  optionalNonEmptyString(requiredObject(value, field).key, `${field}.key`);
}

function nonEmptyEnvironment(value: JsonValue | undefined): boolean {
  if (!isJsonObject(value)) return false;
  return Object.values(value).some((entry) => !Array.isArray(entry) || entry.length > 0);
}

function checkRunner(name: string, runner: JsonObject): void {
  const at = `runners.${name}`;
  if ("instructions" in runner)
    invalid(
      `${at}.instructions is not supported; put agent operating instructions in the owning SKILL.md`,
    );
  rejectUnknownFields(runner, at, RUNNER_FIELDS);
  const runx = optionalObject(runner.runx, `${at}.runx`);
  for (const key of RUNX_FORBIDDEN)
    if (runx !== undefined && key in runx)
      invalid(
        `${at}.runx contains unknown field '${key}'; execution requirements belong on the runner or its source`,
      );
  postRunReflectPolicy(runx, `${at}.runx`);
  const source = optionalObject(runner.source, `${at}.source`) ?? rawSourceOf(runner);
  const risk = isJsonObject(runner.risk) ? runner.risk : undefined;
  checkRetry(first(runner.retry, runx?.retry), `${at}.retry`);
  checkIdempotency(first(runner.idempotency, runx?.idempotency), `${at}.idempotency`);
  optionalBool(first(first(runner.mutating, risk?.mutating), runx?.mutating), `${at}.mutating`);
  const artifacts = artifactContract(first(runner.artifacts, runx?.artifacts), `${at}.artifacts`);
  optionalStringArray(runx?.allowed_tools, `${at}.runx.allowed_tools`);
  const type = checkSource(source, "defer");
  if (type === "javascript" && "credential" in runner)
    invalid(
      `${at}.credential is not valid for a pure javascript source; route credentials through a native provider tool`,
    );
  // A flattened runner's source fields sit on the runner itself.
  const fields = isJsonObject(runner.source) ? source : runner;
  if (type === "graph") {
    if (artifacts !== undefined)
      invalid(
        `${at}.artifacts is ambiguous for a graph source; declare the packet on the graph's terminal output-producing step`,
      );
    if (nonEmptyEnvironment(fields.environment))
      invalid(
        `${at}.environment is ambiguous for a graph source; declare environment requirements on the executable run step`,
      );
    if (isJsonObject(fields.outputs))
      invalid(
        `${at}.outputs is ambiguous for a graph source; declare outputs on the graph's terminal output-producing step`,
      );
    precheckGraph(requiredObject(source.graph, "source.graph"));
  }
}

function checkRunnerTail(name: string, runner: JsonObject, inputs: JsonObject): void {
  const at = `runners.${name}`;
  checkInputs(inputs, `${at}.inputs`);
  const examples = runner.examples;
  if (examples !== undefined) {
    if (examples === null) invalid(`${at}.examples is required.`);
    if (!Array.isArray(examples)) invalid(`${at}.examples must be an array.`);
    examples.forEach((example, index) => {
      if (example === null) invalid(`${at}.examples[${index}] is required.`);
      if (!isJsonObject(example)) invalid(`${at}.examples[${index}] must be an object.`);
    });
  }
  optionalBool(runner.default, `${at}.default`);
  const scopes = optionalStringArray(runner.scopes, `${at}.scopes`) ?? [];
  if (scopes.some((scope) => scope.trim() === ""))
    invalid(`${at}.scopes must contain only non-empty scope strings`);
  optionalNonEmptyString(runner.credential, `${at}.credential`);
}

/** Runs upstream's runner-manifest checks over a parsed manifest; throws UpstreamValidationError. */
export function precheckRunnerManifest(raw: JsonObject): void {
  rejectUnknownFields(raw, "runner_manifest", MANIFEST_FIELDS);
  const definitions = optionalObject(raw.input_definitions, "input_definitions") ?? {};
  checkInputs(definitions, "input_definitions");
  const runners = requiredObject(raw.runners, "runners");
  for (const name of Object.keys(runners).sort()) {
    const runner = runners[name];
    if (!isJsonObject(runner)) invalid(`runners.${name} must be an object.`);
    const inputs = expandInputs(runner, name, definitions);
    checkRunner(name, runner);
    checkRunnerTail(name, runner, inputs);
  }
}
