/**
 * Upstream's skill source (`SkillSource`): the `source` mapping of a SKILL.md, a runner, a tool
 * manifest or a `parser.validateSkillSource` input, checked in upstream's order with its
 * sentences and answered in its normal form (camelCase typed fields beside `raw`). A graph
 * source carries its graph in graph IR form. The declaration blocks beside the type
 * (`environment`, `pages`, adapters, `act:`, an MCP server) are parser-eval/source-blocks.ts. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalCount,
  optionalObject,
  optionalString,
  optionalStringArray,
  put,
  rejectUnknownFields,
  requiredObject,
  requiredString,
} from "./fields.js";
import { validateGraph } from "./graph.js";
import { outputContract } from "./output-contract.js";
import {
  actDeclaration,
  artifactPages,
  environmentIr,
  environmentRequirements,
  externalAdapter,
  mcpServer,
  threadOutboxProvider,
} from "./source-blocks.js";

/** The fields a source may declare (also the flattened source fields of a runner). */
export const SOURCE_FIELDS = [
  "act",
  "agent",
  "agent_card_url",
  "agent_identity",
  "args",
  "arguments",
  "command",
  "cwd",
  "environment",
  "external_adapter",
  "export",
  "graph",
  "input_mode",
  "module",
  "outputs",
  "pages",
  "server",
  "task",
  "thread_outbox_provider",
  "timeout_seconds",
  "tool",
  "type",
] as const;

const SOURCE_KINDS = new Set([
  "cli-tool",
  "javascript",
  "mcp",
  "a2a",
  "agent",
  "agent-task",
  "graph",
  "external-adapter",
  "thread-outbox-provider",
]);

/** Fields a pure javascript module may not declare (process or effect fields). */
const JAVASCRIPT_FORBIDDEN = [
  "agent",
  "agent_card_url",
  "agent_identity",
  "allow_private_network",
  "args",
  "arguments",
  "command",
  "cwd",
  "external_adapter",
  "graph",
  "headers",
  "hook",
  "http",
  "input_mode",
  "method",
  "server",
  "task",
  "tool",
  "url",
];

/** The javascript worker's time limit (upstream's contract constant). */
const JAVASCRIPT_MAX_SECONDS = 30;

/** Where a source sits: a graph's inline `run:` may leave an agent task's agent and task open. */
export type SourceContext = "skill" | "inline-graph";

/** The source fields of a flattened runner (its keys that are source fields). */
export function flattenedSource(record: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(record))
    if ((SOURCE_FIELDS as readonly string[]).includes(key)) out[key] = value;
  return out;
}

/** Rejects keys that are not source fields, under `field`. */
export function rejectUnknownSourceFields(source: JsonObject, field: string): void {
  rejectUnknownFields(source, field, SOURCE_FIELDS);
}

const retiredHttp = (field: string): never =>
  invalid(`${field} http was removed; compose http.read, http.query, or http.execute in a graph.`);
const retiredCatalog = (field: string): never =>
  invalid(`${field} catalog was removed; invoke catalog tools from a graph tool step.`);

function javascriptModule(value: JsonValue | undefined): string {
  const module = requiredString(value, "source.module");
  const segments = module.split("/");
  const last = segments.at(-1) ?? "";
  if (
    module.startsWith("/") ||
    module.includes("\\") ||
    segments.some((segment) => segment === "" || segment === "." || segment === "..") ||
    !(last.endsWith(".mjs") || last.endsWith(".js"))
  )
    invalid(
      "source.module must be a portable relative .mjs or .js path without '.', '..', or backslash segments.",
    );
  return module;
}

function javascriptExport(value: JsonValue | undefined): string | undefined {
  const name = optionalString(value, "source.export");
  if (name === undefined) return undefined;
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name))
    invalid("source.export must be a JavaScript identifier.");
  return name;
}

function inputMode(value: JsonValue | undefined): string | undefined {
  const mode = optionalString(value, "source.input_mode");
  if (mode === undefined) return undefined;
  if (mode !== "args" && mode !== "stdin" && mode !== "none")
    invalid("source.input_mode must be args, stdin, or none.");
  return mode;
}

