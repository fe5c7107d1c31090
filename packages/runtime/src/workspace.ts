/** Where a workspace keeps its runx state (spec §8.4). */
import { isAbsolute, join, relative, resolve, sep } from "node:path";

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
