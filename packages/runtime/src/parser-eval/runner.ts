/**
 * Upstream's runner manifest (`SkillRunnerManifest`): the top-level fields, reusable input
 * definitions, each runner definition (sorted by name) with its source, governance, lane
 * constraints, inputs, examples, scopes and credential, then the named credentials and the
 * harness runner references, checked in upstream's order with its sentences and answered in
 * its normal form. The catalog and harness blocks are checked by catalog.ts / harness.ts. Pure,
 * apart from compiling input contracts with ajv.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { artifactContract } from "./artifact-contract.js";
import { catalogMetadata } from "./catalog.js";
import {
  invalid,
  optionalBool,
  optionalNonEmptyString,
  optionalObject,
  optionalString,
  optionalStringArray,
  postRunReflectPolicy,
  rejectUnknownFields,
  requiredObject,
  requiredString,
} from "./fields.js";
import {
  first,
  validateAllowedTools,
  validateExecution,
  validateIdempotency,
  validateInputs,
  validateRetry,
} from "./governance.js";
import { harnessManifest } from "./harness.js";
import { flattenedSource, rejectUnknownSourceFields, validateSource } from "./source.js";

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

function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

const present = (record: JsonObject, key: string): JsonValue | undefined =>
  key in record ? (record[key] ?? null) : undefined;

/** A runner's inputs with `{definition: <name>}` entries replaced by the validated definition. */
function expandInputDefinitions(
  name: string,
  runner: JsonObject,
  definitions: JsonObject,
): JsonObject {
  if (!("inputs" in runner)) return runner;
  const inputs = requiredObject(runner.inputs, `runners.${name}.inputs`);
  const expanded: JsonObject = {};
  for (const [input, declaration] of Object.entries(inputs)) {
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
  return { ...runner, inputs: expanded };
}

let ajv: Ajv2020 | undefined;

/** The JSON Schema of a runner's whole input object (upstream's input contract). */
function inputContractSchema(inputs: JsonObject): JsonObject {
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const name of Object.keys(inputs).sort()) {
    const input = inputs[name];
    if (!isJsonObject(input)) continue;
    const schema: JsonObject = { ...(isJsonObject(input.schema) ? input.schema : {}) };
    if (typeof input.packet === "string") schema["x-runx-packet-id"] = input.packet;
    if (input.type !== "json") schema.type = input.type ?? "string";
    if (typeof input.description === "string") schema.description = input.description;
    if ("default" in input) schema.default = input.default ?? null;
    properties[name] = schema;
    if (input.required === true && !("default" in input)) required.push(name);
  }
  return { type: "object", properties, required, additionalProperties: false };
}

