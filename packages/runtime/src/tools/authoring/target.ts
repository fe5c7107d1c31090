/**
 * Where an authoring tool may look and write: `repo_root` resolves like every tool root
 * (tools/paths.ts, inside the workspace and outside runx's own state), and `target_dir` names a
 * child directory of it that may not exist yet. Both go through the shared containment checks,
 * so `..`, absolute paths, backslashes, symlinks out of the root and `.runx/` are refused before
 * anything is read.
 */
import { isRuntimeError, RuntimeError } from "../../errors.js";
import { resolveDirectory, resolveRoot, resolveWritable, splitRelative } from "../paths.js";
import type { ToolRoot } from "../paths.js";
import type { ToolContext } from "../types.js";

/** A resolved package target. */
export interface PackageTarget {
  root: ToolRoot;
  /** Absolute, canonical directory (it may not exist). */
  absolute: string;
  /** `/`-separated, relative to the root. */
  relative: string;
}

/** Resolves `repo_root` (default `.`). */
export function authoringRoot(ctx: ToolContext, repoRoot: string | undefined): Promise<ToolRoot> {
  return resolveRoot(ctx, { repoRoot: repoRoot ?? "." });
}

/** Resolves `target_dir` inside the root; an existing non-directory is refused. */
export async function resolveTarget(
  root: ToolRoot,
  rel: string,
  field = "target_dir",
): Promise<PackageTarget> {
  const parts = splitRelative(rel, field);
  if (parts.length === 0) {
    throw new RuntimeError("INPUT_INVALID", `${field} must name a child directory of repo_root`, {
      path: field,
    });
  }
  try {
    const dir = await resolveDirectory(root, rel, field);
    return { root, absolute: dir.absolute, relative: dir.relative };
  } catch (error) {
    if (!isRuntimeError(error) || error.code !== "FILE_NOT_FOUND") throw error;
  }
  const missing = await resolveWritable(root, rel, field);
  return { root, absolute: missing.absolute, relative: missing.relative };
}
