/**
 * Upstream's skill source (`SkillSource`): the `source` mapping of a SKILL.md, a runner, a tool
 * manifest or a `parser.validateSkillSource` input, checked in upstream's order with its
 * sentences and answered in its normal form (camelCase typed fields beside `raw`). A graph
 * source carries its graph in graph IR form. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  invalid,
  optionalCount,
  optionalObject,
  optionalString,
  optionalStringArray,
  rejectUnknownFields,
  requiredObject,
  requiredString,
  serdeKind,
} from "./fields.js";
import { validateGraph } from "./graph.js";
import { outputContract } from "./output-contract.js";

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

/** The javascript worker's limits (upstream's contract constants). */
const JAVASCRIPT_MAX_SECONDS = 30;
const JAVASCRIPT_MAX_INPUT_BYTES = 4 * 1024 * 1024;

/** The keys of an `act:` block, in upstream's declaration order (its serde field list). */
const ACT_FIELDS = [
  "form",
  "form_from",
  "purpose",
  "purpose_from",
  "legitimacy",
  "legitimacy_from",
  "reason_from",
  "reason_from_input",
  "target_from",
  "decision_from",
  "effect_from",
  "effect_field_from",
  "effect_from_input",
  "effect_type",
  "effect_prefix",
  "effect_prefix_from",
  "actor_from",
  "authority_from",
  "authority_term_from",
  "authority_parent_from",
  "authority_subset_proof_from",
  "mint_authority",
  "requested_scope_from",
  "previous_from",
  "reason_step",
  "effect_step",
] as const;

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

function put(target: JsonObject, fields: Record<string, JsonValue | undefined>): JsonObject {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) target[key] = value;
  return target;
}

const retiredHttp = (field: string): never =>
  invalid(`${field} http was removed; compose http.read, http.query, or http.execute in a graph.`);
const retiredCatalog = (field: string): never =>
  invalid(`${field} catalog was removed; invoke catalog tools from a graph tool step.`);

/** A relative path whose every component is a plain name (no `.`, `..`, root or empty). */
function safeRelativePath(value: string): boolean {
  if (value.trim() === "" || value.startsWith("/")) return false;
  // `a//b` and a trailing `/` are fine for a path's components; `.` components are dropped
  // by the component walk only when they are not leading, and a leading `./` is CurDir.
  const parts = value.split("/");
  return parts.every((part, index) => {
    if (part === "") return index > 0;
    if (part === "..") return false;
    if (part === ".") return index > 0;
    return true;
  });
}

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

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `source.environment`: required/optional variable names, portable, unique, not RUNX_*. */
export function environmentRequirements(value: JsonValue | undefined): {
  required: string[];
  optional: string[];
} {
  if (value === undefined) return { required: [], optional: [] };
  const environment = requiredObject(value, "source.environment");
  rejectUnknownFields(environment, "source.environment", ["required", "optional"]);
  const required = optionalStringArray(environment.required, "source.environment.required") ?? [];
  const optional = optionalStringArray(environment.optional, "source.environment.optional") ?? [];
  const seen = new Set<string>();
  for (const [field, names] of [
    ["source.environment.required", required],
    ["source.environment.optional", optional],
  ] as const) {
    for (const name of names) {
      if (!ENV_NAME.test(name))
        invalid(
          `${field} entry ${JSON.stringify(name)} must be a portable environment variable name`,
        );
      if (name.startsWith("RUNX_"))
        invalid(`${field} cannot request runtime-reserved environment variable ${name}`);
      if (seen.has(name)) invalid(`${field} repeats environment variable ${JSON.stringify(name)}`);
      seen.add(name);
    }
  }
  return { required, optional };
}

function environmentIr(env: { required: string[]; optional: string[] }): JsonObject | undefined {
  if (env.required.length === 0 && env.optional.length === 0) return undefined;
  return put(
    {},
    {
      required: env.required.length > 0 ? env.required : undefined,
      optional: env.optional.length > 0 ? env.optional : undefined,
    },
  );
}

function pageInputName(name: string, field: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(name))
    invalid(`${field} must name one declared input using letters, digits, '_' or '-'.`);
  return name;
}

