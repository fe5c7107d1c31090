/**
 * Path containment for everything the adapter boundary records or reads back: relative,
 * normalized paths only, no `..`, no NUL, and no symlink in any component (checked with
 * lstat), so a reported path can never lead outside its root.
 */
import { lstatSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";

/** Why a path is unsafe, or undefined. */
export type PathProblem = "outside" | "symlink" | "missing" | "not_file";

/** True when `rel` is a plain relative path: no absolute, `..`, `.`-segments, NUL or backslash. */
export function isPlainRelative(rel: string): boolean {
  if (
    rel === "" ||
    rel.includes("\0") ||
    rel.includes("\\") ||
    isAbsolute(rel) ||
    /^[A-Za-z]:/.test(rel)
  )
    return false;
  const parts = rel.split("/");
  return parts.every((part) => part !== "" && part !== "." && part !== "..");
}

/** True when `child` is `root` or inside it (lexically). */
export function isInside(root: string, child: string): boolean {
  const rel = relative(root, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Walks `rel` below `root` with lstat: undefined when every component exists and none is a
 * symlink (and the last is a regular file when `file` is set); otherwise the problem.
 */
export function checkContained(
  root: string,
  rel: string,
  options: { file?: boolean } = {},
): PathProblem | undefined {
  if (!isPlainRelative(rel)) return "outside";
  let current = root;
  const parts = rel.split("/");
  for (let i = 0; i < parts.length; i++) {
    current = join(current, parts[i] ?? "");
    let stat;
    try {
      stat = lstatSync(current);
    } catch {
      return "missing";
    }
    if (stat.isSymbolicLink()) return "symlink";
    if (i === parts.length - 1 && options.file === true && !stat.isFile()) return "not_file";
  }
  return undefined;
}

/** True when any existing component of `abs` from `root` down is a symlink. */
export function hasSymlinkComponent(root: string, abs: string): boolean {
  if (!isInside(root, abs)) return true;
  const rel = relative(root, abs);
  if (rel === "") return false;
  let current = root;
  for (const part of rel.split(sep)) {
    current = join(current, part);
    try {
      if (lstatSync(current).isSymbolicLink()) return true;
    } catch {
      return false;
    }
  }
  return false;
}

/**
 * How a command is named in records: an absolute executable (an installed tool such as
 * `/usr/local/bin/agent`) by its basename, since receipts carry no absolute paths; anything
 * else (a project-relative script, a bare name) as written.
 */
export function commandLabel(command: string): string {
  return isAbsolute(command) ? (command.split(/[\\/]/).pop() ?? command) : command;
}
