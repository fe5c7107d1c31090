/** `runx tool list` and `runx tool inspect <name>`: the native tool catalog. */
import { RuntimeError } from "../../errors.js";
import { runtimeToolCatalog } from "../../run/tools.js";
import type { ToolInspection } from "../../tools/catalog.js";
import type { Json, JsonRecord } from "../../tools/types.js";
import { expectPositionals, parseArgs } from "../args.js";
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

/** Parses and performs one `runx tool` action; throws RuntimeError for usage and lookup failures. */
function toolCommand(tokens: string[], ctx: CommandContext): number {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "tool" });
  const [action, name] = args.positionals;
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
  if (action === "inspect") {
    if (name === undefined) {
      throw new RuntimeError("USAGE", "runx tool inspect: name a tool (see runx tool list)");
    }
    expectPositionals(args, 2, "tool inspect");
    const tool = catalog.inspect(name);
    if (ctx.json) {
      const document = {
        status: "success",
        tool: { ...tool, execution_source_type: "native", reference_path: `native:${tool.name}` },
      };
      ctx.out(`${JSON.stringify(document)}\n`);
    } else ctx.out(renderInspection(tool, ctx.env.color));
    return 0;
  }
  throw new RuntimeError(
    "USAGE",
    action === undefined
      ? "runx tool: expected 'list' or 'inspect <name>'"
      : `runx tool ${action}: unknown action (expected 'list' or 'inspect <name>')`,
  );
}
