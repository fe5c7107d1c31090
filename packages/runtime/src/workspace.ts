/** Where a workspace keeps its runx state. */
import { lstatSync, mkdirSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RuntimeError } from "./errors.js";

/** Resolved locations of a workspace's state. */
export interface WorkspacePaths {
  root: string;
  runxDir: string;
  receiptDir: string;
  stateDb: string;
  configFile: string;
  skillsDir: string;
}

/** Receipt dir precedence: explicit flag > RUNX_RECEIPT_DIR > <workspace>/.runx/receipts. */
export function workspacePaths(opts: {
  root: string;
  receiptDir?: string | undefined;
  receiptDirEnv?: string | undefined;
}): WorkspacePaths {
  const root = resolve(opts.root);
  const runxDir = join(root, ".runx");
  const chosen = opts.receiptDir ?? opts.receiptDirEnv;
  return {
    root,
    runxDir,
    receiptDir:
      chosen !== undefined && chosen !== "" ? resolve(root, chosen) : join(runxDir, "receipts"),
    stateDb: join(runxDir, "state.sqlite"),
    configFile: join(runxDir, "config.json"),
    skillsDir: join(root, "skills"),
  };
}

/**
 * A reference that resolves again from the workspace: workspace-relative when inside, else
 * the absolute path. For durable state (checkpoints), never for messages.
 */
export function workspaceRef(root: string, path: string): string {
  const rel = relative(root, path);
  if (rel === "") return ".";
  return !rel.startsWith("..") && !isAbsolute(rel) ? rel.split(sep).join("/") : path;
}

/** A path for messages: workspace-relative when inside, else a label that hides the location. */
export function displayPath(root: string, path: string): string {
  const rel = relative(root, path);
  if (rel === "") return ".";
  if (!rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
  return `<outside-workspace>/${path.split(sep).pop() ?? ""}`;
}

/**
 * Where the checks of {@link ensureStateDir} start: the directory holding the outermost
 * `.runx` component of `dir` (the workspace, or the user's home for `$RUNX_HOME`), else `dir`
 * itself (a receipt directory the operator placed elsewhere is theirs to link as they like).
 */
export function stateBaseOf(dir: string): string {
  const parts = resolve(dir).split(sep);
  const at = parts.indexOf(".runx");
  return at <= 0 ? resolve(dir) : parts.slice(0, at).join(sep) || sep;
}

/**
 * Creates a runx-owned directory (run directories, the artifact store, the receipt store, the
 * state database's folder, materialised registry packages) one component at a time below
 * `base` (only checks them with `create: false`, answering whether the directory exists), and
 * refuses a component that is a symbolic link or not a directory: a process
 * that replaced `.runx/runs` with a link would otherwise have runx write its state (artifact
 * blobs, receipts) wherever the link points. Refusal is PATH_ESCAPE naming the component
 * relative to `base`; nothing is created through or below it. A concurrent swap between the
 * check and a later write is not covered (runx is not an OS sandbox).
 */
export function ensureStateDir(
  dir: string,
  options: { base?: string; mode?: number; create?: boolean } = {},
): boolean {
  const target = resolve(dir);
  const base = resolve(options.base ?? stateBaseOf(target));
  const rel = relative(base, target);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new RuntimeError("INTERNAL", "a runx state directory lies outside its base");
  }
  const create = options.create !== false;
  if (rel === "") {
    if (!create) return lstatOrUndefined(target) !== undefined;
    mkdirSync(target, {
      recursive: true,
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
    });
    return true;
  }
  // The base (the workspace, the home directory) is not runx's to police; it may be missing.
  if (lstatOrUndefined(base) === undefined) {
    if (!create) return false;
    mkdirSync(base, { recursive: true });
  }
  let current = base;
  for (const part of rel.split(sep)) {
    current = join(current, part);
    let info = lstatOrUndefined(current);
    if (info === undefined && !create) return false;
    if (info === undefined) {
      try {
        mkdirSync(current, options.mode !== undefined ? { mode: options.mode } : {});
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
      info = lstatOrUndefined(current);
    }
    const shown = relative(base, current).split(sep).join("/");
    if (info?.isSymbolicLink() === true) {
      throw new RuntimeError(
        "PATH_ESCAPE",
        `${shown} is a symbolic link; runx keeps its own state only in real directories`,
        { path: shown },
      );
    }
    if (info === undefined || !info.isDirectory()) {
      throw new RuntimeError("PATH_ESCAPE", `${shown} is not a directory`, { path: shown });
    }
  }
  return true;
}

function lstatOrUndefined(path: string): ReturnType<typeof lstatSync> | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw error;
  }
}
