/**
 * `runx parser eval`: runs parser requests through upstream's parser rules (strict YAML, then
 * skill.ts, runner.ts, tool.ts, graph checks, harness.ts) and answers in upstream's normal form.
 * Request shapes: `{inputs: [...], returnErrors?}`, `{input: {...}}` or one input `{kind, ...}`.
 * Pure: request text in, answer value out.
 */
import { createHash } from "node:crypto";
import { isRuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { MAX_NESTING_DEPTH, scanJsonNesting } from "../parser/nesting.js";
import { parseStrictYaml } from "../parser/strict-yaml.js";
import type { StrictYamlDocument } from "../parser/strict-yaml.js";
import { artifactContract } from "./artifact-contract.js";
import { postRunReflectPolicy, UpstreamValidationError } from "./fields.js";
import { validateGraph } from "./graph.js";
import { harnessFixture } from "./harness.js";
import { SerdeError } from "./serde.js";
import { validateRunnerManifest } from "./runner.js";
import { validateSkill } from "./skill.js";
import type { RawSkill, SkillMode } from "./skill.js";
import { inlineSource, validateSource } from "./source.js";
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
  "parser.validateHarnessFixtureYaml",
  "parser.parsePacketSchemaDocument",
] as const;

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
    return validateGraph(raw, inlineSource);
  });
}

function validateRunnerManifestYaml(yaml: string): JsonValue {
  const { raw } = yamlMapping(
    yaml,
    "runner_manifest",
    () => "Runner manifest YAML must parse to an object.",
  );
  return phase("validation_error", () => validateRunnerManifest(raw, yaml));
}

function validateToolManifestYaml(yaml: string): JsonValue {
  const { raw } = yamlMapping(
    yaml,
    "tool_manifest",
    () => "Tool manifest YAML must parse to an object.",
  );
  return phase("validation_error", () => validateToolManifestDocument(raw));
}

/**
 * A packet schema document: JSON carrying `x-runx-packet-id` answers its id, the value and the
 * sha256 of the source text; JSON without the field is not a packet schema (null).
 */
function parsePacketSchemaDocument(path: string, source: string): JsonValue {
  let value: JsonValue;
  try {
    value = JSON.parse(source) as JsonValue;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ParserEvalError(
      "validation_error",
      `${path}: packet schema is not valid JSON: ${reason}`,
    );
  }
  if (!isJsonObject(value) || !("x-runx-packet-id" in value)) return null;
  const packetId = value["x-runx-packet-id"];
  if (typeof packetId !== "string" || packetId.trim() === "")
    throw new ParserEvalError(
      "validation_error",
      `${path}: x-runx-packet-id must be a non-empty string`,
    );
  const sha256 = `sha256:${createHash("sha256").update(source, "utf8").digest("hex")}`;
  return { packetId, value, sha256 };
}

/**
 * A harness fixture document. Upstream reports all of its problems as validation errors: a
 * YAML or shape problem with its parse prefix, a rule with the rule's own sentence.
 */
