/**
 * Graph preparation: a graph runner's document with every step's contract bound (nested
 * packages loaded and their runners selected), result producers and retry admission checked,
 * before any step runs. Shared by the run pipeline and the console's gate preview.
 */

import { realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { RuntimeError, isRuntimeError } from "../errors.js";
import {
  assertRetryAdmissible,
  bindStepContracts,
  contractFromRunner,
  effectiveRetry,
  graphFromRunner,
  validateResultProducers,
} from "../graph/index.js";
import type { GraphDoc, StepContract } from "../graph/index.js";
import { loadPackageCached } from "../packages/package-cache.js";
import { computeSourceDigest } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import type { GraphRunner, RunnerDefinition } from "../parser/runner-types.js";
import { selectRunner } from "../parser/select-runner.js";
import { hasRegistryPrefix } from "../registry/ref.js";
import type { ToolCatalog } from "../tools/catalog.js";
import { isInside } from "../tools/paths.js";
import type { RunScope, RunSkillDeps } from "./context.js";
import { runtimeToolCatalog, runToolRoots } from "./tools.js";
import { materializeRegistryRef } from "./registry-refs.js";

/** The graph document of the run's runner, with step contracts bound and checked. */
export async function prepareGraph(scope: RunScope, catalog: ToolCatalog): Promise<GraphDoc> {
  const runner = scope.prep.runner as GraphRunner;
  return boundGraph(scope.deps, scope.prep.pkg, runner, catalog, []);
}

function isMissingBranch(step: { fanout_group?: string }, error: unknown): boolean {
  return (
    step.fanout_group !== undefined && isRuntimeError(error) && error.code === "PACKAGE_NOT_FOUND"
  );
}

/** How deep nested graph runners are followed for their output contracts. */
const MAX_NESTED_GRAPH_DEPTH = 16;

/**
 * A graph runner's document with every step's contract bound, its result producers and retry
 * admission checked. A step running a nested graph runner has that graph's contract: the keys
 * its own result producers emit (resolved the same way, recursively), so preparation rejects
 * a missing contract anywhere below before any step runs.
 */
export async function boundGraph(
  deps: RunSkillDeps,
  pkg: { packageDir: string; graphDocumentPath?: string },
  runner: GraphRunner,
  catalog: ToolCatalog,
  /** `<package dir>#<runner>` of the graphs being prepared above this one. */
  path: readonly string[],
): Promise<GraphDoc> {
  const raw = graphFromRunner(runner);
  const here = [...path, `${pkg.graphDocumentPath ?? pkg.packageDir}#${runner.name}`];
  // Nested skills are resolved first so their runners' output contracts bind to the steps.
  const nested = new Map<string, StepContract>();
  const adapterSteps = raw.steps.filter((s) => s.kind === "run" && s.run.type === "adapter");
  for (const step of raw.steps) {
    if (step.kind !== "skill") continue;
    let child: Awaited<ReturnType<typeof loadNestedPackage>>;
    try {
      child = await loadNestedPackage(deps, pkg, step);
    } catch (error) {
      // A fanout branch naming a package that does not exist fails as a branch when it runs
      // (its group's failure rule decides the graph), not as a refusal of the whole graph;
      // containment refusals and every other step still refuse before anything runs.
      if (isMissingBranch(step, error)) continue;
      throw error;
    }
    if (child.runner.type === "adapter") adapterSteps.push(step);
    const contract = contractFromRunner(child.runner);
    const key = `${child.pkg.graphDocumentPath ?? child.pkg.packageDir}#${child.runner.name}`;
    if (
      child.runner.type === "graph" &&
      contract.outputs === undefined &&
      !here.includes(key) &&
      here.length < MAX_NESTED_GRAPH_DEPTH
    ) {
      // The nested package's tools are its own (run/nested-graph.ts runs it the same way).
      const tools = runtimeToolCatalog(runToolRoots({ deps, prep: { pkg: child.pkg } }));
      const inner = await boundGraph(deps, child.pkg, child.runner, tools, here);
      const keys = Object.values(validateResultProducers(inner)).flat();
      if (!inner.result_from_defaulted || keys.length > 0) contract.outputs = keys;
    }
    nested.set(step.id, contract);
  }
  const doc = bindStepContracts(raw, (step): StepContract | undefined => {
    if (step.kind === "tool") {
      const tool = catalog.get(step.tool);
      if (tool === undefined) {
        throw new RuntimeError(
          "TOOL_NOT_FOUND",
          `step ${step.id} calls native tool ${step.tool}, which this runtime does not provide (see runx tool list)`,
          { step: step.id, tool: step.tool },
        );
      }
      const props = tool.outputSchema.properties;
      const outputs =
        props !== null && typeof props === "object" && !Array.isArray(props)
          ? Object.keys(props)
          : [];
      return {
        outputs,
        mutating: tool.mutating,
        tool_output: true,
        ...(tool.idempotencyKey !== undefined ? { idempotency_key: tool.idempotencyKey } : {}),
      };
    }
    if (step.kind === "skill") return nested.get(step.id);
    if (step.run.type !== "approval") {
      const outputs = step.run.outputs;
      return outputs !== undefined &&
        outputs !== null &&
        typeof outputs === "object" &&
        !Array.isArray(outputs)
        ? contractFromRunner({ outputs: outputs as never })
        : undefined;
    }
    return undefined;
  });
  validateResultProducers(doc);
  assertRetryAdmissible(doc);
  // A dispatch is one attempt: a retry is a new packet with its own approval, never automatic.
  for (const step of adapterSteps) {
    const declared = doc.steps.find((s) => s.id === step.id);
    if (declared !== undefined && effectiveRetry(declared).max_attempts > 1) {
      throw new RuntimeError(
        "RETRY_REFUSED",
        `step ${step.id} hands work to an adapter; a dispatch is never retried automatically (a retry is a new packet with its own approval)`,
        { step_id: step.id },
      );
    }
  }
  return doc;
}

/**
 * Where a graph step's relative `skill:` ref points. It resolves against the
 * graph's package directory, or a standalone graph document's directory. A package's graph
 * may not escape the package's parent folder (sibling packages such as `../data-store` are
 * fine); a standalone graph document is a workspace file, and may reach any package of the
 * workspace, but nothing outside it.
 */
export function nestedSkillPath(
  deps: Pick<RunSkillDeps, "paths">,
  pkg: { packageDir: string; graphDocumentPath?: string },
  step: { id: string; skill: string },
): string {
  const base = pkg.packageDir;
  const target = isAbsolute(step.skill) ? step.skill : resolve(base, step.skill);
  // The fence is the workspace for a graph that lives in it (a step may name any package of
  // the workspace, e.g. `../../skills/spend`); a package run from elsewhere (an absolute path,
  // a registry cache) may reach only its siblings.
  const inWorkspace =
    pkg.graphDocumentPath !== undefined ||
    isInside(deps.paths.root, base) ||
    isInside(realOrUndefined(deps.paths.root) ?? deps.paths.root, realOrUndefined(base) ?? base);
  const bound = inWorkspace ? deps.paths.root : dirname(base);
  const rel = relative(bound, target);
  const escape = (): RuntimeError =>
    new RuntimeError(
      "PATH_ESCAPE",
      inWorkspace
        ? `step ${step.id}: skill ${step.skill} is outside the workspace`
        : `step ${step.id}: skill ${step.skill} is outside the graph's package folder`,
      { step: step.id },
    );
  if (rel.startsWith("..") || isAbsolute(rel)) throw escape();
  // Again after symlinks: a package that links out of the fence is not inside it, however it
  // is named.
  const real = realOrUndefined(target);
  if (real !== undefined) {
    const fence = realOrUndefined(bound) ?? bound;
    if (!isInside(fence, real)) throw escape();
  }
  return target;
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Resolves and loads the package a local `skill:` step names, and selects its runner. */
export async function loadNestedPackage(
  deps: RunSkillDeps,
  parent: { packageDir: string; graphDocumentPath?: string },
  step: { id: string; skill: string; runner?: string },
): Promise<{ pkg: LoadedSkillPackage; runner: RunnerDefinition }> {
  const target = hasRegistryPrefix(step.skill)
    ? await materializeRegistryRef(deps, step.skill, { step: step.id })
    : nestedSkillPath(deps, parent, step);
  const resolved = await resolveSkillRef(target, { workspaceRoot: deps.paths.root });
  const digest = computeSourceDigest(resolved);
  const pkg = await loadPackageCached(resolved, digest, {
    dir: `${deps.paths.runxDir}/cache/packages`,
    runtimeRelease: deps.runtimeRelease,
  });
  return { pkg, runner: selectRunner(pkg, step.runner) };
}
