/**
 * `runx tool list|search|inspect|build`: the native tool catalog, imported catalogs (the fixture
 * MCP catalog when RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1), local process tools (RUNX_TOOL_ROOTS and
 * the workspace's tools/) and read-only manifest validation.
 */
import { delimiter } from "node:path";
import { RuntimeError } from "../../errors.js";
import { runtimeToolCatalog } from "../../run/tools.js";
import { buildTools, type ToolBuildReport } from "../../tool-catalogs/build.js";
import { fixtureMcpCatalog } from "../../tool-catalogs/fixture-mcp-catalog.js";
import { inspectTool, type ToolContract } from "../../tool-catalogs/inspect.js";
import { localCatalogSource, parseToolRoots } from "../../tool-catalogs/local-tools.js";
import { searchTools, type ToolSearchReport } from "../../tool-catalogs/search.js";
import { nativeCatalogSource, type CatalogSource } from "../../tool-catalogs/sources.js";
import type { ToolCatalog, ToolInspection } from "../../tools/catalog.js";
import type { Json, JsonRecord } from "../../tools/types.js";
import { expectPositionals, flagSet, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { styler } from "../render.js";

function isRecord(value: Json | undefined): value is JsonRecord {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** One line per top-level field of a schema: name, type, required/default, description. */
function fieldLines(schema: JsonRecord): string[] {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const names = Object.keys(properties);
  const width = Math.max(0, ...names.map((n) => n.length));
  return names.map((name) => {
    const field = properties[name];
    const spec = isRecord(field) ? field : {};
    const type = Array.isArray(spec.enum)
      ? spec.enum.map((v) => JSON.stringify(v)).join("|")
      : Array.isArray(spec.type)
        ? spec.type.filter((t): t is string => typeof t === "string").join("|")
        : typeof spec.type === "string"
          ? spec.type
          : "any";
    const marks = [
      required.has(name) ? "required" : undefined,
      spec.default !== undefined ? `default ${JSON.stringify(spec.default)}` : undefined,
    ].filter((m) => m !== undefined);
    const note = marks.length > 0 ? ` (${marks.join(", ")})` : "";
    const description = typeof spec.description === "string" ? `  ${spec.description}` : "";
    return `  ${name.padEnd(width)}  ${type}${note}${description}`;
  });
}

function renderInspection(tool: ToolInspection, color: boolean): string {
  const s = styler(color);
  return [
    `${s.bold(tool.name)}${tool.mutating ? "  (mutating)" : ""}`,
    tool.description,
    `scopes: ${tool.scopes.join(", ") || "-"}`,
    "",
    "inputs:",
    ...fieldLines(tool.input_schema),
    "",
    "outputs:",
    ...fieldLines(tool.output_schema),
    "",
  ].join("\n");
}

/** Runs `runx tool`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, () => Promise.resolve().then(() => toolCommand(tokens, ctx)));
}

const ACTIONS = "'list', 'search <query>', 'inspect <ref>' or 'build <tool-dir>|--all'";

/**
 * The catalog sources this invocation may search: native, the local tools (RUNX_TOOL_ROOTS and
 * the workspace's tools/), plus the fixture MCP catalog when enabled.
 */
function catalogSources(native: ToolCatalog, ctx: CommandContext): CatalogSource[] {
  const enabled = ctx.env.processEnv.RUNX_ENABLE_FIXTURE_TOOL_CATALOG === "1";
  const local = localCatalogSource({
    workspaceRoot: ctx.env.workspaceRoot,
    toolRoots: toolRoots(ctx),
  });
  return [nativeCatalogSource(native), local, ...(enabled ? [fixtureMcpCatalog] : [])];
}

function toolRoots(ctx: CommandContext): string[] {
  return parseToolRoots(ctx.env.processEnv.RUNX_TOOL_ROOTS, delimiter);
}

function renderContract(tool: ToolContract): string {
  const inputs = Object.entries(tool.inputs).map(
    ([name, input]) =>
      `  ${name}: ${input.type} · ${input.required ? "required" : "optional"}${input.description !== undefined ? ` · ${input.description}` : ""}`,
  );
  const origin = String(tool.provenance.origin);
  return [
    `${tool.name}  ${origin}`,
    tool.description ?? "",
    `exec: ${tool.execution_source_type}`,
    `path: ${tool.reference_path}`,
    `scopes: ${tool.scopes.join(", ") || "-"}`,
    ...(origin === "imported" ? [`catalog: ${String(tool.provenance.catalog_ref)}`] : []),
    "",
    "inputs:",
    ...inputs,
    "",
  ].join("\n");
}

function renderSearch(report: ToolSearchReport): string {
  if (report.results.length === 0) return `no tools match ${JSON.stringify(report.query)}\n`;
  const width = Math.max(...report.results.map((r) => r.name.length));
  return report.results
    .map((r) => `${r.name.padEnd(width)}  ${r.source}  ${r.summary ?? ""}\n`)
    .join("");
}

function renderBuild(report: ToolBuildReport): string {
  return [
    `tool build: ${report.built.length} valid, ${report.errors.length} invalid`,
    ...report.built.map((b) => `  ok  ${b.path}  ${b.source_hash}`),
    ...report.errors.map((e) => `  ✗   ${e}`),
    "",
  ].join("\n");
}

/** Parses and performs one `runx tool` action; throws RuntimeError for usage and lookup failures. */
function toolCommand(tokens: string[], ctx: CommandContext): number {
  const args = parseArgs(
    tokens,
    { json: { aliases: ["-j"] }, source: { value: true }, all: {} },
    { command: "tool" },
  );
  const [action, name] = args.positionals;
  const source = flagValue(args, "source");
  if (source !== undefined && action !== "search" && action !== "inspect") {
    throw new RuntimeError(
      "USAGE",
      "--source applies to 'runx tool search' and 'runx tool inspect'",
    );
  }
  if (flagSet(args, "all") && action !== "build") {
    throw new RuntimeError("USAGE", "--all applies to 'runx tool build'");
  }
  const catalog = runtimeToolCatalog();
  if (action === "list") {
    expectPositionals(args, 1, "tool list");
    const tools = catalog.list();
    if (ctx.json) ctx.out(`${JSON.stringify({ status: "success", tools })}\n`);
    else {
      const s = styler(ctx.env.color);
      const width = Math.max(...tools.map((t) => t.name.length));
      for (const t of tools) {
        const mark = t.mutating ? "mutate" : "read  ";
        ctx.out(`${t.name.padEnd(width)}  ${mark}  ${s.dim(t.scopes.join(","))}\n`);
        ctx.out(`${"".padEnd(width)}  ${t.description}\n`);
      }
    }
    return 0;
  }
  if (action === "search") {
    if (name === undefined) throw new RuntimeError("USAGE", "runx tool search: give a query");
    expectPositionals(args, 2, "tool search");
    const report = searchTools(catalogSources(catalog, ctx), name, source);
    ctx.out(ctx.json ? `${JSON.stringify(report)}\n` : renderSearch(report));
    return 0;
  }
  if (action === "inspect") {
    if (name === undefined) {
      throw new RuntimeError("USAGE", "runx tool inspect: name a tool (see runx tool list)");
    }
    expectPositionals(args, 2, "tool inspect");
    const report = inspectTool({
      ref: name,
      ...(source !== undefined ? { source } : {}),
      workspaceRoot: ctx.env.workspaceRoot,
      toolRoots: toolRoots(ctx),
      native: catalog,
      sources: catalogSources(catalog, ctx),
    });
    if (ctx.json) ctx.out(`${JSON.stringify(report)}\n`);
    else if (String(report.tool.execution_source_type) === "native") {
      ctx.out(renderInspection(report.tool as unknown as ToolInspection, ctx.env.color));
    } else ctx.out(renderContract(report.tool as ToolContract));
    return 0;
  }
  if (action === "build") {
    const all = flagSet(args, "all");
    if ((name === undefined) === !all) {
      throw new RuntimeError("USAGE", "runx tool build: give one tool directory or --all");
    }
    expectPositionals(args, 2, "tool build");
    const report = buildTools(
      ctx.env.workspaceRoot,
      name !== undefined ? { toolPath: name } : { all: true },
    );
    ctx.out(ctx.json ? `${JSON.stringify(report)}\n` : renderBuild(report));
    return report.status === "success" ? 0 : 1;
  }
  throw new RuntimeError(
    "USAGE",
    action === undefined
      ? `runx tool: expected ${ACTIONS}`
      : `runx tool ${action}: unknown action (expected ${ACTIONS})`,
  );
}
