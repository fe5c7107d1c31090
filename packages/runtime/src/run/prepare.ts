/** Resolution of a run: package, digests, runner, run id (no receipt can exist before this). */
import { resolve } from "node:path";
import { computeSourceDigest } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import { loadPackageCached } from "../packages/package-cache.js";
import { selectRunner } from "../parser/select-runner.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import { hashCanonical } from "../receipts/index.js";
import { displayPath } from "../workspace.js";
import { RuntimeError } from "../errors.js";
import { hasRegistryPrefix } from "../registry/ref.js";
import type { Prepared, RunSkillDeps } from "./context.js";
import type { RunOrigin } from "./origin.js";
import { isRegistrySkillRef, materializeRegistryRef } from "./registry-refs.js";

/** The execution-closure digest: runtime release plus every package binding of the run. */
export function closureDigestOf(
  runtimeRelease: string,
  bindings: Array<{ skill: string; runner: string; package_digest: string }>,
): string {
  return hashCanonical({ runtime_release: runtimeRelease, package_bindings: bindings });
}

/**
 * The packages a graph's skill steps execute (transitively bound into the closure digest, so a
 * change to a child package cannot continue a run paused against the old one).
 */
async function nestedBindings(
  deps: RunSkillDeps,
  runner: RunnerDefinition,
  packageDir: string,
  root: string,
): Promise<Array<{ skill: string; runner: string; package_digest: string }>> {
  if (runner.type !== "graph") return [];
  const steps = (runner.graph as { steps?: unknown }).steps;
  const out: Array<{ skill: string; runner: string; package_digest: string }> = [];
  for (const step of Array.isArray(steps) ? steps : []) {
    const ref = (step as { skill?: unknown }).skill;
    if (typeof ref !== "string") continue;
    try {
      const target = hasRegistryPrefix(ref)
        ? await materializeRegistryRef(deps, ref)
        : resolve(packageDir, ref);
      const nested = await resolveSkillRef(target, { workspaceRoot: root });
      out.push({
        skill: ref,
        runner:
          typeof (step as { runner?: unknown }).runner === "string"
            ? String((step as { runner: string }).runner)
            : "default",
        package_digest: computeSourceDigest(nested),
      });
    } catch {
      // An unresolvable step is reported when the step runs; it binds as missing here.
      out.push({ skill: ref, runner: "", package_digest: "missing" });
    }
  }
  return out;
}

/** Resolves `ref`, digests and loads the package, selects the runner and names the run. */
export async function prepareRun(
  deps: RunSkillDeps,
  options: {
    ref: string;
    runner?: string;
    runId?: string;
    contextExtras?: Record<string, unknown>;
    /** Expected package digest of a registry ref (`--digest`), checked before materialising. */
    registryDigest?: string;
    /** Who asks for the run, through which entry point (its `run_started` ledger line). */
    origin?: RunOrigin;
  },
): Promise<Prepared> {
  const root = deps.paths.root;
  const target = isRegistrySkillRef(options.ref, root, () => deps.registry?.().root)
    ? await materializeRegistryRef(
        deps,
        options.ref,
        options.registryDigest !== undefined ? { digest: options.registryDigest } : {},
      )
    : options.ref;
  if (options.registryDigest !== undefined && target === options.ref) {
    throw new RuntimeError("USAGE", "--digest applies to registry refs (owner/name@version) only");
  }
  const resolved = await resolveSkillRef(target, { workspaceRoot: root });
  const packageDigest = computeSourceDigest(resolved);
  const pkg = await loadPackageCached(resolved, packageDigest, {
    dir: `${deps.paths.runxDir}/cache/packages`,
    runtimeRelease: deps.runtimeRelease,
  });
  const runner = selectRunner(pkg, options.runner);
  const closureDigest = closureDigestOf(deps.runtimeRelease, [
    { skill: pkg.name, runner: runner.name, package_digest: packageDigest },
    ...(await nestedBindings(deps, runner, resolved.packageDir, root)),
  ]);
  const runId =
    options.runId ?? `run_${runner.name.replace(/[^A-Za-z0-9_-]/g, "_")}_${deps.randomHex(8)}`;
  return {
    pkg,
    runner,
    runId,
    packageDigest,
    closureDigest,
    preparedContextDigest: hashCanonical({
      skill_path: displayPath(root, pkg.graphDocumentPath ?? pkg.packageDir),
      runner: runner.name,
      runner_type: runner.type,
      package_digest: packageDigest,
      ...(options.contextExtras ?? {}),
    }),
    ...(options.origin !== undefined ? { origin: options.origin } : {}),
  };
}
