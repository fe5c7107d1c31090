/**
 * The worktree after an adapter ran, as git reports it: HEAD, whether it is dirty, and the
 * changed files with their digests. Recomputed by runx, never taken from the adapter's claim.
 */
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { hashCanonical, sha256Prefixed } from "../receipts/index.js";
import type { AdapterLimits } from "./definition.js";
import type { DispatchReceiptBody } from "./dispatch-receipt.js";
import { checkContained } from "./fs-safety.js";
import type { WorkPacket } from "./packet.js";
import type { ProbeRunner } from "./preflight.js";

/** HEAD, dirty state and a digest of the changed files, recomputed with git (never the claim). */
export async function workspaceAfter(
  worktree: string,
  packet: WorkPacket,
  run: ProbeRunner,
  limits: AdapterLimits,
): Promise<Partial<DispatchReceiptBody["workspace"]>> {
  const head = await run(["git", "rev-parse", "HEAD"], worktree);
  const status = await run(["git", "status", "--porcelain=v1", "--untracked-files=all"], worktree);
  const base = packet.workspace.base_commit;
  const diff = base !== null ? await run(["git", "diff", "--name-only", base], worktree) : null;
  const changed = [
    ...(diff?.stdout.split("\n") ?? []),
    ...(status?.stdout.split("\n").map((line) => line.slice(3)) ?? []),
  ].filter((line) => line !== "");
  const names = [...new Set(changed)].sort();
  return {
    head_after: head?.exitCode === 0 ? head.stdout.trim() : null,
    dirty_after: status?.exitCode === 0 ? status.stdout.trim() !== "" : null,
    changed_files_digest: hashCanonical(names),
    changed_files: names.slice(0, MAX_CHANGED_FILES).map((path) => ({
      path,
      sha256: worktreeFileDigest(worktree, path, limits.max_artifact_bytes),
    })),
  };
}

/** How many changed files a receipt lists (the digest covers them all). */
export const MAX_CHANGED_FILES = 1000;

/**
 * The sha256 of a changed file's bytes in the worktree; null when it is gone, reached through
 * a symlink, not a regular file or larger than `maxBytes`. Git names the file; nothing the
 * adapter claims is read.
 */
function worktreeFileDigest(worktree: string, path: string, maxBytes: number): string | null {
  if (checkContained(worktree, path, { file: true }) !== undefined) return null;
  const abs = join(worktree, path);
  try {
    if (lstatSync(abs).size > maxBytes) return null;
    return sha256Prefixed(readFileSync(abs));
  } catch {
    return null;
  }
}
