/**
 * Registry references in runs: `runx skill owner/name@version` and graph steps
 * `skill: registry:owner/name[@version]`. The package is read from the local registry,
 * verified (digests, publisher signature, trust tier) and materialised into
 * `.runx/registry-step-skills/<16-hex>/<name>` before anything runs; the run then executes
 * that directory like any local package.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { RuntimeError } from "../errors.js";
import { hasRegistryPrefix, tryParseRegistryRef } from "../registry/ref.js";
import type { RunSkillDeps } from "./context.js";

/**
 * True when a top-level skill ref names a registry package: an explicit `registry:` prefix, or
 * `owner/name[@version]` that is not an existing workspace path. A local path always wins.
 * Without a version (`owner/name` → the latest version) the registry must hold that skill,
 * so a mistyped relative path (`skills/ech`) is still reported as a missing package.
 */
export function isRegistrySkillRef(
  ref: string,
  workspaceRoot: string,
  registryRoot?: () => string | undefined,
): boolean {
  if (hasRegistryPrefix(ref)) return true;
  const parsed = tryParseRegistryRef(ref);
  if (parsed === undefined || existsSync(resolve(workspaceRoot, ref))) return false;
  if (parsed.version !== undefined) return true;
  // Asked for only here: a plain path (the usual case) never touches the registry.
  const root = registryRoot?.();
  return root !== undefined && existsSync(join(root, parsed.owner, parsed.name));
}

/** Materialises a registry ref for a run and returns the package directory. */
export async function materializeRegistryRef(
  deps: Pick<RunSkillDeps, "registry">,
  ref: string,
  options: { step?: string; digest?: string } = {},
): Promise<string> {
  if (deps.registry === undefined) {
    const where = options.step !== undefined ? `step ${options.step}: ` : "";
    throw new RuntimeError(
      "PACKAGE_NOT_FOUND",
      `${where}registry skills need a local registry (not configured)`,
      { ref, ...(options.step !== undefined ? { step: options.step } : {}) },
    );
  }
  const { packageDir } = await deps
    .registry()
    .materializeForRun(ref, options.digest !== undefined ? { digest: options.digest } : {});
  return packageDir;
}