function validateHarnessFixtureYaml(yaml: string): JsonValue {
  const parsePrefix = "failed to parse harness fixture YAML: yaml: YAML parse failed: ";
  let document: JsonValue;
  try {
    document = parseStrictYaml(yaml).value;
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    throw new ParserEvalError("validation_error", `${parsePrefix}${describe(error)}`);
  }
  try {
    return harnessFixture(document);
  } catch (error) {
    if (!(error instanceof SerdeError)) throw error;
    const own =
      error.message.startsWith("invalid harness fixture") ||
      error.message.startsWith("harness fixture") ||
      error.message.includes("receipt expectation field");
    throw new ParserEvalError(
      "validation_error",
      own ? error.message : `${parsePrefix}${error.message}`,
    );
  }
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

/** Upstream's SKILL.md split: `---`, the frontmatter, `---`, then the body (all the rest). */
const SKILL_MARKDOWN = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$/;

function parseSkillMarkdown(markdown: string, code: ParserEvalCode): RawSkill {
  const match = SKILL_MARKDOWN.exec(markdown);
  if (match === null)
    throw new ParserEvalError(
      code,
      "skill: Skill markdown must start with YAML frontmatter delimited by ---.",
    );
  const rawFrontmatter = match[1] ?? "";
  const body = match[2] ?? "";
  const frontmatter = phase(code, () => {
    try {
      return parseStrictYaml(rawFrontmatter).value;
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      throw new ParserEvalError(code, `skill_frontmatter: YAML parse failed: ${describe(error)}`);
    }
  });
  if (!isJsonObject(frontmatter))
    throw new ParserEvalError(
      code,
      "skill_frontmatter: Skill frontmatter must parse to an object.",
    );
  return { frontmatter, rawFrontmatter, body };
}

function validateSkillMarkdown(
  markdown: string,
  mode: SkillMode,
  code: ParserEvalCode,
): JsonObject {
  const raw = parseSkillMarkdown(markdown, code);
  return phase("validation_error", () => validateSkill(raw, mode));
}

const ORIGIN_STRINGS = ["source", "source_label", "ref"] as const;
const ORIGIN_OPTIONAL = ["skill_id", "version", "digest", "profile_digest", "trust_tier"] as const;

/** The install origin, kept to upstream's fields (others are dropped, as its reader drops them). */
function installOrigin(value: JsonObject): JsonObject {
  const origin: JsonObject = {};
  for (const key of ORIGIN_STRINGS) origin[key] = value[key] as string;
  for (const key of ORIGIN_OPTIONAL) {
    const v = value[key];
    if (typeof v === "string") origin[key] = v;
  }
  if (Array.isArray(value.runner_names)) origin.runner_names = value.runner_names;
  return origin;
}

/** One input as upstream's request reader accepts it (a tagged `kind` with typed fields). */
type ParsedInput =
  | { kind: "parser.validateSkillMarkdown"; markdown: string; mode: SkillMode }
  | {
      kind:
        | "parser.validateRunnerManifestYaml"
        | "parser.validateGraphYaml"
        | "parser.validateToolManifestYaml"
        | "parser.validateHarnessFixtureYaml";
      yaml: string;
    }
  | { kind: "parser.validateToolManifestJson"; json: string }
  | { kind: "parser.parsePacketSchemaDocument"; path: string; source: string }
  | { kind: "parser.validateSkillSource"; source: JsonObject }
  | {
      kind: "parser.validateSkillArtifactContract";
      artifacts: JsonValue | undefined;
      field: string;
    }
  | { kind: "parser.resolvePostRunReflectPolicy"; runx: JsonObject | undefined; field: string }
  | { kind: "parser.validateSkillInstall"; markdown: string; origin: JsonObject };

const isString = (value: JsonValue | undefined): value is string => typeof value === "string";
const absent = (value: JsonValue | undefined): value is null | undefined =>
  value === undefined || value === null;

/** A field with a default: absent takes the default, otherwise it must be a string. */
function defaulted(value: JsonValue | undefined, fallback: string): string | undefined {
  if (value === undefined) return fallback;
  return isString(value) ? value : undefined;
}

function isOrigin(value: JsonValue | undefined): value is JsonObject {
  if (!isJsonObject(value)) return false;
  if (!ORIGIN_STRINGS.every((key) => isString(value[key]))) return false;
  if (!ORIGIN_OPTIONAL.every((key) => absent(value[key]) || isString(value[key]))) return false;
  const names = value.runner_names;
  return absent(names) || (Array.isArray(names) && names.every((n) => typeof n === "string"));
}

/** Reads one input; undefined when it does not have the shape its kind needs. */
function readInput(value: JsonValue): ParsedInput | undefined {
  if (!isJsonObject(value)) return undefined;
  const kind = value.kind;
  switch (kind) {
    case "parser.validateSkillMarkdown": {
      const mode = value.mode === undefined ? "strict" : value.mode;
      if (!isString(value.markdown) || (mode !== "strict" && mode !== "lenient")) return undefined;
      return { kind, markdown: value.markdown, mode };
    }
    case "parser.validateRunnerManifestYaml":
    case "parser.validateGraphYaml":
    case "parser.validateToolManifestYaml":
    case "parser.validateHarnessFixtureYaml":
      return isString(value.yaml) ? { kind, yaml: value.yaml } : undefined;
    case "parser.validateToolManifestJson":
      return isString(value.json) ? { kind, json: value.json } : undefined;
    case "parser.parsePacketSchemaDocument":
      return isString(value.path) && isString(value.source)
        ? { kind, path: value.path, source: value.source }
        : undefined;
    case "parser.validateSkillSource":
      return isJsonObject(value.source) ? { kind, source: value.source } : undefined;
    case "parser.validateSkillArtifactContract": {
      const field = defaulted(value.field, "runx.artifacts");
      if (field === undefined) return undefined;
      return { kind, artifacts: absent(value.artifacts) ? undefined : value.artifacts, field };
    }
    case "parser.resolvePostRunReflectPolicy": {
      const field = defaulted(value.field, "runx");
      const runx = value.runx;
      if (field === undefined || !(absent(runx) || isJsonObject(runx))) return undefined;
      return { kind, runx: isJsonObject(runx) ? runx : undefined, field };
    }
    case "parser.validateSkillInstall":
      return isString(value.markdown) && isOrigin(value.origin)
        ? { kind, markdown: value.markdown, origin: value.origin }
        : undefined;
    default:
      return undefined;
  }
}

/** Evaluates one read input; throws ParserEvalError. */
function evaluateInput(input: ParsedInput): JsonValue {
  switch (input.kind) {
    case "parser.validateSkillMarkdown":
      return validateSkillMarkdown(input.markdown, input.mode, "parse_error");
    case "parser.validateRunnerManifestYaml":
      return validateRunnerManifestYaml(input.yaml);
    case "parser.validateGraphYaml":
      return validateGraphYaml(input.yaml);
    case "parser.validateToolManifestYaml":
      return validateToolManifestYaml(input.yaml);
    case "parser.validateToolManifestJson":
      return validateToolManifestJson(input.json);
    case "parser.validateHarnessFixtureYaml":
      return validateHarnessFixtureYaml(input.yaml);
    case "parser.parsePacketSchemaDocument":
      return parsePacketSchemaDocument(input.path, input.source);
    case "parser.validateSkillSource": {
      const source = input.source;
      return phase("validation_error", () => validateSource(source));
    }
    case "parser.validateSkillArtifactContract":
      return phase(
        "validation_error",
        () => artifactContract(input.artifacts, input.field) ?? null,
      );
    case "parser.resolvePostRunReflectPolicy":
      return phase("validation_error", () => postRunReflectPolicy(input.runx, input.field));
    case "parser.validateSkillInstall":
      // Upstream reports every install problem, parse ones included, as a validation error.
      return {
        skill: validateSkillMarkdown(input.markdown, "strict", "validation_error"),
        origin: installOrigin(input.origin),
        markdown: input.markdown,
      };
  }
}

/** Upstream's words for a request none of its request shapes fits. */
const NO_SHAPE = "data did not match any variant of untagged enum ParserDocument";

/** Evaluates one input given as a value; throws ParserEvalError. */
export function evaluateParserInput(input: JsonValue): JsonValue {
  const parsed = readInput(input);
  if (parsed === undefined) throw new ParserEvalError("invalid_input", NO_SHAPE);
  return evaluateInput(parsed);
}

function outcome(input: ParsedInput): JsonObject {
  try {
    return { status: "success", value: evaluateInput(input) };
  } catch (error) {
    if (!(error instanceof ParserEvalError)) throw error;
    return { status: "failure", error: { code: error.code, message: error.message } };
  }
}

/** The kind a whole-document request names (its own, or its envelope's input's). */
function documentKind(document: JsonValue): string | undefined {
  if (!isJsonObject(document)) return undefined;
  const input = document.input;
  const kind = isJsonObject(input) ? input.kind : document.kind;
  return isString(kind) ? kind : undefined;
}

/**
 * A request is, in upstream's order of trying: a batch `{inputs, returnErrors?}`, an envelope
 * `{input}`, or one input. Every input of a batch must read; otherwise the next shape is tried.
 */
function evaluateDocument(document: JsonValue): JsonValue {
  const kind = documentKind(document);
  if (kind !== undefined && !(PARSER_KINDS as readonly string[]).includes(kind))
    throw new ParserEvalError("invalid_input", `unsupported parser input kind '${kind}'`);
  if (isJsonObject(document)) {
    const { inputs, returnErrors } = document;
    if (
      Array.isArray(inputs) &&
      (returnErrors === undefined || typeof returnErrors === "boolean")
    ) {
      const parsed = inputs.map(readInput);
      if (parsed.every((input) => input !== undefined))
        return returnErrors === true
          ? parsed.map(outcome)
          : parsed.map((input) => evaluateInput(input));
    }
    if (document.input !== undefined) {
      const parsed = readInput(document.input);
      if (parsed !== undefined) return evaluateInput(parsed);
    }
  }
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
