/**
 * `runx parser eval`: runs parser requests through our real parsers (strict YAML, SKILL.md,
 * execution profile, graph normalisation) and answers in upstream's IR normal form (ir.ts).
 * Request shapes: `{inputs: [...], returnErrors?}`, `{input: {...}}` or one input `{kind, ...}`.
 * Pure: request text in, answer value out.
 */
import { isRuntimeError } from "../errors.js";
import { normalizeGraph } from "../graph/document.js";
import { buildExecutionProfile } from "../parser/execution-profile.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { MAX_NESTING_DEPTH, scanJsonNesting } from "../parser/nesting.js";
import { buildSkillPackage } from "../parser/package.js";
import { splitSkillMarkdown } from "../parser/skill-markdown.js";
import { parseStrictYaml } from "../parser/strict-yaml.js";
import type { StrictYamlDocument } from "../parser/strict-yaml.js";
import {
  optionalBool,
  optionalObject,
  optionalString,
  optionalStringArray,
  postRunReflectPolicy,
  requiredObject,
  requiredString,
  UpstreamValidationError,
} from "./fields.js";
import { precheckGraph } from "./graph-precheck.js";
import {
  checkIdempotency,
  checkInputs,
  checkRetry,
  first,
  precheckRunnerManifest,
} from "./runner-precheck.js";
import { checkSource } from "./source-check.js";
import { graphIr, rawSourceOf, runnerManifestIr, skillIr, sourceFieldsIr } from "./ir.js";
import { artifactContract } from "./artifact-contract.js";
import { validateToolManifestDocument } from "./tool.js";

/** Error codes of a parser evaluation (upstream's spelling). */
export type ParserEvalCode =
  "invalid_document" | "invalid_input" | "parse_error" | "validation_error";

/** A failed evaluation: the code and a message that names the field or line. */
export class ParserEvalError extends Error {
  constructor(
    readonly code: ParserEvalCode,
    message: string,
  ) {
    super(message);
    this.name = "ParserEvalError";
  }
}

/** The answer to a whole request. */
export type ParserEvalAnswer =
  | { status: "success"; result: { kind: "output"; value: JsonValue } }
  | { status: "failure"; error: { code: ParserEvalCode; message: string } };

/** Input kinds this runtime evaluates. */
export const PARSER_KINDS = [
  "parser.validateSkillMarkdown",
  "parser.validateRunnerManifestYaml",
  "parser.validateGraphYaml",
  "parser.validateToolManifestYaml",
  "parser.validateToolManifestJson",
  "parser.validateSkillSource",
  "parser.validateSkillArtifactContract",
  "parser.resolvePostRunReflectPolicy",
  "parser.validateSkillInstall",
] as const;

/** Upstream kinds we recognise but do not evaluate (no parser for them here yet). */
const UNSUPPORTED_KINDS = new Set([
  "parser.validateHarnessFixtureYaml",
  "parser.parsePacketSchemaDocument",
]);

const PARSE_CODES = new Set(["YAML_SYNTAX", "YAML_FORBIDDEN"]);

/** One of our parser errors as a message: `line L, column C: …` or `<key path>: …`. */
function describe(error: unknown): string {
  if (!isRuntimeError(error)) return error instanceof Error ? error.message : String(error);
  const { line, column, path } = error.details;
  const at =
    typeof path === "string" && path !== ""
      ? `${path}: `
      : typeof line === "number"
        ? `line ${line}${typeof column === "number" ? `, column ${column}` : ""}: `
        : "";
  return `${at}${error.message}`;
}

/** Runs `body`, classifying our parser errors as `code` (YAML-level errors are always parse). */
function phase<T>(code: ParserEvalCode, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof ParserEvalError) throw error;
    if (error instanceof UpstreamValidationError)
      throw new ParserEvalError("validation_error", error.message);
    if (!isRuntimeError(error)) throw error;
    throw new ParserEvalError(PARSE_CODES.has(error.code) ? "parse_error" : code, describe(error));
  }
}

function field(input: JsonObject, name: string, kind: string): string {
  const value = input[name];
  if (typeof value !== "string")
    throw new ParserEvalError("invalid_input", `${kind} needs a string field "${name}"`);
  return value;
}