/** `source.pages`: runtime-owned paging of a contained file, javascript sources only. */
function artifactPages(value: JsonValue | undefined, type: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  if (type !== "javascript")
    invalid("source.pages is only valid for deterministic javascript sources.");
  const pages = requiredObject(value, "source.pages");
  rejectUnknownFields(pages, "source.pages", [
    "framing",
    "media_type",
    "page_bytes",
    "path_from",
    "path_scope_from",
  ]);
  const pathFrom = pageInputName(
    requiredString(pages.path_from, "source.pages.path_from"),
    "source.pages.path_from",
  );
  const scope = optionalString(pages.path_scope_from, "source.pages.path_scope_from");
  const pathScopeFrom =
    scope === undefined ? undefined : pageInputName(scope, "source.pages.path_scope_from");
  if (pathFrom === "runx_page" || pathScopeFrom === "runx_page")
    invalid("source.pages input names cannot use the runtime-reserved runx_page field.");
  if (pathScopeFrom === pathFrom)
    invalid("source.pages.path_from and path_scope_from must name different inputs.");
  const mediaType = requiredString(pages.media_type, "source.pages.media_type");
  const framing = requiredString(pages.framing, "source.pages.framing");
  if (framing !== "json_array")
    invalid(`source.pages.framing ${JSON.stringify(framing)} is unsupported; expected json_array.`);
  const pageBytes = optionalCount(pages.page_bytes, "source.pages.page_bytes") ?? 1024 * 1024;
  if (pageBytes === 0 || pageBytes > JAVASCRIPT_MAX_INPUT_BYTES)
    invalid(`source.pages.page_bytes must be between 1 and ${JAVASCRIPT_MAX_INPUT_BYTES}.`);
  return put(
    { path_from: pathFrom },
    {
      path_scope_from: pathScopeFrom,
      media_type: mediaType,
      framing,
      page_bytes: pageBytes,
    },
  );
}

/** `source.external_adapter`: exactly one of an inline manifest or a relative manifest path. */
function externalAdapter(source: JsonObject, type: string): JsonObject | undefined {
  const declaration = source.external_adapter;
  if (type !== "external-adapter") {
    if (declaration !== undefined)
      invalid("source.external_adapter is only valid for external-adapter sources.");
    return undefined;
  }
  const record = requiredObject(declaration, "source.external_adapter");
  rejectUnknownFields(record, "source.external_adapter", ["manifest", "manifest_path"]);
  const hasManifest = record.manifest !== undefined;
  const hasPath = record.manifest_path !== undefined;
  if (hasManifest === hasPath)
    invalid("source.external_adapter must declare exactly one of manifest or manifest_path.");
  if (hasManifest) {
    const manifest = record.manifest;
    if (!isJsonObject(manifest))
      invalid(
        `source.external_adapter.manifest is invalid: invalid type: ${serdeKind(manifest ?? null)}, expected struct ExternalAdapterManifest`,
      );
    return { inline: manifest };
  }
  const path = requiredString(record.manifest_path, "source.external_adapter.manifest_path");
  if (!safeRelativePath(path))
    invalid(
      `source.external_adapter.manifest_path must be a relative path below the skill directory: '${path}'`,
    );
  return { path };
}

function outboxPath(record: JsonObject, key: string, required: boolean): string | undefined {
  const field = `source.thread_outbox_provider.${key}`;
  const path = required ? requiredString(record[key], field) : optionalString(record[key], field);
  if (path !== undefined && !safeRelativePath(path))
    invalid(`${field} must be a relative path below the skill directory: '${path}'`);
  return path;
}

