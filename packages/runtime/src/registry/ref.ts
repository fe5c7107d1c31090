/**
 * Registry references: `owner/name@version`, optionally written `registry:owner/name`,
 * `runx-registry:owner/name` or `runx://skill/<url-encoded owner/name@version>`. `owner` and
 * `name` are slugs (lowercase alphanumerics and `-`); `version` is `[A-Za-z0-9._+-]`, at most
 * 128 characters, never `.` or `..`. Pure.
 */
import { RuntimeError } from "../errors.js";

/** A parsed registry reference. `version` is absent for "the latest version". */
export interface RegistryRef {
  owner: string;
  name: string;
  version?: string;
  /** `owner/name`. */
  skillId: string;
}

const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const VERSION = /^[A-Za-z0-9._+-]{1,128}$/;
const PREFIXES = ["registry:", "runx-registry:", "runx://skill/"] as const;

/** True for a valid owner or skill name. */
export function isRegistrySlug(text: string): boolean {
  return SLUG.test(text);
}

/** True for a valid version string. */
export function isRegistryVersion(text: string): boolean {
  return VERSION.test(text) && text !== "." && text !== "..";
}

/** The reference without its `registry:`-style prefix, or undefined when it has none. */
export function stripRegistryPrefix(ref: string): string | undefined {
  for (const prefix of PREFIXES) {
    if (ref.startsWith(prefix)) {
      const rest = ref.slice(prefix.length);
      if (prefix !== "runx://skill/") return rest;
      try {
        return decodeURIComponent(rest);
      } catch {
        return rest;
      }
    }
  }
  return undefined;
}

/** True when `ref` carries an explicit registry prefix (`registry:` and friends). */
export function hasRegistryPrefix(ref: string): boolean {
  return stripRegistryPrefix(ref) !== undefined;
}

/** Parses `text` as `owner/name[@version]`, or returns undefined when it is not one. */
export function tryParseRegistryRef(text: string): RegistryRef | undefined {
  const bare = stripRegistryPrefix(text) ?? text;
  const match = /^([^/@]+)\/([^/@]+)(?:@(.+))?$/.exec(bare);
  if (match === null) return undefined;
  const [, owner = "", name = "", version] = match;
  if (!isRegistrySlug(owner) || !isRegistrySlug(name)) return undefined;
  if (version !== undefined && !isRegistryVersion(version)) return undefined;
  return {
    owner,
    name,
    skillId: `${owner}/${name}`,
    ...(version !== undefined ? { version } : {}),
  };
}

/** Parses a registry reference or throws USAGE naming the expected form. */
export function parseRegistryRef(text: string): RegistryRef {
  const ref = tryParseRegistryRef(text);
  if (ref === undefined) {
    throw new RuntimeError(
      "USAGE",
      `'${text}' is not a registry reference; expected owner/name@version (owner and name: lowercase letters, digits and -)`,
      { ref: text },
    );
  }
  return ref;
}

/** `owner/name@version` (or `owner/name` without a version). */
export function formatRegistryRef(ref: { skillId: string; version?: string }): string {
  return ref.version === undefined ? ref.skillId : `${ref.skillId}@${ref.version}`;
}
