/**
 * `runx.skill.inspect`: what an authoring agent needs before it decides anything, as the named
 * `authoring_context` packet (runx.skill_lab.authoring_context.v1): the target package's files,
 * metrics and digest (the base digest runx.skill.plan binds a decision to), its inspection
 * when it exists, the workspace's skill catalog and the native tools. Reads only; spawns
 * nothing.
 */
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import inputSchema from "../../../schemas/tools/authoring/runx-skill-inspect.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/authoring/runx-skill-inspect.output.schema.json" with { type: "json" };
import { validateToolsAuthoringRunxSkillInspectInput } from "../../generated/validate-tools-authoring-runx-skill-inspect.input.js";
import type { JsonObject } from "../../parser/json.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";
import { failedInspection, inspectionOf, loadCandidate } from "./candidate.js";
import { absentDigest, ignoredEntry, packageMetrics, packageSnapshot } from "./snapshot.js";
import { authoringRoot, resolveTarget } from "./target.js";

interface InspectInput {
  repo_root?: string;
  target_dir?: string | null;
}

async function inspectTarget(ctx: ToolContext, dir: string): Promise<JsonObject> {
  try {
    return inspectionOf(await loadCandidate(ctx, dir));
  } catch (error) {
    return failedInspection(error);
  }
}

async function fixtureCount(dir: string): Promise<number> {
  const names = await readdir(join(dir, "fixtures")).catch(() => [] as string[]);
  return names.filter((n) => /\.ya?ml$/.test(n)).length;
}

/** The packages directly under the catalog root, as catalog items. */
async function catalogSkills(
  ctx: ToolContext,
  rootDir: string,
  catalogRoot: string,
): Promise<JsonRecord[]> {
  const skillsDir = catalogRoot === "." ? rootDir : join(rootDir, catalogRoot);
  const entries = await readdir(skillsDir, { withFileTypes: true }).catch(() => []);
  const names = entries
    .filter((d) => d.isDirectory() && !d.name.startsWith(".") && !ignoredEntry(d.name))
    .map((d) => d.name)
    .sort();
  const items: JsonRecord[] = [];
  for (const name of names) {
    const dir = join(skillsDir, name);
    // A directory without a manual is not a package (the root may hold anything).
    if (
      !(await stat(join(dir, "SKILL.md")).then(
        (s) => s.isFile(),
        () => false,
      ))
    )
      continue;
    const path = catalogRoot === "." ? name : `${catalogRoot}/${name}`;
    const base = { path, fixtures: await fixtureCount(dir) };
    try {
      const pkg = await loadCandidate(ctx, dir);
      const runners = Object.values(pkg.runners);
      const item: JsonRecord = {
        name: pkg.name,
        kind: runners.some((r) => r.type === "graph") ? "graph" : "skill",
        ...base,
        status: "ok",
        scopes: [...new Set(runners.flatMap((r) => r.scopes))].sort(),
        harness_cases: pkg.profile?.harness?.cases.length ?? 0,
      };
      if (pkg.description !== undefined) item.description = pkg.description;
      items.push(item);
    } catch {
      items.push({ name, kind: "skill", ...base, status: "invalid", scopes: [] });
    }
  }
  return items;
}

/**
 * The native tools, as catalog items. The catalog is loaded lazily: it lists this tool, so a
 * static import would be a cycle.
 */
async function coreTools(): Promise<JsonRecord[]> {
  const { runtimeToolCatalog } = await import("../../run/tools.js");
  return runtimeToolCatalog()
    .list()
    .map((tool) => ({
      name: tool.name,
      kind: "tool",
      description: tool.description,
      path: `native:${tool.name}`,
      status: "ok",
      scopes: tool.scopes,
    }));
}

/** The `runx.skill.inspect` tool. */
export const skillInspectTool: NativeTool = withNamedOutput(
  defineTool<InspectInput, JsonRecord>({
    name: "runx.skill.inspect",
    description: "Inspect one package and its catalog without spawning a subprocess.",
    mutating: false,
    scopes: ["fs.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsAuthoringRunxSkillInspectInput,
    async run(input, ctx) {
      const root = await authoringRoot(ctx, input.repo_root);
      const target =
        input.target_dir === undefined || input.target_dir === null
          ? undefined
          : await resolveTarget(root, input.target_dir);
      const snapshot =
        target === undefined ? undefined : await packageSnapshot(target.absolute, "target_dir");
      const files = snapshot?.files ?? [];
      // The catalog is the root's skills/ when it has one, else the root itself.
      const catalogRoot = (await stat(join(root.dir, "skills")).then(
        (s) => s.isDirectory(),
        () => false,
      ))
        ? "skills"
        : ".";
      const context: JsonRecord = {
        repo_root: root.label,
        target_dir: target?.relative ?? null,
        target_exists: snapshot?.exists ?? false,
        base_digest: snapshot?.digest ?? absentDigest(),
        target_files: files.map((f) => ({ path: f.path, bytes: f.contents.length })),
        target_metrics: packageMetrics(files),
        target_inspection:
          target !== undefined && snapshot?.exists === true
            ? await inspectTarget(ctx, target.absolute)
            : null,
        catalog_root: catalogRoot,
        catalog_skills: await catalogSkills(ctx, root.dir, catalogRoot),
        core_tools: await coreTools(),
      };
      return {
        output: context,
        summary: `${target?.relative ?? "(no target)"} ${snapshot?.digest ?? absentDigest()}`,
      };
    },
  }),
  { name: "authoring_context", packet: "runx.skill_lab.authoring_context.v1" },
);