function checkExamples(field: string, examples: JsonObject[], inputs: JsonObject): void {
  if (examples.length === 0) return;
  ajv ??= new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  let validate;
  try {
    validate = ajv.compile(inputContractSchema(inputs));
  } catch (error) {
    return invalid(
      `${field} schema is invalid: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  examples.forEach((example, index) => {
    if (validate(example)) return;
    const problem = validate.errors?.[0];
    const path = problem?.instancePath ?? "";
    invalid(
      `${field}[${index}]${path} does not match the runner input contract: ${problem?.message ?? "invalid"}`,
    );
  });
}

function runnerExamples(name: string, value: JsonValue | undefined): JsonObject[] {
  if (value === undefined) return [];
  const field = `runners.${name}.examples`;
  if (value === null) invalid(`${field} is required.`);
  if (!Array.isArray(value)) return invalid(`${field} must be an array.`);
  return value.map((example, index) => requiredObject(example, `${field}[${index}]`));
}

/** One runner definition (`SkillRunnerDefinition`) in upstream's normal form. */
function validateRunnerDefinition(name: string, runner: JsonObject): JsonObject {
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
  const nested = optionalObject(runner.source, `${at}.source`);
  if (nested !== undefined) rejectUnknownSourceFields(nested, `${at}.source`);
  const sourceRecord = nested ?? flattenedSource(runner);
  const risk = present(runner, "risk");
  const riskRecord = isJsonObject(risk) ? risk : undefined;
  const retry = validateRetry(first(runner.retry, runx?.retry), `${at}.retry`);
  const idempotency = validateIdempotency(
    first(runner.idempotency, runx?.idempotency),
    `${at}.idempotency`,
  );
  const mutating = optionalBool(
    first(first(runner.mutating, riskRecord?.mutating), runx?.mutating),
    `${at}.mutating`,
  );
  const artifacts = artifactContract(first(runner.artifacts, runx?.artifacts), `${at}.artifacts`);
  const allowedTools = validateAllowedTools(runx?.allowed_tools, `${at}.runx.allowed_tools`);
  const execution = validateExecution(first(runner.execution, runx?.execution), `${at}.execution`);
  const source = validateSource(sourceRecord);
  const type = source.type;
  if (type === "javascript" && "credential" in runner)
    invalid(
      `${at}.credential is not valid for a pure javascript source; route credentials through a native provider tool`,
    );
  if (type === "graph") {
    if (artifacts !== undefined)
      invalid(
        `${at}.artifacts is ambiguous for a graph source; declare the packet on the graph's terminal output-producing step`,
      );
    if (source.environment !== undefined)
      invalid(
        `${at}.environment is ambiguous for a graph source; declare environment requirements on the executable run step`,
      );
    if (source.outputs !== undefined)
      invalid(
        `${at}.outputs is ambiguous for a graph source; declare outputs on the graph's terminal output-producing step`,
      );
    const graph = isJsonObject(source.graph) ? source.graph : undefined;
    const resultFrom = graph?.resultFrom;
    if (!Array.isArray(resultFrom) || resultFrom.length === 0)
      invalid(`${at}.graph.result_from must name at least one intentional public result producer`);
  }
  const inputs = validateInputs(
    optionalObject(runner.inputs, `${at}.inputs`) ?? {},
    `${at}.inputs`,
  );
  const examples = runnerExamples(name, runner.examples);
  checkExamples(`${at}.examples`, examples, inputs);
  const isDefault = optionalBool(runner.default, `${at}.default`) ?? false;
  const scopes = optionalStringArray(runner.scopes, `${at}.scopes`) ?? [];
  if (scopes.some((scope) => scope.trim() === ""))
    invalid(`${at}.scopes must contain only non-empty scope strings`);
  const credential = optionalNonEmptyString(runner.credential, `${at}.credential`);
  return put(
    { name, default: isDefault, source, inputs, scopes, raw: runner },
    {
      examples: examples.length > 0 ? examples : undefined,
      credential,
      auth: present(runner, "auth"),
      risk,
      runtime: present(runner, "runtime"),
      retry,
      idempotency,
      mutating,
      artifacts,
      allowedTools,
      execution,
      runx,
    },
  );
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function nonEmptyTrimmed(value: JsonValue | undefined, field: string): string {
  const text = requiredString(value, field).trim();
  if (text === "") invalid(`${field} must not be empty`);
  return text;
}

/** `credentials`: named provider requirements, each auth mode delivered through one env name. */
function credentialRequirements(value: JsonValue | undefined): JsonObject {
  const credentials = optionalObject(value, "credentials");
  const out: JsonObject = {};
  if (credentials === undefined) return out;
  for (const name of Object.keys(credentials).sort()) {
    const field = `credentials.${name}`;
    if (name.trim() === "") invalid("credential names must not be empty");
    const requirement = requiredObject(credentials[name], field);
    rejectUnknownFields(requirement, field, ["provider", "audience", "auth"]);
    const provider = nonEmptyTrimmed(requirement.provider, `${field}.provider`);
    const audience = optionalNonEmptyString(requirement.audience, `${field}.audience`);
    const authField = `${field}.auth`;
    const auth = requiredObject(requirement.auth, authField);
    if (Object.keys(auth).length === 0) invalid(`${authField} must declare at least one mode`);
    const deliveries: JsonObject = {};
    for (const mode of Object.keys(auth).sort()) {
      if (mode.trim() === "") invalid(`${authField} mode names must not be empty`);
      const modeField = `${authField}.${mode}`;
      const record = requiredObject(auth[mode], modeField);
      rejectUnknownFields(record, modeField, ["delivery"]);
      const deliveryField = `${modeField}.delivery`;
      const delivery = requiredObject(record.delivery, deliveryField);
      rejectUnknownFields(delivery, deliveryField, ["env"]);
      const envField = `${deliveryField}.env`;
      const env = nonEmptyTrimmed(delivery.env, envField);
      if (!ENV_NAME.test(env)) invalid(`${envField} must be a valid environment variable name`);
      if (env.startsWith("RUNX_"))
        invalid(`${envField} cannot use reserved Runx environment variable ${env}`);
      deliveries[mode] = env;
    }
    out[name] = put({ provider, deliveries }, { audience });
  }
  return out;
}

function environmentNames(source: JsonValue | undefined): string[] {
  if (!isJsonObject(source) || !isJsonObject(source.environment)) return [];
  const { required, optional } = source.environment;
  return [
    ...(Array.isArray(required) ? required : []),
    ...(Array.isArray(optional) ? optional : []),
  ].filter((name): name is string => typeof name === "string");
}

/** Validates a parsed runner manifest; `text` is the YAML as given. */
export function validateRunnerManifest(document: JsonObject, text: string): JsonObject {
  rejectUnknownFields(document, "runner_manifest", MANIFEST_FIELDS);
  const definitions = validateInputs(
    optionalObject(document.input_definitions, "input_definitions") ?? {},
    "input_definitions",
  );
  const record = requiredObject(document.runners, "runners");
  const runners: JsonObject = {};
  for (const name of Object.keys(record).sort()) {
    const runner = record[name];
    if (!isJsonObject(runner)) invalid(`runners.${name} must be an object.`);
    runners[name] = validateRunnerDefinition(
      name,
      expandInputDefinitions(name, runner, definitions),
    );
  }
  const credentials = credentialRequirements(document.credentials);
  for (const [name, runner] of Object.entries(runners)) {
    const credential = isJsonObject(runner) ? runner.credential : undefined;
    if (typeof credential === "string" && !(credential in credentials))
      invalid(`runners.${name}.credential references undeclared credential ${credential}`);
  }
  for (const [name, runner] of Object.entries(runners)) {
    if (!isJsonObject(runner) || typeof runner.credential !== "string") continue;
    const requirement = credentials[runner.credential];
    const deliveries =
      isJsonObject(requirement) && isJsonObject(requirement.deliveries)
        ? Object.values(requirement.deliveries)
        : [];
    for (const env of environmentNames(runner.source))
      if (deliveries.includes(env))
        invalid(
          `runners.${name}.environment cannot redeclare credential delivery environment variable ${env}; credentials and non-secret environment use separate channels`,
        );
  }
  const harness = harnessManifest(optionalObject(document.harness, "harness"), "harness");
  const cases = isJsonObject(harness) && Array.isArray(harness.cases) ? harness.cases : [];
  for (const entry of cases) {
    const runner = isJsonObject(entry) ? entry.runner : undefined;
    if (typeof runner === "string" && !(runner in runners))
      invalid(`harness.cases runner ${runner} is not declared in runners.`);
  }
  const catalog = catalogMetadata(optionalObject(document.catalog, "catalog"), "catalog");
  return put(
    { credentials, runners, raw: { document, raw: text } },
    {
      skill: optionalString(document.skill, "skill"),
      version: optionalString(document.version, "version"),
      runx: optionalObject(document.runx, "runx"),
      policy: present(document, "policy"),
      emits: present(document, "emits"),
      catalog,
      input_definitions: Object.keys(definitions).length > 0 ? definitions : undefined,
      harness,
    },
  );
}
