/** `runx init`: create the project's `.runx/` state (or `$RUNX_HOME`) idempotently. */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.js";
import { displayPath } from "../workspace.js";

/** What init created and what already existed. */
export interface InitResult {
  scope: "project" | "global";
  root: string;
  created: string[];
  existing: string[];
}

async function ensureDir(path: string, label: string, result: InitResult): Promise<void> {
  if (existsSync(path)) result.existing.push(label);
  else {
    await mkdir(path, { recursive: true });
    result.created.push(label);
  }
}

async function ensureFile(
  path: string,
  contents: string,
  label: string,
  result: InitResult,
): Promise<void> {
  try {
    await writeFile(path, contents, { flag: "wx" });
    result.created.push(label);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    result.existing.push(label);
  }
}

/** Initialises a project workspace: `.runx/{receipts,…}`, a default config, and `skills/`. */
export async function initProject(paths: WorkspacePaths): Promise<InitResult> {
  const result: InitResult = { scope: "project", root: ".", created: [], existing: [] };
  await ensureDir(paths.runxDir, ".runx", result);
  // runx state never belongs in version control.
  await ensureFile(join(paths.runxDir, ".gitignore"), "*\n", ".runx/.gitignore", result);
  await ensureDir(paths.receiptDir, displayPath(paths.root, paths.receiptDir), result);
  await ensureFile(
    paths.configFile,
    `${JSON.stringify({ policy: { strict_cli_tool_inline_code: false } }, null, 2)}\n`,
    ".runx/config.json",
    result,
  );
  await ensureDir(paths.skillsDir, "skills", result);
  return result;
}

/** Initialises `$RUNX_HOME` (user-level config and registry folders). */
export async function initGlobal(runxHome: string): Promise<InitResult> {
  const result: InitResult = { scope: "global", root: "$RUNX_HOME", created: [], existing: [] };
  await ensureDir(runxHome, "$RUNX_HOME", result);
  await ensureDir(join(runxHome, "registry"), "$RUNX_HOME/registry", result);
  await ensureFile(join(runxHome, "config.json"), "{}\n", "$RUNX_HOME/config.json", result);
  return result;
}
