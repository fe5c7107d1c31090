/**
 * Checking one candidate package directory, for runx.skill.validate and runx.skill.apply: it
 * must load (SKILL.md and X.yaml parse and validate), it is inspected (name, runners,
 * execution class, harness cases), its resource use is measured (fan-out, process spawns,
 * network-capable lanes, domain modules) and, when allowed, its own harness runs with
 * receipts kept in a scratch directory that is removed afterwards. The harness is loaded
 * lazily: it runs graphs, and graphs reach the native catalog this tool belongs to.
 */
import { randomBytes } from "node:crypto";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { loadSkillPackage, resolveSkillRef } from "../../packages/resolve.js";
import type { LoadedSkillPackage } from "../../packages/resolve.js";
import type { JsonObject, JsonValue } from "../../parser/json.js";
import type { JsonRecord, ToolContext } from "../types.js";

/** What a candidate's lanes use, compared with the architecture's resource budget. */
export interface ResourceUsage extends JsonRecord {
  max_fanout: number;
  process_spawns: number;
  network: boolean;
  domain_modules: boolean;
}

/** Loads the package in `dir`; a package that does not load is a RuntimeError naming its file. */
export async function loadCandidate(ctx: ToolContext, dir: string): Promise<LoadedSkillPackage> {
  return loadSkillPackage(await resolveSkillRef(dir, { workspaceRoot: ctx.workspaceRoot }));
}

function objectOr(value: JsonValue | undefined): JsonObject | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined;
}

/** The execution class the package's catalog block declares (`read`, `plan`, `execute`…). */
export function executionClass(pkg: LoadedSkillPackage): string | null {
  const execution = objectOr(pkg.profile?.catalog)?.execution;
  return typeof execution === "string" ? execution : null;
}

/** The inspection summary of a loaded package. */
export function inspectionOf(pkg: LoadedSkillPackage): JsonObject {
  const runners = Object.values(pkg.runners);
  return {
    status: "ok",
    name: pkg.name,
    description: pkg.description ?? null,
    kind: runners.some((r) => r.type === "graph") ? "graph" : "skill",
    capabilities: { execution: executionClass(pkg) },
    runners: runners.map((r) => ({
      name: r.name,
      type: r.type,
      default: r.default,
      inputs: Object.keys(r.inputs),
    })),
    harness_cases: pkg.profile?.harness?.cases.length ?? 0,
  };
}

/** An inspection that failed, with the error's code and message (no stack). */
export function failedInspection(error: unknown): JsonObject {
  if (isRuntimeError(error)) return { status: "invalid", error: `${error.code}: ${error.message}` };
  throw error;
}

function classifySource(kind: string, usage: ResourceUsage): void {
  if (kind === "javascript") usage.domain_modules = true;
  if (["cli-tool", "mcp", "external-adapter", "thread-outbox-provider"].includes(kind)) {
    usage.process_spawns += 1;
    usage.network = true;
  }
  if (kind === "a2a") usage.network = true;
}

function classifyTool(tool: string, usage: ResourceUsage): void {
  if (tool === "command.execute") {
    usage.process_spawns += 1;
    usage.network = true;
  }
  if (
    tool.startsWith("http.") ||
    tool.startsWith("provider.") ||
    tool === "web.fetch" ||
    tool === "artifact.allocate"
  ) {
    usage.network = true;
  }
}

/** Measures what the package's runners and graph steps use. */
export function resourceUsage(pkg: LoadedSkillPackage): ResourceUsage {
  const usage: ResourceUsage = {
    max_fanout: 1,
    process_spawns: 0,
    network: false,
    domain_modules: false,
  };
  for (const runner of Object.values(pkg.runners)) {
    classifySource(runner.type, usage);
    if (runner.type !== "graph") continue;
    const groups = new Map<string, number>();
    for (const step of runner.graph.steps) {
      if (typeof step.tool === "string") classifyTool(step.tool, usage);
      const run = objectOr(step.run);
      if (typeof run?.type === "string") classifySource(run.type, usage);
      if (typeof step.fanout_group === "string") {
        groups.set(step.fanout_group, (groups.get(step.fanout_group) ?? 0) + 1);
      }
    }
    for (const count of groups.values()) usage.max_fanout = Math.max(usage.max_fanout, count);
  }
  if (usage.domain_modules) usage.process_spawns += 1;
  return usage;
}

/**
 * Runs the package's own harness (inline cases, then fixtures) with receipts in a scratch
 * directory under the run directory. A failing case is INPUT_INVALID at `field` (the input the
 * candidate came from) carrying the assertion errors; a package without cases reports
 * `no_cases`.
 */
export async function runCandidateHarness(
  ctx: ToolContext,
  dir: string,
  field: string,
): Promise<JsonObject> {
  const scratch = join(ctx.runDir, `authoring-harness-${randomBytes(6).toString("hex")}`);
  const receiptDir = join(scratch, "receipts");
  await mkdir(receiptDir, { recursive: true });
  try {
    const { runHarness } = await import("../../harness/index.js");
    const { report } = await runHarness({
      workspaceRoot: ctx.workspaceRoot,
      targets: [dir],
      receiptDir,
      env: ctx.baseEnv,
      signal: ctx.signal,
    });
    if (report.case_count === 0) return { attempted: true, status: "no_cases", case_count: 0 };
    if (report.status === "failed") {
      throw new RuntimeError(
        "INPUT_INVALID",
        `candidate harness failed: ${report.assertion_errors.join("; ")}`,
        { path: field },
      );
    }
    return {
      attempted: true,
      status: "passed",
      case_count: report.case_count,
      case_names: report.case_names,
      graph_case_count: report.graph_case_count,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
