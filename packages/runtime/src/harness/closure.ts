/**
 * What a harness case copies into its scratch workspace: the target package (or
 * standalone graph document) and every local package it reaches by relative reference —
 * graph steps' `skill:` refs and `context_skills`, followed through nested packages — laid
 * out at the same relative positions, so `skill: ../data-store` resolves inside the copy just
 * as it does in the project. References leaving the project are not copied (the run then
 * reports them as not found).
 */
import { chmodSync, cpSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { isJsonObject } from "../parser/json.js";

/** Never copied into a scratch workspace: run state and version control. */
const SKIPPED_ENTRIES: ReadonlySet<string> = new Set([".runx", ".git"]);
/** Packages followed at most (a guard against pathological reference webs). */
const MAX_CLOSURE_SOURCES = 256;

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

/** Local relative references a package makes: graph step skills and context skills. */
function referencesOf(pkg: LoadedSkillPackage): string[] {
  const refs: string[] = [];
  const local = (ref: unknown): void => {
    if (typeof ref !== "string" || ref === "" || /^[a-z][a-z0-9+-]*:/i.test(ref)) return;
    if (isAbsolute(ref) || ref.startsWith(".") || ref.includes("/")) refs.push(ref);
  };
  for (const runner of Object.values(pkg.runners)) {
    if (runner.type === "agent-task") runner.context_skills?.forEach(local);
    if (runner.type !== "graph") continue;
    for (const step of runner.graph.steps) {
      if (!isJsonObject(step)) continue;
      local(step.skill);
      if (Array.isArray(step.context_skills)) step.context_skills.forEach(local);
    }
  }
  return refs.map((ref) => resolve(pkg.packageDir, ref));
}

/** The sources a case needs: the target first, then what it reaches inside `projectRoot`. */
export async function sourceClosure(target: string, projectRoot: string): Promise<string[]> {
  const sources = [target];
  for (let i = 0; i < sources.length && sources.length < MAX_CLOSURE_SOURCES; i += 1) {
    const source = sources[i] as string;
    let pkg: LoadedSkillPackage;
    try {
      pkg = await loadSkillPackage(await resolveSkillRef(source, { workspaceRoot: projectRoot }));
    } catch {
      continue; // the run reports an unreadable nested package where it is used
    }
    for (const ref of referencesOf(pkg)) {
      const dir = basename(ref) === "SKILL.md" ? dirname(ref) : ref;
      if (!inside(projectRoot, dir) || sources.includes(dir)) continue;
      sources.push(dir);
    }
  }
  return sources;
}

/** The deepest directory holding every source (a file counts by its directory). */
function commonRoot(sources: readonly string[]): string {
  const dirs = sources.map((s) => (statSync(s).isDirectory() ? s : dirname(s)));
  let root = dirs[0] ?? "/";
  for (const dir of dirs.slice(1)) {
    while (!inside(root, dir)) root = dirname(root);
  }
  return root;
}

function copyEntry(source: string, destination: string): void {
  if (statSync(source).isDirectory()) {
    mkdirSync(destination, { recursive: true });
    for (const entry of readdirSync(source)) {
      if (SKIPPED_ENTRIES.has(entry)) continue;
      cpSync(join(source, entry), join(destination, entry), {
        recursive: true,
        filter: (from) => !SKIPPED_ENTRIES.has(basename(from)),
      });
    }
  } else {
    mkdirSync(dirname(destination), { recursive: true });
    cpSync(source, destination);
  }
}

function makeWritable(dir: string): void {
  chmodSync(dir, statSync(dir).mode | 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) makeWritable(join(dir, entry.name));
  }
}

/**
 * Copies the sources into `scratch` below their common directory and returns where the first
 * source (the target) landed. Sources inside an already copied directory come along with it.
 * Entries are copied one by one so a package at the workspace root (whose `.runx` holds the
 * scratch workspace) copies cleanly.
 */
export function copySources(sources: readonly string[], scratch: string): string {
  const existing = sources.filter((s) => {
    try {
      statSync(s);
      return true;
    } catch {
      return false;
    }
  });
  const root = commonRoot(existing);
  const copied: string[] = [];
  for (const source of existing) {
    if (copied.some((dir) => inside(dir, source))) continue;
    copyEntry(source, join(scratch, relative(root, source)));
    if (statSync(source).isDirectory()) copied.push(source);
  }
  mkdirSync(scratch, { recursive: true });
  makeWritable(scratch);
  const target = sources[0] ?? root;
  const rel = relative(root, target);
  return rel === "" ? scratch : join(scratch, ...rel.split(sep));
}