/** `source.thread_outbox_provider`: a push or fetch operation over relative paths. */
function threadOutboxProvider(source: JsonObject, type: string): JsonObject | undefined {
  const declaration = source.thread_outbox_provider;
  if (type !== "thread-outbox-provider") {
    if (declaration !== undefined)
      invalid("source.thread_outbox_provider is only valid for thread-outbox-provider sources.");
    return undefined;
  }
  const record = requiredObject(declaration, "source.thread_outbox_provider");
  rejectUnknownFields(record, "source.thread_outbox_provider", [
    "operation",
    "manifest_path",
    "push_path",
    "fetch_path",
  ]);
  const operation = requiredString(record.operation, "source.thread_outbox_provider.operation");
  if (operation !== "push" && operation !== "fetch")
    invalid(`source.thread_outbox_provider.operation must be push or fetch, got '${operation}'.`);
  const manifestPath = outboxPath(record, "manifest_path", true);
  const pushPath = outboxPath(record, "push_path", false);
  const fetchPath = outboxPath(record, "fetch_path", false);
  if (operation === "push" && fetchPath !== undefined)
    invalid("source.thread_outbox_provider.fetch_path is only valid for fetch operations.");
  if (operation === "fetch" && pushPath !== undefined)
    invalid("source.thread_outbox_provider.push_path is only valid for push operations.");
  if (operation === "fetch" && fetchPath === undefined)
    invalid("source.thread_outbox_provider.fetch_path is required for fetch operations.");
  return put({ operation }, { manifestPath, pushPath, fetchPath });
}

/** Upstream deserializes `act:` strictly; a shape problem reads as its deserializer words it. */
function actDeclaration(value: JsonValue | undefined): JsonObject | undefined {
  if (value === undefined) return undefined;
  const malformed = (reason: string): never => invalid(`source.act is malformed: ${reason}`);
  if (!isJsonObject(value))
    return malformed(`invalid type: ${serdeKind(value)}, expected struct ActDeclaration`);
  const act: JsonObject = {};
  for (const key of Object.keys(value).sort()) {
    const entry = value[key];
    if (!(ACT_FIELDS as readonly string[]).includes(key))
      malformed(
        `unknown field \`${key}\`, expected one of ${ACT_FIELDS.map((f) => `\`${f}\``).join(", ")}`,
      );
    if (entry === null || entry === undefined) continue;
    if (key === "mint_authority") {
      if (!isJsonObject(entry))
        malformed(`invalid type: ${serdeKind(entry)}, expected struct MintAuthorityDirective`);
      const directive = entry as JsonObject;
      for (const inner of Object.keys(directive).sort())
        if (inner !== "source") malformed(`unknown field \`${inner}\`, expected \`source\``);
      const source = directive.source;
      if (source === undefined) malformed("missing field `source`");
      if (typeof source !== "string")
        return malformed(
          `invalid type: ${serdeKind(source ?? null)}, expected enum MintScopeSource`,
        );
      if (source !== "static_scopes" && source !== "requested_scope")
        malformed(
          `unknown variant \`${source}\`, expected \`static_scopes\` or \`requested_scope\``,
        );
      act[key] = { source };
      continue;
    }
    if (typeof entry !== "string")
      malformed(`invalid type: ${serdeKind(entry)}, expected a string`);
    act[key] = entry;
  }
  const mint = act.mint_authority;
  if (mint === undefined) {
    if (act.requested_scope_from !== undefined)
      invalid("source.act.requested_scope_from is only valid with a mint_authority directive.");
  } else {
    if (
      act.authority_term_from !== undefined ||
      act.authority_parent_from !== undefined ||
      act.authority_subset_proof_from !== undefined
    )
      invalid(
        "source.act.mint_authority (compute path) is mutually exclusive with the pre-built authority_term_from / authority_parent_from / authority_subset_proof_from keys.",
      );
    const from = isJsonObject(mint) ? mint.source : undefined;
    if (from === "static_scopes" && act.requested_scope_from !== undefined)
      invalid(
        "source.act.mint_authority source static_scopes must not declare requested_scope_from.",
      );
    if (from === "requested_scope" && act.requested_scope_from === undefined)
      invalid("source.act.mint_authority source requested_scope requires requested_scope_from.");
  }
  if (
    act.reason_from_input !== undefined &&
    (act.reason_step !== undefined || act.reason_from !== undefined)
  )
    invalid(
      "source.act.reason_from_input (operator-authored) is mutually exclusive with the step-authored reason_step / reason_from keys.",
    );
  return act;
}

function mcpServer(source: JsonObject, type: string): JsonObject | undefined {
  if (type !== "mcp") return undefined;
  const server = requiredObject(source.server, "source.server");
  return put(
    {
      command: requiredString(server.command, "source.server.command"),
      args: optionalStringArray(server.args, "source.server.args") ?? [],
    },
    { cwd: optionalString(server.cwd, "source.server.cwd") },
  );
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
