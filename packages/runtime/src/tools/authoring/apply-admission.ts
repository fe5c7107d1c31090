/**
 * What runx.skill.apply checks before it stages anything: the bundle's plan digest still binds
 * its base digest and decision, the decision is allowed in the mode (build: write, no_skill,
 * needs_core; improve: write, no_change, needs_core; harness: write, no_change), the bundle
 * obeys change-shape.ts, a non-write decision is not stale against the current package, and
 * every write and delete is a package path the content rules allow. After staging, the
 * candidate must fit the architecture's resource budget. Pure.
 */
import { refuse } from "./architecture.js";
import { admitArchitecture } from "./architecture.js";
import type { ArchitectureDecision } from "./architecture.js";
import type { ResourceUsage } from "./candidate.js";
import { admitChangeShape, admitPlanDigest } from "./change-shape.js";
import type { ChangeBundle, ChangeDecision } from "./change-shape.js";
import {
  assertDeletable,
  assertWritable,
  packagePath,
  rejectSecretMaterial,
  type AuthoringMode,
} from "./content-rules.js";
import type { PackageMetrics } from "./snapshot.js";

const TOOL = "runx.skill.apply";

const MODE_DECISIONS: Record<AuthoringMode, readonly ChangeDecision[]> = {
  build: ["write", "no_skill", "needs_core"],
  improve: ["write", "no_change", "needs_core"],
  harness: ["write", "no_change"],
};

/** The admitted package-relative changes. */
export interface AdmittedChange {
  writes: Array<{ path: string; contents: string }>;
  deletes: string[];
}

/** Checks the bundle contract against the mode and the package's current digest. */
export function admitChangeContract(
  bundle: ChangeBundle,
  mode: AuthoringMode,
  currentDigest: string,
): void {
  admitArchitecture(TOOL, bundle.architecture, "change_bundle.architecture");
  admitPlanDigest(TOOL, bundle, "change_bundle");
  if (!MODE_DECISIONS[mode].includes(bundle.decision)) {
    throw refuse(TOOL, "mode", `${bundle.decision} is not a valid decision in ${mode} mode`);
  }
  admitChangeShape(TOOL, bundle, "change_bundle");
  if (bundle.decision !== "write" && bundle.base_digest !== currentDigest) {
    throw refuse(
      TOOL,
      "change_bundle.base_digest",
      "non-write decision is stale against the inspected base digest",
    );
  }
}

/** Normalizes and checks every write and delete (`existing`: paths already in the package). */
export function admitChanges(
  bundle: ChangeBundle,
  mode: AuthoringMode,
  existing: ReadonlySet<string>,
): AdmittedChange {
  const writes = bundle.writes.map((write, i) => {
    const field = `change_bundle.writes[${i}].path`;
    const path = packagePath(write.path, field);
    assertWritable(path, mode, existing.has(path), field);
    rejectSecretMaterial(path, write.contents, `change_bundle.writes[${i}].contents`);
    return { path, contents: write.contents };
  });
  const deletes = bundle.deletes.map((rel, i) => {
    const field = `change_bundle.deletes[${i}]`;
    const path = packagePath(rel, field);
    assertDeletable(path, mode, field);
    return path;
  });
  return { writes, deletes };
}

/** Checks the staged candidate's size, lanes and modules against the resource budget. */
export function admitBudget(
  architecture: ArchitectureDecision,
  metrics: PackageMetrics,
  usage: ResourceUsage,
): void {
  const budget = architecture.resource_budget;
  const at = "change_bundle.architecture.resource_budget";
  const over = (field: string, what: string, have: number, limit: number): never => {
    throw refuse(
      TOOL,
      `${at}.${field}`,
      `candidate has ${have} ${what}, exceeding the budget ${limit}`,
    );
  };
  if (metrics.files > budget.max_files) over("max_files", "files", metrics.files, budget.max_files);
  if (metrics.executable_lines > budget.max_executable_lines) {
    over(
      "max_executable_lines",
      "executable lines",
      metrics.executable_lines,
      budget.max_executable_lines,
    );
  }
  if (usage.max_fanout > budget.max_fanout) {
    over("max_fanout", "parallel branches", usage.max_fanout, budget.max_fanout);
  }
  if (usage.process_spawns > budget.max_process_spawns) {
    over("max_process_spawns", "process spawns", usage.process_spawns, budget.max_process_spawns);
  }
  if (usage.network && !budget.network_allowed) {
    throw refuse(
      TOOL,
      `${at}.network_allowed`,
      "candidate includes a network-capable lane but its architecture forbids network access",
    );
  }
  const planned = architecture.required_behaviors.some((b) => b.lane === "domain_module");
  if (usage.domain_modules !== planned) {
    throw refuse(
      TOOL,
      "change_bundle.architecture.required_behaviors",
      "candidate domain modules must exactly match the architecture decision",
    );
  }
}
