/**
 * Path containment for the filesystem and artifact tools. Every tool path is
 * relative to a root chosen by `path_scope` (workspace or the calling skill's package) and
 * `repo_root`. Lexically, absolute paths, `..` segments, backslashes and NUL are refused; then
 * the nearest existing ancestor is canonicalised (symlinks followed) and must stay under the
 * canonical root. Writes never go through a symlink: the final component may not be one.
 *
 * Every resolved path, read or write, is then checked against runx's own state (runx-state.ts):
 * `.runx/`, the receipt directory, `$RUNX_HOME` and the registry are never reachable by a tool.
 *
 * Failures are PATH_ESCAPE (POLICY_DENIED for runx's state) with a message naming the
 * offending relative path as given, never a host path. Containment guards against a package
 * steering the runtime; it is not an OS sandbox (a concurrent process that swaps directories
 * for symlinks can still race a check).
 */
import type { Stats } from "node:fs";
import { lstat, realpath, stat } from "node:fs/promises";
import { isAbsolute, join, sep } from "node:path";
import { RuntimeError } from "../errors.js";
import { StateGuard, type StateAccess } from "./runx-state.js";
import type { ToolContext } from "./types.js";

/** Which root relative paths start from. */
export type PathScope = "workspace" | "skill";

/** A root for tool paths: the canonical directory plus the `repo_root` label shown in outputs. */
export interface ToolRoot {
  /** Canonical absolute directory (never shown to callers). */
  dir: string;
  /** The `repo_root` input as given (what outputs report). */
  label: string;
  /** runx's own state, which no path under this root may reach. */
  guard: StateGuard;
}

/** A contained path: canonical absolute form plus the normalized relative form callers see. */
export interface ContainedPath {
  absolute: string;
  /** `/`-separated, without `.` segments; `.` for the root itself. */
  relative: string;
}

/** A write target whose parent chain is contained. */
export interface WritablePath extends ContainedPath {
  /** Canonical parent directory as it will exist after `missingDirs` are created. */
  parent: string;
  /** Directories to create, outermost first (canonical absolute paths). */
  missingDirs: string[];
  /** The target exists as a regular file (it will be replaced). */
  exists: boolean;
}

