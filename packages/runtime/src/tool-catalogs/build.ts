/**
 * `runx tool build`: read-only validation of local tool manifests. Nothing is
 * written; the report (`runx.tool.build.v1`) lists each valid tool with its digests and each
 * invalid one as `<tool path>: <one sentence naming the field>`.
 */
import { readdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { schemaHash, sourceHash, ToolSourceError } from "./hashes.js";
import { readManifest } from "./manifest.js";

/** One tool that validated. */
export interface BuiltTool {
  path: string;
  manifest: string;
  source_hash: string;
  schema_hash: string;
}

/** The `runx tool build --json` document. */
export interface ToolBuildReport {
  schema: "runx.tool.build.v1";
  status: "success" | "failure";
  built: BuiltTool[];
  errors: string[];
}

/** What to build: one tool directory, or every `tools/<namespace>/<tool>` of the workspace. */
export type ToolBuildTarget = { toolPath: string } | { all: true };

/** A path as the report shows it: workspace-relative with `/`, or absolute when outside. */
function projectPath(root: string, path: string): string {
  const rel = relative(root, path);
  if (rel === "") return ".";
  if (rel.startsWith("..") || isAbsolute(rel)) return path.split(sep).join("/");
  return rel.split(sep).join("/");
}

function directories(path: string): string[] {
  try {
    return readdirSync(path, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(path, e.name))
      .sort();
  } catch {
    return [];
  }
}

function hasManifest(dir: string): boolean {
  try {
    return statSync(join(dir, "manifest.json")).isFile();
  } catch {
    return false;
  }
}

/** Every `tools/<namespace>/<tool>` directory holding a manifest.json, in path order. */
export function discoverToolDirectories(root: string): string[] {
  return directories(join(root, "tools")).flatMap((ns) => directories(ns).filter(hasManifest));
}

function buildOne(root: string, toolDir: string): BuiltTool | string {
  const manifestPath = join(toolDir, "manifest.json");
  const read = readManifest(manifestPath);
  if (!read.ok) return read.problem;
  const manifest = read.manifest;
  const expected = `${basename(dirname(toolDir))}.${basename(toolDir)}`;
  if (manifest.name !== expected) {
    return `name must be "${expected}" to match the tool directory.`;
  }
  try {
    return {
      path: projectPath(root, toolDir),
      manifest: projectPath(root, manifestPath),
      source_hash: sourceHash(toolDir, manifest),
      schema_hash: schemaHash(manifest),
    };
  } catch (error) {
    if (error instanceof ToolSourceError) return error.message;
    throw error;
  }
}

/** Validates the target tools under workspace `root` and reports; never writes. */
export function buildTools(root: string, target: ToolBuildTarget): ToolBuildReport {
  const dirs = "all" in target ? discoverToolDirectories(root) : [resolve(root, target.toolPath)];
  const built: BuiltTool[] = [];
  const errors: string[] = [];
  for (const dir of dirs) {
    const result = buildOne(root, dir);
    if (typeof result === "string") errors.push(`${projectPath(root, dir)}: ${result}`);
    else built.push(result);
  }
  return {
    schema: "runx.tool.build.v1",
    status: errors.length === 0 ? "success" : "failure",
    built,
    errors,
  };
}