function optionalField(input: JsonObject, name: string, kind: string): string | undefined {
  const value = input[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string")
    throw new ParserEvalError("invalid_input", `${kind} field "${name}" must be a string`);
  return value;
}

/** One skill source on its own (upstream's `SkillSource`); a graph source carries its graph IR. */
function validateSkillSource(source: JsonObject): JsonObject {
  const type = checkSource(source, "reject");
  if (type !== "graph") return sourceFieldsIr(type, source, source);
  const graph = requiredObject(source.graph, "source.graph");
  precheckGraph(graph);
  return sourceFieldsIr(type, source, source, graphIr(normalizeGraph(graph), graph));
}

/**
 * Parses a YAML document that must be a mapping (parse phase). `field` names the document the
 * way upstream prefixes its parse errors (`runner_manifest: …`); `notMapping` is the sentence
 * for a document that parsed to something else.
 */
function yamlMapping(
  text: string,
  field: string,
  notMapping: (value: JsonValue) => string,
): { document: StrictYamlDocument; raw: JsonObject } {
  return phase("parse_error", () => {
    const document = parseStrictYaml(text);
    if (!isJsonObject(document.value))
      throw new ParserEvalError("parse_error", `${field}: ${notMapping(document.value)}`);
    return { document, raw: document.value };
  });
}

/** How upstream's deserializer names a YAML value that is not the mapping it expected. */
function yamlKind(value: JsonValue): string {
  if (value === null) return "unit value";
  if (Array.isArray(value)) return "sequence";
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "boolean") return `boolean \`${value}\``;
  if (typeof value === "number")
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  return "map";
}

function validateGraphYaml(yaml: string): JsonValue {
  // Upstream deserializes a graph straight into a map, so a non-mapping is a YAML failure.
  const { raw } = yamlMapping(
    yaml,
    "graph",
    (value) => `YAML parse failed: invalid type: ${yamlKind(value)}, expected a map`,
  );
  return phase("validation_error", () => {
    precheckGraph(raw);
    return graphIr(normalizeGraph(raw), raw);
  });
}

function validateRunnerManifestYaml(yaml: string): JsonValue {
  const { document, raw } = yamlMapping(
    yaml,
    "runner_manifest",
    () => "Runner manifest YAML must parse to an object.",
  );
  return phase("validation_error", () => {
    precheckRunnerManifest(raw);
    const profile = buildExecutionProfile(document);
    const graphs: Record<string, JsonObject> = {};
    const rawRunners = isJsonObject(raw.runners) ? raw.runners : {};
    for (const [name, runner] of Object.entries(profile.runners)) {
      if (runner.type !== "graph") continue;
      const rawRunner = rawRunners[name];
      const graph = isJsonObject(rawRunner) ? rawSourceOf(rawRunner).graph : undefined;
      if (!isJsonObject(graph)) continue;
      graphs[name] = graphIr(normalizeGraph(graph, { path: ["runners", name, "graph"] }), graph);
    }
    return runnerManifestIr(profile, yaml, graphs);
  });
}

function validateToolManifestYaml(yaml: string): JsonValue {
  const { raw } = yamlMapping(
    yaml,
    "tool_manifest",
    () => "Tool manifest YAML must parse to an object.",
  );
  return phase("validation_error", () => validateToolManifestDocument(raw));
}

function validateToolManifestJson(json: string): JsonValue {
  const parseFailure = (message: string): never => {
    throw new ParserEvalError(
      "parse_error",
      `tool_manifest: JSON parse failed: Tool manifest JSON is invalid: ${message}`,
    );
  };
  const deep = scanJsonNesting(json);
  if (deep !== undefined)
    parseFailure(
      `nesting deeper than ${MAX_NESTING_DEPTH} levels at line ${deep.line}, column ${deep.column}`,
    );
  let value: JsonValue = null;
  try {
    value = JSON.parse(json) as JsonValue;
  } catch (error) {
    parseFailure(error instanceof Error ? error.message : String(error));
  }
  if (!isJsonObject(value))
    throw new ParserEvalError(
      "parse_error",
      "tool_manifest: Tool manifest JSON must parse to an object.",
    );
  return phase("validation_error", () => validateToolManifestDocument(value));
}