function escape(field: string, rel: string, reason: string): RuntimeError {
  return new RuntimeError("PATH_ESCAPE", `${field} ${JSON.stringify(rel)} ${reason}`, {
    path: field,
    target: rel,
  });
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** True when `candidate` is `root` or lies beneath it (both canonical). */
export function isInside(root: string, candidate: string): boolean {
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  return candidate === root || candidate.startsWith(prefix);
}

/**
 * Splits a relative tool path into normal segments; refuses NUL, absolute or drive paths,
 * backslashes and any `..` segment (even one that would stay inside).
 */
export function splitRelative(rel: string, field: string): string[] {
  if (rel.includes("\0")) throw escape(field, rel, "contains a NUL byte");
  if (isAbsolute(rel) || rel.startsWith("/") || /^[A-Za-z]:/.test(rel)) {
    // An absolute input is a host path: name the field, not the value.
    throw new RuntimeError(
      "PATH_ESCAPE",
      `${field} is absolute; tool paths are relative to their root`,
      {
        path: field,
      },
    );
  }
  if (rel.includes("\\")) throw escape(field, rel, "contains a backslash");
  const parts = rel.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw escape(field, rel, "contains a '..' segment");
  return parts;
}

/**
 * Canonicalises `root/parts…` through its nearest existing ancestor. Refuses an ancestor that
 * resolves outside the root, a dangling symlink (it cannot be checked) and symlink loops.
 */
async function canonicalize(
  root: string,
  parts: readonly string[],
  field: string,
  rel: string,
): Promise<{ canonical: string; existing: string; missing: string[] }> {
  let found = 0;
  for (let i = parts.length; i > 0; i--) {
    try {
      await lstat(join(root, ...parts.slice(0, i)));
      found = i;
      break;
    } catch (error) {
      const code = errnoOf(error);
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
    }
  }
  let existing: string;
  try {
    existing = await realpath(join(root, ...parts.slice(0, found)));
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ELOOP") throw escape(field, rel, "goes through a symbolic link loop");
    if (code === "ENOENT") throw escape(field, rel, "goes through a dangling symbolic link");
    throw error;
  }
  if (!isInside(root, existing)) throw escape(field, rel, "resolves outside its root");
  const missing = parts.slice(found);
  return { canonical: join(existing, ...missing), existing, missing };
}

/** The base directory of a path scope. */
export function scopeBase(ctx: ToolContext, scope: PathScope): string {
  return scope === "skill" ? ctx.packageDir : ctx.workspaceRoot;
}

/** Resolves `repo_root` (relative to the scope's base) to an existing, contained directory. */
export async function resolveRoot(
  ctx: ToolContext,
  opts: { repoRoot?: string | undefined; pathScope?: PathScope | undefined },
): Promise<ToolRoot> {
  const label = opts.repoRoot ?? ".";
  const base = await realpath(scopeBase(ctx, opts.pathScope ?? "workspace"));
  const guard = StateGuard.forContext(ctx);
  const dir = await resolveDirectory({ dir: base, label: ".", guard }, label, "repo_root");
  return { dir: dir.absolute, label, guard };
}

/**
 * Canonicalises `rel` inside the root, refuses runx's own state (before existence, so a
 * refusal says nothing about which state files exist) and requires the path to exist
 * (FILE_NOT_FOUND otherwise).
 */
async function resolveExisting(
  root: ToolRoot,
  rel: string,
  field: string,
  access: StateAccess,
): Promise<{ parts: string[]; canonical: string }> {
  const parts = splitRelative(rel, field);
  const { canonical, existing, missing } = await canonicalize(root.dir, parts, field, rel);
  root.guard.check(canonical, existing, root.dir, access, field, rel);
  if (missing.length > 0) {
    throw new RuntimeError("FILE_NOT_FOUND", `${field} ${JSON.stringify(rel)} does not exist`, {
      path: field,
      target: rel,
    });
  }
  return { parts, canonical };
}

/** Resolves an existing directory inside the root (the root itself for `.`). */
export async function resolveDirectory(
  root: ToolRoot,
  rel: string,
  field: string,
): Promise<ContainedPath> {
  const { parts, canonical } = await resolveExisting(root, rel, field, "read");
  if (!(await stat(canonical)).isDirectory()) {
    throw new RuntimeError("INPUT_INVALID", `${field} ${JSON.stringify(rel)} is not a directory`, {
      path: field,
      target: rel,
    });
  }
  return { absolute: canonical, relative: parts.length === 0 ? "." : parts.join("/") };
}

/** Resolves an existing regular file inside the root for reading. */
export async function resolveReadable(
  root: ToolRoot,
  rel: string,
  field: string,
): Promise<ContainedPath> {
  const { parts, canonical } = await resolveExisting(root, rel, field, "read");
  const info = await stat(canonical);
  if (!info.isFile()) throw notRegular(field, rel);
  await root.guard.checkLinks(info, field, rel);
  return { absolute: canonical, relative: parts.join("/") };
}

function notRegular(field: string, rel: string): RuntimeError {
  return new RuntimeError(
    "INPUT_INVALID",
    `${field} ${JSON.stringify(rel)} is not a regular file`,
    { path: field, target: rel },
  );
}

async function lstatOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Resolves a write or delete target inside the root. The parent chain is canonicalised
 * (missing directories are listed for creation); the target itself must not be a symlink
 * or a directory. Paths inside runx's own state are refused (POLICY_DENIED): packages may not
 * rewrite receipts, run state, keys or artifact bindings. A hard link to a state file is no
 * way in: writes replace the target by rename and never write through it.
 */
export async function resolveWritable(
  root: ToolRoot,
  rel: string,
  field: string,
): Promise<WritablePath> {
  const parts = splitRelative(rel, field);
  const name = parts[parts.length - 1];
  if (name === undefined) throw notRegular(field, rel);
  const {
    canonical: parent,
    existing,
    missing,
  } = await canonicalize(root.dir, parts.slice(0, -1), field, rel);
  if (!(await stat(existing)).isDirectory()) {
    throw new RuntimeError(
      "INPUT_INVALID",
      `${field} ${JSON.stringify(rel)} has a parent that is not a directory`,
      { path: field, target: rel },
    );
  }
  const absolute = join(parent, name);
  root.guard.check(absolute, absolute, root.dir, "write", field, rel);
  const info = missing.length > 0 ? undefined : await lstatOrUndefined(absolute);
  if (info?.isSymbolicLink() === true) {
    throw escape(field, rel, "is a symbolic link; writes through symbolic links are refused");
  }
  if (info !== undefined && !info.isFile()) throw notRegular(field, rel);
  const missingDirs = missing.map((_, i) => join(existing, ...missing.slice(0, i + 1)));
  return { absolute, relative: parts.join("/"), parent, missingDirs, exists: info !== undefined };
}

/**
 * Re-checks, just before writing, that a planned parent still canonicalises to itself (no
 * directory was swapped for a symlink since planning).
 */
export async function assertParentUnchanged(target: WritablePath, field: string): Promise<void> {
  const now = await realpath(target.parent);
  if (now !== target.parent) throw escape(field, target.relative, "changed while being written");
}
