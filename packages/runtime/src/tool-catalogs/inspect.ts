/**
 * `runx tool inspect <ref>`: the contract of one tool. Without `--source` a ref resolves, in
 * order, to a local process tool under each RUNX_TOOL_ROOTS directory (`<root>/<ns>/<tool>/
 * manifest.json`), then under the workspace's `tools/`, then to a native tool. A ref holding a
 * `/` is a tool directory or manifest path (relative to the workspace). With `--source` only
 * that catalog is consulted. Local paths are reported absolute, as upstream does.
 */
import { statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import type { ToolCatalog } from "../tools/catalog.js";
import { LOCAL_SOURCE } from "./local-tools.js";
import { readManifest, type ToolInputDefinition, type ToolManifest } from "./manifest.js";
import { catalogProvenance, NATIVE_SOURCE, type CatalogSource } from "./sources.js";

/** How `runx tool inspect` finds tools. */
export interface InspectOptions {
  ref: string;
  source?: string;
  workspaceRoot: string;
  /** RUNX_TOOL_ROOTS, in order. */
  toolRoots: readonly string[];
  native: ToolCatalog;
  /** Catalog sources `--source` may name (the native one included). */
  sources: readonly CatalogSource[];
}

/** A local or imported tool's contract (upstream's inspect shape). */
export interface ToolContract {
  ref: string;
  name: string;
  description?: string;
  execution_source_type: string;
  inputs: Record<string, ToolInputDefinition>;
  scopes: string[];
  runtime?: { command: string; args?: string[]; cwd?: string };
  risk?: unknown;
  reference_path: string;
  skill_directory: string;
  provenance: Record<string, unknown>;
}

/** The `runx tool inspect --json` document. */
export interface ToolInspectReport {
  status: "success";
  tool: ToolContract | Record<string, unknown>;
}

const TOOL_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/;

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function runtimeOf(manifest: ToolManifest): ToolContract["runtime"] {
  const s = manifest.source;
  const command = s.type === "mcp" ? s.server : s.command !== undefined ? s : undefined;
  if (command === undefined || command.command === undefined) return undefined;
  return {
    command: command.command,
    ...(command.args !== undefined && command.args.length > 0 ? { args: [...command.args] } : {}),
    ...(command.cwd !== undefined ? { cwd: command.cwd } : {}),
  };
}

function localContract(ref: string, manifestPath: string): ToolContract {
  const read = readManifest(manifestPath);
  if (!read.ok) {
    throw new RuntimeError("TOOL_MANIFEST_INVALID", read.problem, { path: manifestPath });
  }
  const m = read.manifest;
  if (!ref.includes("/") && m.name !== ref) {
    throw new RuntimeError(
      "TOOL_MANIFEST_INVALID",
      `name is ${JSON.stringify(m.name)}, but the manifest sits where ${JSON.stringify(ref)} belongs.`,
      { path: manifestPath },
    );
  }
  const runtime = runtimeOf(m);
  return {
    ref,
    name: m.name,
    ...(m.description !== undefined ? { description: m.description } : {}),
    execution_source_type: m.source.type,
    inputs: m.inputs,
    scopes: [...m.scopes],
    ...(runtime !== undefined ? { runtime } : {}),
    ...(m.risk !== undefined ? { risk: m.risk } : {}),
    reference_path: manifestPath,
    skill_directory: dirname(manifestPath),
    provenance: { origin: "local" },
  };
}

/** The manifest path a ref names in the local tool roots, or undefined. */
function findLocal(options: InspectOptions): string | undefined {
  const { ref, workspaceRoot } = options;
  if (ref.includes("/")) {
    const path = resolve(workspaceRoot, ref);
    if (isFile(path) && basename(path) === "manifest.json") return path;
    return isFile(join(path, "manifest.json")) ? join(path, "manifest.json") : undefined;
  }
  if (!TOOL_NAME.test(ref)) return undefined;
  const dot = ref.indexOf(".");
  const rel = join(ref.slice(0, dot), ref.slice(dot + 1), "manifest.json");
  const roots = [
    ...options.toolRoots.map((r) => resolve(workspaceRoot, r)),
    join(workspaceRoot, "tools"),
  ];
  return roots.map((root) => join(root, rel)).find(isFile);
}

function nativeContract(options: InspectOptions): Record<string, unknown> {
  const tool = options.native.inspect(options.ref);
  const source = options.sources.find((s) => s.id === NATIVE_SOURCE);
  const entry = source?.tools().find((t) => t.name === tool.name);
  return {
    ref: options.ref,
    ...tool,
    execution_source_type: "native",
    reference_path: `native:${tool.name}`,
    provenance: {
      origin: "native",
      ...(source !== undefined && entry !== undefined ? catalogProvenance(source, entry) : {}),
    },
  };
}

function notFound(ref: string, where: string): RuntimeError {
  return new RuntimeError("TOOL_NOT_FOUND", `no tool ${JSON.stringify(ref)} in ${where}`, {
    tool: ref,
  });
}

/** Inspects one tool (see the module comment for the lookup order). */
export function inspectTool(options: InspectOptions): ToolInspectReport {
  const { ref, source } = options;
  if (source !== undefined) {
    const catalog = options.sources.find((s) => s.id === source);
    if (catalog === undefined) {
      throw new RuntimeError(
        "USAGE",
        `runx tool inspect: unknown tool source ${JSON.stringify(source)} (known: ${options.sources.map((s) => s.id).join(", ")})`,
        { source },
      );
    }
    if (catalog.id === NATIVE_SOURCE) return { status: "success", tool: nativeContract(options) };
    if (catalog.id === LOCAL_SOURCE) {
      // The local catalog is the tool roots themselves: the manifest's own contract.
      const manifestPath = findLocal(options);
      if (manifestPath === undefined) throw notFound(ref, "the local tool roots");
      return { status: "success", tool: localContract(ref, manifestPath) };
    }
    const entry = catalog.tools().find((t) => t.name === ref);
    if (entry === undefined) throw notFound(ref, `tool source ${source}`);
    return {
      status: "success",
      tool: {
        ref,
        name: entry.name,
        ...(entry.summary !== undefined ? { description: entry.summary } : {}),
        execution_source_type: "catalog",
        inputs: entry.inputs,
        scopes: [...entry.required_scopes],
        reference_path: `catalog:${catalog.id}:${entry.name}`,
        skill_directory: ".",
        provenance: { origin: "imported", ...catalogProvenance(catalog, entry) },
      },
    };
  }
  const manifestPath = findLocal(options);
  if (manifestPath !== undefined) {
    return { status: "success", tool: localContract(ref, manifestPath) };
  }
  if (options.native.get(ref) !== undefined) {
    return { status: "success", tool: nativeContract(options) };
  }
  throw notFound(ref, "the tool roots, the workspace tools/ or the native catalog");
}