/**
 * Upstream's first SKILL.md checks with its sentences, in its order (`runx`, `source`,
 * governance, categories, `name`, the source, inputs, and a graph source's graph); returns the
 * graph of a graph source.
 */
function precheckSkill(frontmatter: JsonObject): JsonObject | undefined {
  const runx = frontmatter.runx;
  if (runx !== undefined && runx !== null && !isJsonObject(runx))
    throw new UpstreamValidationError("runx must be an object when present.");
  const source = optionalObject(frontmatter.source, "source") ?? { type: "agent" };
  const meta = isJsonObject(runx) ? runx : undefined;
  const risk = isJsonObject(frontmatter.risk) ? frontmatter.risk : undefined;
  checkRetry(first(frontmatter.retry, meta?.retry), "retry");
  checkIdempotency(first(frontmatter.idempotency, meta?.idempotency), "idempotency");
  optionalBool(first(first(frontmatter.mutating, risk?.mutating), meta?.mutating), "mutating");
  artifactContract(meta?.artifacts, "runx.artifacts");
  optionalStringArray(meta?.allowed_tools, "runx.allowed_tools");
  optionalString(frontmatter.category, "category");
  optionalString(meta?.category, "runx.category");
  requiredString(frontmatter.name, "name");
  optionalString(frontmatter.description, "description");
  const type = checkSource(source, "defer");
  checkInputs(optionalObject(frontmatter.inputs, "inputs") ?? {}, "inputs");
  if (type !== "graph") return undefined;
  const graph = requiredObject(source.graph, "source.graph");
  precheckGraph(graph);
  return graph;
}

function validateSkillMarkdown(markdown: string, parseCode: ParserEvalCode): JsonObject {
  const parts = phase(parseCode, () => splitSkillMarkdown(markdown));
  return phase("validation_error", () => {
    const graph = precheckSkill(parts.frontmatter);
    const pkg = buildSkillPackage({ skillMd: { text: markdown } });
    // A graph source reports its graph in graph IR form, as a graph runner does.
    const graphValue =
      graph === undefined
        ? undefined
        : graphIr(normalizeGraph(graph, { path: ["source", "graph"] }), graph);
    return skillIr(pkg, parts, graphValue);
  });
}

const ORIGIN_STRINGS = ["source", "source_label", "ref"] as const;
const ORIGIN_OPTIONAL = ["skill_id", "version", "digest", "profile_digest", "trust_tier"] as const;

/** The install origin, checked field by field (a malformed origin is an input error). */
function installOrigin(value: JsonValue | undefined): JsonObject {
  const bad = (message: string): never => {
    throw new ParserEvalError("invalid_input", `origin ${message}`);
  };
  if (!isJsonObject(value)) return bad("must be an object");
  const origin: JsonObject = {};
  for (const key of ORIGIN_STRINGS) {
    const v = value[key];
    if (typeof v !== "string") bad(`needs a string field "${key}"`);
    origin[key] = v as string;
  }
  for (const key of ORIGIN_OPTIONAL) {
    const v = value[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== "string") bad(`field "${key}" must be a string`);
    origin[key] = v;
  }
  const names = value.runner_names;
  if (names !== undefined && names !== null) {
    if (!Array.isArray(names) || !names.every((n) => typeof n === "string"))
      bad('field "runner_names" must be a list of strings');
    origin.runner_names = names;
  }
  for (const key of Object.keys(value))
    if (!(key in origin) && value[key] !== null && key !== "runner_names")
      bad(`has unknown field "${key}"`);
  return origin;
}

