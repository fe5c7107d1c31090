/**
 * Test-only access to the upstream conformance oracles in the shared corpus, read in place
 * (never copied into the repository). A missing corpus makes the reading test fail.
 */
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (the directory holding the workspace package.json). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");

/** Root of the upstream corpus copy. */
export const UPSTREAM_ROOT = resolve(REPO_ROOT, "../shared/conformance/runx-upstream");

/** Absolute path of a corpus file given its upstream-relative path. */
export function upstreamPath(relative: string): string {
  return resolve(UPSTREAM_ROOT, relative);
}

/** The text of a corpus file. */
export function readUpstreamText(relative: string): string {
  return readFileSync(upstreamPath(relative), "utf8");
}

/** A corpus file parsed as JSON. */
export function readUpstreamJson(relative: string): unknown {
  return JSON.parse(readUpstreamText(relative)) as unknown;
}
