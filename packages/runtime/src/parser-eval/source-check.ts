/**
 * Upstream's checks of a skill source (`source.*` fields, in upstream's order and with its
 * sentences), shared by tool manifests, runner definitions and SKILL.md sources. Pure.
 */
import type { JsonObject } from "../parser/json.js";
import {
  invalid,
  optionalCount,
  optionalObject,
  optionalString,
  optionalStringArray,
  requiredObject,
  requiredString,
} from "./fields.js";

/** Source kinds upstream knows (tool manifests narrow these further). */
const SOURCE_KINDS = new Set([
  "cli-tool",
  "javascript",
  "mcp",
  "catalog",
  "a2a",
  "agent",
  "agent-task",
  "harness-hook",
  "graph",
  "http",
  "external-adapter",
  "thread-outbox-provider",
]);

/** Fields a source kind requires beyond `command` (cli-tool) and the kind-specific objects. */
const REQUIRED_BY_KIND: Record<string, readonly string[]> = {
  "agent-task": ["agent", "task"],
  a2a: ["agent_card_url", "task"],
  mcp: ["tool"],
  catalog: ["catalog_ref"],
  "harness-hook": ["hook"],
};

/** The source fields upstream reads after the server, in its order (`arguments` is a map). */
const SOURCE_STRING_FIELDS = [
  "catalog_ref",
  "tool",
  "arguments",
  "agent_card_url",
  "agent_identity",
  "agent",
  "task",
  "hook",
] as const;

/**
 * Checks `source` as upstream validates a skill source and returns its type. A type upstream
 * does not know is refused (`"reject"`), or left to our own parser (`"defer"`), which knows a
 * few spellings of its own.
 */
export function checkSource(source: JsonObject, unknownKinds: "reject" | "defer"): string {
  const type = requiredString(source.type, "source.type");
  optionalStringArray(source.args, "source.args");
  const inputMode = optionalString(source.input_mode, "source.input_mode");
  if (inputMode !== undefined && !["args", "stdin", "none"].includes(inputMode))
    invalid("source.input_mode must be args, stdin, or none.");
  optionalCount(source.timeout_seconds, "source.timeout_seconds");
  if (type === "cli-tool") requiredString(source.command, "source.command");
  if (
    (type === "agent-task" || type === "harness-hook") &&
    ("command" in source || "args" in source)
  )
    invalid(`${type} sources must not declare source.command or source.args.`);
  if (!SOURCE_KINDS.has(type)) {
    if (unknownKinds === "defer") return type;
    invalid(`source.type ${type} is not a supported source type.`);
  }
  optionalString(source.command, "source.command");
  optionalString(source.cwd, "source.cwd");
  if (type === "mcp") {
    const server = requiredObject(source.server, "source.server");
    requiredString(server.command, "source.server.command");
    optionalStringArray(server.args, "source.server.args");
    optionalString(server.cwd, "source.server.cwd");
  }
  const required = REQUIRED_BY_KIND[type] ?? [];
  for (const key of SOURCE_STRING_FIELDS) {
    if (key === "arguments") optionalObject(source.arguments, "source.arguments");
    else if (required.includes(key)) requiredString(source[key], `source.${key}`);
    else optionalString(source[key], `source.${key}`);
  }
  optionalObject(source.outputs, "source.outputs");
  if (type === "graph") requiredObject(source.graph, "source.graph");
  if (type === "http") requiredString(source.url, "source.url");
  if (type === "javascript") requiredString(source.module, "source.module");
  return type;
}