/** Evaluates one input; throws ParserEvalError. */
export function evaluateParserInput(input: JsonValue): JsonValue {
  if (!isJsonObject(input))
    throw new ParserEvalError("invalid_input", "an input must be an object");
  const kind = input.kind;
  if (typeof kind !== "string")
    throw new ParserEvalError("invalid_input", 'an input needs a string field "kind"');
  switch (kind) {
    case "parser.validateSkillMarkdown": {
      const mode = input.mode ?? "strict";
      if (mode !== "strict")
        throw new ParserEvalError(
          "invalid_input",
          `${kind} mode ${JSON.stringify(mode)} is not supported; only strict validation is implemented`,
        );
      return validateSkillMarkdown(field(input, "markdown", kind), "parse_error");
    }
    case "parser.validateRunnerManifestYaml":
      return validateRunnerManifestYaml(field(input, "yaml", kind));
    case "parser.validateGraphYaml":
      return validateGraphYaml(field(input, "yaml", kind));
    case "parser.validateToolManifestYaml":
      return validateToolManifestYaml(field(input, "yaml", kind));
    case "parser.validateToolManifestJson":
      return validateToolManifestJson(field(input, "json", kind));
    case "parser.validateSkillSource": {
      const source = input.source;
      if (!isJsonObject(source))
        throw new ParserEvalError("invalid_input", `${kind} needs an object field "source"`);
      return phase("validation_error", () => validateSkillSource(source));
    }
    case "parser.validateSkillArtifactContract": {
      const name = optionalField(input, "field", kind) ?? "runx.artifacts";
      return phase("validation_error", () => artifactContract(input.artifacts, name) ?? null);
    }
    case "parser.resolvePostRunReflectPolicy": {
      const name = optionalField(input, "field", kind) ?? "runx";
      const runx = input.runx;
      if (runx !== undefined && runx !== null && !isJsonObject(runx))
        throw new ParserEvalError("invalid_input", `${kind} field "runx" must be an object`);
      return phase("validation_error", () =>
        postRunReflectPolicy(isJsonObject(runx) ? runx : undefined, name),
      );
    }
    case "parser.validateSkillInstall": {
      const markdown = field(input, "markdown", kind);
      const origin = installOrigin(input.origin);
      // Upstream reports every install problem, parse ones included, as a validation error.
      return { skill: validateSkillMarkdown(markdown, "validation_error"), origin, markdown };
    }
    default:
      if (UNSUPPORTED_KINDS.has(kind))
        throw new ParserEvalError(
          "invalid_input",
          `parser input kind '${kind}' is not supported by this runtime`,
        );
      throw new ParserEvalError("invalid_input", `unsupported parser input kind '${kind}'`);
  }
}

function outcome(input: JsonValue): JsonObject {
  try {
    return { status: "success", value: evaluateParserInput(input) };
  } catch (error) {
    if (!(error instanceof ParserEvalError)) throw error;
    return { status: "failure", error: { code: error.code, message: error.message } };
  }
}

function evaluateDocument(document: JsonValue): JsonValue {
  if (!isJsonObject(document))
    throw new ParserEvalError("invalid_input", "the request must be a JSON object");
  if (document.inputs !== undefined) {
    if (!Array.isArray(document.inputs))
      throw new ParserEvalError("invalid_input", '"inputs" must be a list');
    const returnErrors = document.returnErrors ?? false;
    if (typeof returnErrors !== "boolean")
      throw new ParserEvalError("invalid_input", '"returnErrors" must be a boolean');
    return returnErrors
      ? document.inputs.map(outcome)
      : document.inputs.map((input) => evaluateParserInput(input));
  }
  if (document.input !== undefined) return evaluateParserInput(document.input);
  return evaluateParserInput(document);
}

/** Evaluates a request document given as JSON text. Never throws for bad requests. */
export function evaluateParserRequest(text: string): ParserEvalAnswer {
  const deep = scanJsonNesting(text);
  if (deep !== undefined) {
    const message = `line ${deep.line}, column ${deep.column}: nesting deeper than ${MAX_NESTING_DEPTH} levels`;
    return { status: "failure", error: { code: "invalid_document", message } };
  }
  let document: JsonValue;
  try {
    document = JSON.parse(text) as JsonValue;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { status: "failure", error: { code: "invalid_document", message } };
  }
  try {
    return { status: "success", result: { kind: "output", value: evaluateDocument(document) } };
  } catch (error) {
    if (!(error instanceof ParserEvalError)) throw error;
    return { status: "failure", error: { code: error.code, message: error.message } };
  }
}
