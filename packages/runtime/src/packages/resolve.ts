/**
 * Skill reference resolution and package loading: the I/O edge in front of the
 * pure parser. Error details name files relative to the workspace root when inside it.
 */
import { RuntimeError } from "../errors.js";
import { buildGraphDocumentPackage } from "../graph/standalone.js";
import { buildSkillPackage } from "../parser/package.js";
import type { SkillPackage } from "../parser/package.js";

import { displayPath } from "../workspace.js";
import { PACKAGE_FILE_LIMITS, readFileCapped } from "./read-capped.js";
import type { ResolvedSkillRef } from "./locate.js";

export { computePackageDigest, computeSourceDigest } from "./digest.js";
export { resolveSkillRef } from "./locate.js";
export type { ResolvedSkillRef, ResolveSkillRefOptions } from "./locate.js";

/** A parsed package together with where it was read from. */
export interface LoadedSkillPackage extends SkillPackage {
  packageDir: string;
  skillMdPath: string;
  profilePath?: string;
  /** The owning package of an owned execution profile (see ResolvedSkillRef). */
  ownerDir?: string;
  /** The standalone graph document this package was read from (see ResolvedSkillRef). */
  graphDocumentPath?: string;
}

/** A package document's text: capped (read-capped.ts) and strict UTF-8. */
async function readUtf8(
  file: string,
  shown: string,
  what: string,
  maxBytes: number,
): Promise<string> {
  const bytes = await readFileCapped({ path: file, shown, what, maxBytes });
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new RuntimeError("PACKAGE_INVALID", "package file is not valid UTF-8", { file: shown });
  }
}

/** Reads and parses a resolved package (SKILL.md plus X.yaml when present). */
export async function loadSkillPackage(resolved: ResolvedSkillRef): Promise<LoadedSkillPackage> {
  if (resolved.graphDocumentPath !== undefined) {
    const file = displayPath(resolved.workspaceRoot, resolved.graphDocumentPath);
    const text = await readUtf8(
      resolved.graphDocumentPath,
      file,
      "the graph document",
      PACKAGE_FILE_LIMITS.graphDocument,
    );
    return {
      ...buildGraphDocumentPackage({ text, file }),
      packageDir: resolved.packageDir,
      skillMdPath: resolved.skillMdPath,
      graphDocumentPath: resolved.graphDocumentPath,
    };
  }
  const skillFile = displayPath(resolved.workspaceRoot, resolved.skillMdPath);
  const profileFile =
    resolved.profilePath === undefined
      ? undefined
      : displayPath(resolved.workspaceRoot, resolved.profilePath);
  const skillText = await readUtf8(
    resolved.skillMdPath,
    skillFile,
    "SKILL.md",
    PACKAGE_FILE_LIMITS.skillMd,
  );
  const profileText =
    resolved.profilePath === undefined || profileFile === undefined
      ? undefined
      : {
          text: await readUtf8(
            resolved.profilePath,
            profileFile,
            "X.yaml",
            PACKAGE_FILE_LIMITS.profile,
          ),
          file: profileFile,
        };
  const pkg = buildSkillPackage({
    skillMd: { text: skillText, file: skillFile },
    profile: profileText,
    ownedProfile: resolved.ownerDir !== undefined,
  });
  const loaded: LoadedSkillPackage = {
    ...pkg,
    packageDir: resolved.packageDir,
    skillMdPath: resolved.skillMdPath,
  };
  if (resolved.profilePath !== undefined) loaded.profilePath = resolved.profilePath;
  if (resolved.ownerDir !== undefined) loaded.ownerDir = resolved.ownerDir;
  return loaded;
}
