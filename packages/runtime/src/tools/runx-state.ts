/**
 * runx's own state as the path-containment functions see it (paths.ts): the workspace's
 * `.runx/` (state databases and their -wal/-shm, config, run directories, caches), the receipt
 * directory wherever it is configured, `$RUNX_HOME` (user config, keys) and the local
 * registry. No native tool may read, write, list or admit anything there, whatever the path
 * form: every tool path is canonicalised first (symlinks, `/proc/self/root/…` and symlinked
 * parents resolve to their target), then compared with the canonical state roots by name and,
 * for case-insensitive file systems and bind mounts, by the (device, inode) of every ancestor;
 * a regular file with other hard links is compared with the files under the state roots.
 *
 * One exception: a skill materialised from the registry lives under `.runx/` and may read its
 * own package (`path_scope: skill`), never write it.
 */
import type { Stats } from "node:fs";
import { realpathSync, statSync } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { RuntimeError } from "../errors.js";
import type { ToolContext } from "./types.js";

/** How many entries the hard-link check walks under the state roots before it fails closed. */
export const STATE_WALK_LIMIT = 50_000;

/** What a path is resolved for. */
export type StateAccess = "read" | "write";

interface Root {
  /** Canonical path (canonical parent plus the missing rest when the root does not exist). */
  path: string;
  /** `dev:ino` of the root when it exists. */
  id?: string;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function idOf(info: Stats): string {
  return `${info.dev}:${info.ino}`;
}

function errnoOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function inside(root: string, candidate: string): boolean {
  const prefix = root.endsWith(sep) ? root : `${root}${sep}`;
  return candidate === root || candidate.startsWith(prefix);
}

/**
 * The canonical form of a path that may not exist yet: its nearest existing ancestor, resolved.
 * The guard's few metadata calls are synchronous: each takes microseconds, less than a trip
 * through the thread pool, and tool calls run in the CLI or an API worker thread.
 */
function canonicalOf(path: string): string {
  let current = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync.native(current), ...rest);
    } catch {
      const parent = dirname(current);
      if (parent === current) return resolve(path);
      rest.unshift(basename(current));
      current = parent;
    }
  }
}

/** The state roots a tool call must stay out of (the workspace's `.runx/` and run dir always). */
export function stateRootsOf(
  ctx: Pick<ToolContext, "workspaceRoot" | "runDir" | "stateRoots">,
): string[] {
  return [join(ctx.workspaceRoot, ".runx"), ctx.runDir, ...ctx.stateRoots];
}

/** Refusal of a path inside runx's own state; names the path as the caller gave it. */
export function stateDenied(field: string, rel: string): RuntimeError {
  return new RuntimeError(
    "POLICY_DENIED",
    `${field} ${JSON.stringify(rel)} is inside runx's own state; no tool may read, write or admit it`,
    { path: field, target: rel },
  );
}

/** Checks canonical tool paths against runx's own state for one tool call. */
export class StateGuard {
  readonly #roots: Root[];
  readonly #ids: Set<string>;
  /** The calling skill's package when it lies inside a state root (registry materialisation). */
  readonly #ownPackage: string | undefined;
  #linked: Promise<Set<string> | "too-many"> | undefined;

  private constructor(roots: Root[], ownPackage: string | undefined) {
    this.#roots = roots;
    this.#ids = new Set(roots.flatMap((r) => (r.id === undefined ? [] : [r.id])));
    this.#ownPackage = ownPackage;
  }

  /** Builds the guard of one tool call from its context. */
  static forContext(ctx: ToolContext): StateGuard {
    const workspace = canonicalOf(ctx.workspaceRoot);
    const roots: Root[] = [];
    for (const raw of stateRootsOf(ctx)) {
      const path = canonicalOf(raw);
      // A state root that holds the whole workspace (a receipt dir set to `.`) cannot fence
      // anything off inside it; its own files are still covered by the other roots.
      if (inside(path, workspace)) continue;
      const root: Root = { path };
      try {
        root.id = idOf(statSync(path));
      } catch (error) {
        if (errnoOf(error) !== "ENOENT" && errnoOf(error) !== "ENOTDIR") throw error;
      }
      roots.push(root);
    }
    const pkg = canonicalOf(ctx.packageDir);
    const own = roots.some((r) => inside(r.path, pkg) && r.path !== pkg) ? pkg : undefined;
    return new StateGuard(roots, own);
  }

  /**
   * Refuses `canonical` (a contained, canonical tool path; `existing` is its deepest existing
   * ancestor or itself; `top` the canonical tool root it lies in) when it is, or lies inside,
   * runx's own state. By identity too, from `existing` up to `top`: the same directory under
   * another name (a case variant, a bind mount) is the same state. Above `top` nothing needs
   * checking: a state root that holds the tool root holds the workspace or the package, and
   * is either skipped (see forContext) or the skill's own materialised package.
   */
  check(
    canonical: string,
    existing: string,
    top: string,
    access: StateAccess,
    field: string,
    rel: string,
  ): void {
    if (access === "read" && this.#ownPackage !== undefined && inside(this.#ownPackage, canonical))
      return;
    if (this.#roots.some((r) => inside(r.path, canonical))) throw stateDenied(field, rel);
    if (this.#ids.size === 0) return;
    for (let dir = existing; inside(top, dir); dir = dirname(dir)) {
      const info = statOrUndefined(dir);
      if (info !== undefined && this.#ids.has(idOf(info))) throw stateDenied(field, rel);
      if (dir === top || dirname(dir) === dir) break;
    }
  }

  /** Refuses a regular file that is another name (a hard link) of a file under a state root. */
  async checkLinks(info: Stats, field: string, rel: string): Promise<void> {
    if (!info.isFile() || info.nlink < 2) return;
    const linked = await (this.#linked ??= this.#walk());
    if (linked === "too-many" || linked.has(idOf(info))) throw stateDenied(field, rel);
  }

  /** Identities of the multiply-linked regular files under the state roots (bounded walk). */
  async #walk(): Promise<Set<string> | "too-many"> {
    const found = new Set<string>();
    const pending = this.#roots.map((r) => r.path);
    let seen = 0;
    while (pending.length > 0) {
      const dir = pending.pop() as string;
      let names: string[];
      try {
        names = await readdir(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (++seen > STATE_WALK_LIMIT) return "too-many";
        const path = join(dir, name);
        const info = await lstat(path).catch(() => undefined);
        if (info === undefined) continue;
        if (info.isDirectory()) pending.push(path);
        else if (info.isFile() && info.nlink > 1) found.add(idOf(info));
      }
    }
    return found;
  }
}
