/**
 * Placing a verified registry record's files on disk: the digest a caller pinned, and the
 * write through a temporary sibling directory that is renamed into place only once the
 * written tree digests to the record.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { RuntimeError } from "../errors.js";
import { computePackageDigest } from "../packages/digest.js";
import { ensureStateDir } from "../workspace.js";
import { recordEntries } from "./record.js";
import type { RegistryRecord } from "./record.js";

/** The package digest of a directory; undefined when it cannot be read. */
export function safeDigest(dir: string): string | undefined {
  try {
    return computePackageDigest(dir);
  } catch {
    return undefined;
  }
}

/** Refuses a record whose package digest is not the one the caller pinned (`--digest`). */
export function checkExpectedDigest(
  record: RegistryRecord,
  label: string,
  expected?: string,
): void {
  if (expected === undefined) return;
  const want = expected.startsWith("sha256:")
    ? expected.toLowerCase()
    : `sha256:${expected.toLowerCase()}`;
  if (want !== record.package_digest) {
    throw new RuntimeError(
      "REGISTRY_DIGEST_MISMATCH",
      `Digest mismatch for ${label}: expected ${want}, received ${record.package_digest}`,
      { ref: label, expected: want, received: record.package_digest },
    );
  }
}

/**
 * Writes a verified record's files to `destination` through a temporary sibling directory.
 * An existing destination with the same package digest is left alone (`unchanged`); one with
 * different content is refused.
 */
export function materialize(
  record: RegistryRecord,
  destination: string,
  label: string,
): "installed" | "unchanged" {
  if (existsSync(destination)) {
    if (!statSync(destination).isDirectory() || safeDigest(destination) !== record.package_digest) {
      throw new RuntimeError(
        "REGISTRY_CONFLICT",
        `${label}: the destination already exists with different content; remove it first`,
        { ref: label },
      );
    }
    return "unchanged";
  }
  const parent = path.dirname(destination);
  // A symlinked `.runx/registry-step-skills` is refused, not written through.
  ensureStateDir(parent);
  const tmp = mkdtempSync(path.join(parent, ".runx-add-"));
  try {
    for (const entry of recordEntries(record)) {
      const target = path.join(tmp, ...entry.path.split("/"));
      const rel = path.relative(tmp, target);
      if (rel.startsWith("..") || path.isAbsolute(rel)) {
        throw new RuntimeError("REGISTRY_INVALID", `${label}: package entry ${entry.path} escapes`);
      }
      mkdirSync(path.dirname(target), { recursive: true });
      writeFileSync(target, entry.content, { flag: "wx" });
    }
    const written = computePackageDigest(tmp);
    if (written !== record.package_digest) {
      throw new RuntimeError(
        "REGISTRY_DIGEST_MISMATCH",
        `Digest mismatch for ${label}: expected ${record.package_digest}, received ${written}`,
        { ref: label },
      );
    }
    try {
      renameSync(tmp, destination);
    } catch (error) {
      // Another process materialised the same package first: identical content is fine.
      if (existsSync(destination) && safeDigest(destination) === record.package_digest) {
        rmSync(tmp, { recursive: true, force: true });
        return "unchanged";
      }
      throw error;
    }
  } catch (error) {
    rmSync(tmp, { recursive: true, force: true });
    throw error;
  }
  return "installed";
}
