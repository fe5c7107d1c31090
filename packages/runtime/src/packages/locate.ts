/**
 * Skill reference resolution: which directory a reference names. Kept apart from
 * package parsing so that resolving does not load the parser.
 */
import { statSync } from "node:fs";
import type { Stats } from "node:fs";
import path from "node:path";
import { RuntimeError } from "../errors.js";
import { displayPath } from "../workspace.js";

/** Where a skill reference points. */
export interface ResolvedSkillRef {
  workspaceRoot: string;
  packageDir: string;
  skillMdPath: string;
  /** The package's X.yaml, when it has one. */
  profilePath?: string;
  /**
   * Set when `packageDir` holds only an X.yaml: an execution profile owned by the nearest
   * ancestor package with a SKILL.md (inside the workspace), whose directory this is.
   * `skillMdPath` is then the owner's manual.
   */
  ownerDir?: string;
  /**
   * Set when the reference names a standalone graph document rather than a package:
   * the file itself. `packageDir` is then its directory (relative step refs resolve there)
   * and `skillMdPath` is the document too (it is the package's only source).
   */
  graphDocumentPath?: string;
}

/** Options for {@link resolveSkillRef}. */
export interface ResolveSkillRefOptions {
  /** Relative references and bare names resolve against this directory. */
  workspaceRoot: string;
}

const BARE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A few local stats per resolution: synchronous, which costs less than a thread-pool round
 * trip each and keeps node:fs/promises (its stream and readline machinery) off the start-up.
 */
function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Resolves a package directory, the SKILL.md inside one, a standalone graph document (any
 * `.yaml`/`.yml` file but `X.yaml`) or a bare name (looked up as `<workspaceRoot>/skills/<name>`).
 * Refuses flat markdown files and catalog workspace roots (PACKAGE_INVALID); anything else
 * missing is PACKAGE_NOT_FOUND.
 */
export function resolveSkillRef(
  ref: string,
  options: ResolveSkillRefOptions,
): Promise<ResolvedSkillRef> {
  try {
    return Promise.resolve(locateSkillRef(ref, options));
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function locateSkillRef(ref: string, options: ResolveSkillRefOptions): ResolvedSkillRef {
  const workspaceRoot = path.resolve(options.workspaceRoot);
  if (ref.trim() === "")
    throw new RuntimeError("PACKAGE_NOT_FOUND", "no skill reference given", { ref });
  const candidate = path.resolve(workspaceRoot, ref);
  const found = statOrUndefined(candidate);
  let packageDir: string;
  if (found?.isDirectory() === true) {
    packageDir = candidate;
  } else if (found?.isFile() === true) {
    const base = path.basename(candidate);
    if (/\.ya?ml$/i.test(base) && base !== "X.yaml") {
      // A standalone graph document; its content is checked when it is loaded.
      return {
        workspaceRoot,
        packageDir: path.dirname(candidate),
        skillMdPath: candidate,
        graphDocumentPath: candidate,
      };
    }
    if (base !== "SKILL.md") {
      const message = /\.md$/i.test(base)
        ? "flat markdown files are not supported; pass the package directory or its SKILL.md"
        : "not a skill package; pass the package directory or its SKILL.md";
      throw new RuntimeError("PACKAGE_INVALID", message, {
        ref,
        file: displayPath(workspaceRoot, candidate),
      });
    }
    packageDir = path.dirname(candidate);
  } else if (found === undefined && BARE_NAME.test(ref)) {
    packageDir = path.join(workspaceRoot, "skills", ref);
    if (statOrUndefined(packageDir)?.isDirectory() !== true) {
      throw new RuntimeError(
        "PACKAGE_NOT_FOUND",
        `skill ${ref} was not found in the workspace skills/ catalog`,
        { ref },
      );
    }
  } else {
    throw new RuntimeError("PACKAGE_NOT_FOUND", "skill package not found", { ref });
  }

  const skillMdPath = path.join(packageDir, "SKILL.md");
  const profileCandidate = path.join(packageDir, "X.yaml");
  const skillMd = statOrUndefined(skillMdPath);
  const profile = statOrUndefined(profileCandidate);
  const catalog = statOrUndefined(path.join(packageDir, "skills"));
  // A package document that is there but is no regular file (a FIFO, a device, a directory)
  // is refused, not skipped: skipping X.yaml would run the package with another runner.
  for (const [info, file] of [
    [skillMd, skillMdPath],
    [profile, profileCandidate],
  ] as const) {
    if (info !== undefined && !info.isFile())
      throw new RuntimeError("PACKAGE_INVALID", `${path.basename(file)} is not a regular file`, {
        ref,
        file: displayPath(workspaceRoot, file),
      });
  }
  const hasProfile = profile?.isFile() === true;
  if (skillMd?.isFile() !== true) {
    if (hasProfile)
      return ownedProfile({ ref, workspaceRoot, packageDir, profile: profileCandidate });
    throw new RuntimeError("PACKAGE_NOT_FOUND", "the directory has no SKILL.md", {
      ref,
      file: displayPath(workspaceRoot, packageDir),
    });
  }
  if (catalog?.isDirectory() === true && !hasProfile) {
    throw new RuntimeError(
      "PACKAGE_INVALID",
      "this directory is a workspace with a skills/ catalog; its SKILL.md is the workspace manual, not a package. " +
        "Run a package under skills/<name>, or add an X.yaml to make the root a package",
      { ref, file: displayPath(workspaceRoot, skillMdPath) },
    );
  }
  const resolved: ResolvedSkillRef = { workspaceRoot, packageDir, skillMdPath };
  if (hasProfile) resolved.profilePath = profileCandidate;
  return resolved;
}

/**
 * A directory with an X.yaml and no SKILL.md is an execution profile of the package that owns
 * it: the nearest ancestor with a SKILL.md, as upstream resolves it (a graph's stage profiles,
 * `skill: ./graph/plan`, share their package's manual). The search stops at the workspace
 * root; a profile outside the workspace, or with no owner inside it, is refused.
 */
function ownedProfile(args: {
  ref: string;
  workspaceRoot: string;
  packageDir: string;
  profile: string;
}): ResolvedSkillRef {
  const { ref, workspaceRoot, packageDir, profile } = args;
  const inside = (dir: string): boolean => {
    const rel = path.relative(workspaceRoot, dir);
    return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
  };
  let dir = path.dirname(packageDir);
  const contained = inside(packageDir);
  while (contained && inside(dir)) {
    const manual = path.join(dir, "SKILL.md");
    if (statOrUndefined(manual)?.isFile() === true) {
      return {
        workspaceRoot,
        packageDir,
        skillMdPath: manual,
        profilePath: profile,
        ownerDir: dir,
      };
    }
    if (dir === workspaceRoot) break;
    dir = path.dirname(dir);
  }
  throw new RuntimeError(
    "PACKAGE_NOT_FOUND",
    "execution profile has no owning SKILL.md ancestor inside the workspace",
    { ref, file: displayPath(workspaceRoot, profile) },
  );
}
