/**
 * Registry references in runs: `runx skill owner/name@version` and graph steps
 * `skill: registry:owner/name[@version]`. The package is read from the local registry,
 * verified (digests, publisher signature, trust tier) and materialised into
 * `.runx/registry-step-skills/<16-hex>/<name>` before anything runs; the run then executes
 * that directory like any local package.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import { hasRegistryPrefix, tryParseRegistryRef } from "../registry/ref.js";
import type { RunSkillDeps } from "./context.js";

/**
 * True when a top-level skill ref names a registry package: an explicit `registry:` prefix, or
 * `owner/name@version` that is not an existing workspace path. Without the prefix the version
 * is required, so a mistyped relative path (`skills/ech`) is reported as a missing package
 * rather than looked up in the registry; `registry:owner/name` asks for the latest version.
 */
export function isRegistrySkillRef(ref: string, workspaceRoot: string): boolean {
  if (hasRegistryPrefix(ref)) return true;
  const parsed = tryParseRegistryRef(ref);
  return parsed?.version !== undefined && !existsSync(resolve(workspaceRoot, ref));
}

/** Materialises a registry ref for a run and returns the package directory. */
export function materializeRegistryRef(
  deps: Pick<RunSkillDeps, "registry">,
  ref: string,
  options: { step?: string; digest?: string } = {},
): string {
  if (deps.registry === undefined) {
    const where = options.step !== undefined ? `step ${options.step}: ` : "";
    throw new RuntimeError(
      "PACKAGE_NOT_FOUND",
      `${where}registry skills need a local registry (not configured)`,
      { ref, ...(options.step !== undefined ? { step: options.step } : {}) },
    );
  }
  const { packageDir } = deps
    .registry()
    .materializeForRun(ref, options.digest !== undefined ? { digest: options.digest } : {});
  return packageDir;
}