function graphSource(source: JsonObject, type: string): JsonObject | undefined {
  if (type !== "graph") return undefined;
  return validateGraph(requiredObject(source.graph, "source.graph"), inlineSource);
}

/** A graph step's inline `run:` source (an agent task may leave its agent and task open). */
export const inlineSource = (source: JsonObject): JsonObject =>
  validateSource(source, "inline-graph");

/**
 * Validates `source` as upstream validates a skill source and answers its normal form. Throws
 * UpstreamValidationError with upstream's sentence for the first problem it would find.
 */
export function validateSource(source: JsonObject, context: SourceContext = "skill"): JsonObject {
  const type = requiredString(source.type, "source.type");
  if (type === "http") retiredHttp("source.type");
  if (type === "catalog") retiredCatalog("source.type");
  rejectUnknownSourceFields(source, "source");
  const args = optionalStringArray(source.args, "source.args") ?? [];
  const mode = inputMode(source.input_mode);
  const timeoutSeconds = optionalCount(source.timeout_seconds, "source.timeout_seconds");
  if (type === "cli-tool") requiredString(source.command, "source.command");
  let module: string | undefined;
  let exported: string | undefined;
  if (type === "javascript") {
    const present = JAVASCRIPT_FORBIDDEN.filter((key) => key in source);
    if (present.length > 0)
      invalid(
        `javascript sources are pure domain modules and cannot declare effect or process fields: ${present.join(", ")}.`,
      );
    module = javascriptModule(source.module);
    exported = javascriptExport(source.export);
  } else if ("module" in source || "export" in source) {
    invalid("source.module and source.export are only valid for javascript sources.");
  }
  if (type === "agent-task" && ("command" in source || "args" in source))
    invalid(`${type} sources must not declare source.command or source.args.`);
  if (!SOURCE_KINDS.has(type)) invalid(`source.type ${type} is not a supported source type.`);
  if (
    type === "javascript" &&
    timeoutSeconds !== undefined &&
    (timeoutSeconds === 0 || timeoutSeconds > JAVASCRIPT_MAX_SECONDS)
  )
    invalid(
      `source.timeout_seconds for javascript must be between 1 and ${JAVASCRIPT_MAX_SECONDS}.`,
    );
  const adapter = externalAdapter(source, type);
  const outbox = threadOutboxProvider(source, type);
  const outputs = optionalObject(source.outputs, "source.outputs");
  if (outputs !== undefined) outputContract(outputs, "source.outputs is invalid: ");
  const command = optionalString(source.command, "source.command");
  const pages = artifactPages(source.pages, type);
  const cwd = optionalString(source.cwd, "source.cwd");
  const environment = environmentIr(environmentRequirements(source.environment));
  const server = mcpServer(source, type);
  const tool =
    type === "mcp"
      ? requiredString(source.tool, "source.tool")
      : optionalString(source.tool, "source.tool");
  const argumentsRecord = optionalObject(source.arguments, "source.arguments");
  const agentCardUrl =
    type === "a2a"
      ? requiredString(source.agent_card_url, "source.agent_card_url")
      : optionalString(source.agent_card_url, "source.agent_card_url");
  const agentIdentity = optionalString(source.agent_identity, "source.agent_identity");
  const agentRequired = type === "agent-task" && context === "skill";
  const agent = agentRequired
    ? requiredString(source.agent, "source.agent")
    : optionalString(source.agent, "source.agent");
  const task =
    type === "a2a" || agentRequired
      ? requiredString(source.task, "source.task")
      : optionalString(source.task, "source.task");
  const graph = graphSource(source, type);
  const act = actDeclaration(source.act);
  return put(
    { type, args, raw: source },
    {
      command,
      module,
      export: exported,
      pages,
      cwd,
      timeoutSeconds,
      inputMode: mode,
      environment,
      server,
      tool,
      arguments: argumentsRecord,
      agentCardUrl,
      agentIdentity,
      agent,
      task,
      outputs,
      graph,
      externalAdapter: adapter,
      threadOutboxProvider: outbox,
      act,
    },
  );
}
