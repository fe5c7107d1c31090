/**
 * `runx harness`: package mode (inline `harness.cases`, then `fixtures/*.yaml` in file-name
 * order) and standalone fixture files. Cases run one after another, each isolated; the report
 * is one JSON object.
 */
import { readdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { PACKAGE_FILE_LIMITS, readFileCapped } from "../packages/read-capped.js";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { displayPath } from "../workspace.js";
import { compareCodePoints } from "../receipts/index.js";
import { parseStrictYaml } from "../parser/strict-yaml.js";
import { fixtureTarget, parseHarnessCase } from "./fixture.js";
import { runCase } from "./run-case.js";
import type { CaseContext, CaseResult, CaseTarget } from "./run-case.js";
import type { HarnessReport } from "./report.js";

export { ANY_PROVIDER_EFFECT, HARNESS_CREATED_AT } from "./run-case.js";

/** What `runx harness` was asked to run. */
export interface HarnessRequest {
  workspaceRoot: string;
  /** Package directories, `SKILL.md` files or standalone fixture `.yaml` files. */
  targets: string[];
  /** The durable store receipts are copied into. */
  receiptDir: string;
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
  /** Told about every finished case, in order. */
  onCase?: (result: CaseResult) => void;
}

export type { HarnessReport } from "./report.js";

/** Runs every target and returns the report plus per-case results. */
export async function runHarness(
  request: HarnessRequest,
): Promise<{ report: HarnessReport; cases: CaseResult[] }> {
  const ctx: CaseContext = {
    workspaceRoot: request.workspaceRoot,
    durableReceiptDir: request.receiptDir,
    env: request.env,
    signal: request.signal,
    ...(request.onCase !== undefined ? { onCase: request.onCase } : {}),
  };
  const cases: CaseResult[] = [];
  let standalone = 0;
  for (const target of request.targets) {
    const full = resolve(request.workspaceRoot, target);
    const info = await stat(full).catch(() => undefined);
    if (info === undefined) {
      throw new RuntimeError("PACKAGE_NOT_FOUND", `harness target not found: ${target}`, {
        target,
      });
    }
    if (info.isFile() && /\.ya?ml$/.test(full)) {
      standalone += 1;
      cases.push(done(await runFixtureFile(full, undefined, ctx), ctx));
    } else {
      cases.push(...(await runPackage(full, ctx)));
    }
  }
  const seen = new Set<string>();
  for (const c of cases) {
    if (seen.has(c.name)) c.errors.push(`${c.label}: duplicate case name "${c.name}"`);
    seen.add(c.name);
  }
  const errors = cases.flatMap((c) => c.errors);
  const only = cases.length === 1 && standalone === 1 ? cases[0] : undefined;
  const report: HarnessReport = {
    status: errors.length === 0 && cases.length > 0 ? "passed" : "failed",
    case_count: cases.length,
    assertion_error_count: errors.length,
    assertion_errors: errors,
    case_names: cases.map((c) => c.name),
    receipt_ids: cases.flatMap((c) => (c.receipt === undefined ? [] : [c.receipt.id])),
    graph_case_count: cases.filter((c) => c.graph).length,
    ...(only?.receipt !== undefined ? { receipt: only.receipt } : {}),
  };
  return { report, cases };
}

/** Reports a finished case to the caller's progress callback and passes it on. */
function done(result: CaseResult, ctx: CaseContext): CaseResult {
  ctx.onCase?.(result);
  return result;
}

async function runPackage(ref: string, ctx: CaseContext): Promise<CaseResult[]> {
  const resolved = await resolveSkillRef(ref, { workspaceRoot: ctx.workspaceRoot });
  const pkg = await loadSkillPackage(resolved);
  const runnerTypes = Object.values(pkg.runners).map((r) => r.type);
  const defaultKind = runnerTypes[0] === "graph" ? "graph" : "skill";
  const target = caseTarget(pkg);
  const out: CaseResult[] = [];
  for (const raw of pkg.profile?.harness?.cases ?? []) {
    const name = typeof raw.name === "string" ? raw.name : "(unnamed)";
    try {
      const spec = parseHarnessCase(raw, { inline: true, defaultKind });
      const runner = spec.runner === undefined ? undefined : pkg.runners[spec.runner];
      if (runner?.type === "graph") spec.kind = "graph";
      out.push(done(await runCase(spec, target, spec.name, ctx), ctx));
    } catch (error) {
      out.push(done(invalidCase(name, name, error), ctx));
    }
  }
  const fixtureDir = join(resolved.packageDir, "fixtures");
  const names = await readdir(fixtureDir).catch(() => [] as string[]);
  for (const file of names.filter((n) => /\.ya?ml$/.test(n)).sort(compareCodePoints)) {
    out.push(done(await runFixtureFile(join(fixtureDir, file), resolved.packageDir, ctx), ctx));
  }
  return out;
}

/** Runs one fixture file; `packageDir` is the package it belongs to (package mode). */
async function runFixtureFile(
  file: string,
  packageDir: string | undefined,
  ctx: CaseContext,
): Promise<CaseResult> {
  const label = displayPath(ctx.workspaceRoot, file);
  let name = basename(file).replace(/\.ya?ml$/, "");
  try {
    const text = await readFileCapped({
      path: file,
      shown: label,
      what: "the fixture",
      maxBytes: PACKAGE_FILE_LIMITS.fixture,
    });
    const doc = parseStrictYaml(text.toString("utf8"), { file: label });
    const raw = doc.value;
    if (raw !== null && typeof raw === "object" && !Array.isArray(raw)) {
      if (typeof raw.name === "string") name = raw.name;
    }
    const target = fixtureTarget(raw);
    const targetDir = target === undefined ? packageDir : resolve(dirname(file), target);
    if (targetDir === undefined) {
      const kind = typeof raw === "object" && raw !== null && !Array.isArray(raw) ? raw.kind : null;
      if (kind !== "agent_task") {
        throw new RuntimeError("HARNESS_INVALID", "target: is required for a standalone fixture");
      }
      const spec = parseHarnessCase(raw, { inline: false, defaultKind: "skill" });
      return await runCase(spec, undefined, label, ctx);
    }
    const resolved = await resolveSkillRef(targetDir, { workspaceRoot: ctx.workspaceRoot });
    const pkg = await loadSkillPackage(resolved);
    const firstRunner = Object.values(pkg.runners)[0];
    const spec = parseHarnessCase(raw, {
      inline: false,
      defaultKind: firstRunner?.type === "graph" ? "graph" : "skill",
    });
    return await runCase(spec, caseTarget(pkg), label, ctx);
  } catch (error) {
    return invalidCase(name, label, error);
  }
}

/** What a case of this package runs (see CaseTarget). */
function caseTarget(pkg: LoadedSkillPackage): CaseTarget {
  const target: CaseTarget = {
    ref: pkg.graphDocumentPath ?? pkg.packageDir,
    packageDir: pkg.packageDir,
    files: pkg.profile?.harness?.files ?? [],
  };
  if (pkg.graphDocumentPath !== undefined) target.receiptName = pkg.name;
  return target;
}

function invalidCase(name: string, label: string, error: unknown): CaseResult {
  if (!isRuntimeError(error)) throw error;
  return {
    name,
    label,
    errors: [`${label}: ${error.code}: ${error.message}`],
    graph: false,
  };
}
