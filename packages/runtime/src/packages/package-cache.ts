/**
 * A parsed-package cache keyed by the package digest and the runtime release. A run computes
 * the package digest anyway (it binds receipts and checkpoints), so an unchanged package is
 * read back as parsed JSON instead of being parsed again, and the YAML parser and schema
 * validators are not even loaded. Any miss or unreadable entry falls back to a full parse.
 */
import { sha256Hex } from "../crypto/sha256.js";
import { promises as fsp, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ensureStateDir } from "../workspace.js";
import { computeSourceDigest } from "./digest.js";
import type { ResolvedSkillRef } from "./locate.js";
import type { LoadedSkillPackage } from "./resolve.js";

const CACHE_SCHEMA = "runx.package_cache.v1";

/** Where and for which runtime the cache is kept. */
export interface PackageCacheOptions {
  /** e.g. `<workspace>/.runx/cache/packages`. */
  dir: string;
  runtimeRelease: string;
}

interface CacheEntry {
  schema: string;
  runtime_release: string;
  package_digest: string;
  package: Omit<
    LoadedSkillPackage,
    "packageDir" | "skillMdPath" | "profilePath" | "graphDocumentPath" | "ownerDir"
  >;
}

/**
 * An owned execution profile shares its owning package's digest (digest.ts), so the entry is
 * keyed on the profile's path inside the owner too: the owner and each of its profiles parse
 * to different packages.
 */
function entryFile(
  options: PackageCacheOptions,
  packageDigest: string,
  resolved: ResolvedSkillRef,
): string {
  const profile =
    resolved.ownerDir === undefined ? "" : `\0${relative(resolved.ownerDir, resolved.packageDir)}`;
  const key = sha256Hex(`${options.runtimeRelease}\0${packageDigest}${profile}`);
  return join(options.dir, `${key}.json`);
}

function withLocation(pkg: CacheEntry["package"], resolved: ResolvedSkillRef): LoadedSkillPackage {
  const loaded: LoadedSkillPackage = {
    ...pkg,
    packageDir: resolved.packageDir,
    skillMdPath: resolved.skillMdPath,
  };
  if (resolved.profilePath !== undefined) loaded.profilePath = resolved.profilePath;
  if (resolved.ownerDir !== undefined) loaded.ownerDir = resolved.ownerDir;
  if (resolved.graphDocumentPath !== undefined)
    loaded.graphDocumentPath = resolved.graphDocumentPath;
  return loaded;
}

/** Loads a package, from the cache when its digest is known there, else by parsing it. */
export async function loadPackageCached(
  resolved: ResolvedSkillRef,
  packageDigest: string,
  options: PackageCacheOptions,
): Promise<LoadedSkillPackage> {
  const file = entryFile(options, packageDigest, resolved);
  try {
    // A cache reached through a symlinked `.runx` or `cache/` is not runx's own: a miss.
    const entry = ensureStateDir(options.dir, { create: false })
      ? (JSON.parse(readFileSync(file, "utf8")) as CacheEntry)
      : undefined;
    if (
      entry?.schema === CACHE_SCHEMA &&
      entry.runtime_release === options.runtimeRelease &&
      entry.package_digest === packageDigest
    ) {
      return withLocation(entry.package, resolved);
    }
  } catch {
    // A missing or unreadable entry is a miss.
  }
  const { loadSkillPackage } = await import("./resolve.js");
  const loaded = await loadSkillPackage(resolved);
  // Only cache what was parsed from the bytes the digest names (the package may have changed).
  if (computeSourceDigest(resolved) === packageDigest) {
    const {
      packageDir: _d,
      skillMdPath: _s,
      profilePath: _p,
      graphDocumentPath: _g,
      ownerDir: _o,
      ...pkg
    } = loaded;
    const entry: CacheEntry = {
      schema: CACHE_SCHEMA,
      runtime_release: options.runtimeRelease,
      package_digest: packageDigest,
      package: pkg,
    };
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      ensureStateDir(options.dir);
      await fsp.writeFile(tmp, JSON.stringify(entry));
      await fsp.rename(tmp, file);
    } catch {
      await fsp.rm(tmp, { force: true }).catch(() => undefined);
    }
  }
  return loaded;
}
