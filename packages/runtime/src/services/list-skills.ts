/** `runx list skills`: every package under the workspace's `skills/`, parsed, with diagnostics. */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { isRuntimeError } from "../errors.js";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import { displayPath } from "../workspace.js";

/** One diagnostic of an invalid package. */
export interface SkillDiagnostic {
  code: string;
  message: string;
  file?: string;
  line?: number;
  column?: number;
  path?: string;
}

/** One listed package. */
export interface SkillListItem {
  kind: "skill" | "graph";
  name: string;
  source: "workspace";
  path: string;
  status: "ok" | "invalid";
  description: string | null;
  runners: Array<{ name: string; type: string; default: boolean; inputs: string[] }>;
  diagnostics: SkillDiagnostic[];
}

/** Lists workspace skill packages, sorted by directory name. */
export async function listWorkspaceSkills(root: string): Promise<{ items: SkillListItem[] }> {
  const skillsDir = join(root, "skills");
  let names: string[] = [];
  try {
    names = (await readdir(skillsDir, { withFileTypes: true }))
      .filter((d) => d.isDirectory() && !d.name.startsWith("."))
      .map((d) => d.name)
      .sort();
  } catch {
    return { items: [] };
  }
  const items: SkillListItem[] = [];
  for (const dirName of names) {
    const dir = join(skillsDir, dirName);
    const path = displayPath(root, dir);
    try {
      const pkg = await loadSkillPackage(await resolveSkillRef(dir, { workspaceRoot: root }));
      const runners = Object.values(pkg.runners);
      items.push({
        kind: runners.some((r) => r.type === "graph") ? "graph" : "skill",
        name: pkg.name,
        source: "workspace",
        path,
        status: "ok",
        description: pkg.description ?? null,
        runners: runners.map((r) => ({
          name: r.name,
          type: r.type,
          default: r.default,
          inputs: Object.keys(r.inputs),
        })),
        diagnostics: [],
      });
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      if (error.code === "PACKAGE_NOT_FOUND") continue; // a folder without SKILL.md is not a package
      const { file, line, column, path: keyPath } = error.details;
      items.push({
        kind: "skill",
        name: dirName,
        source: "workspace",
        path,
        status: "invalid",
        description: null,
        runners: [],
        diagnostics: [
          {
            code: error.code,
            message: error.message,
            ...(file !== undefined ? { file } : {}),
            ...(line !== undefined ? { line } : {}),
            ...(column !== undefined ? { column } : {}),
            ...(keyPath !== undefined ? { path: keyPath } : {}),
          },
        ],
      });
    }
  }
  return { items };
}
