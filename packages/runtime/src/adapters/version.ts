/**
 * Tool versions for the adapter tool probe. Pure. A version is a
 * numeric core (`1`, `1.2`, `1.2.3`, optionally `v`-prefixed) followed by nothing, build
 * metadata (`+…`), or a prerelease tag. Anything else attached to the core — `-rc.1`, `rc1`,
 * `b2`, `.dev0`, `-nightly` — is a prerelease: an unknown suffix never passes as a release.
 */

/** A parsed version. */
export interface ToolVersion {
  parts: [number, number, number];
  prerelease: boolean;
}

const VERSION = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/s;

/** Parses `text` (already cut to the version); undefined when it does not start with one. */
export function parseToolVersion(text: string): ToolVersion | undefined {
  const match = VERSION.exec(text.trim());
  if (match === null) return undefined;
  const rest = (match[4] ?? "").split(/\s/)[0] ?? "";
  // A fourth numeric component (`1.2.3.4`) is still the release; build metadata is too.
  // Trailing punctuation (`1.2.3,` or `(1.2.3)`) is prose around the version, not a tag.
  const tail = rest.replace(/^(\.\d+)+/, "").replace(/[.,;:)\]]+$/, "");
  return {
    parts: [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)],
    prerelease: tail !== "" && !tail.startsWith("+"),
  };
}

/** True when `a` ≥ `b` on the numeric core. */
export function versionAtLeast(a: ToolVersion, b: ToolVersion): boolean {
  for (let i = 0; i < 3; i++) {
    if (a.parts[i] !== b.parts[i]) return (a.parts[i] ?? 0) > (b.parts[i] ?? 0);
  }
  return true;
}

/**
 * The version the probe's regex found in `stdout`, with whatever is attached right after it
 * kept: a `version_regex` like `v(\d+\.\d+\.\d+)` captures `0.17.3` out of `v0.17.3-beta.1` or
 * `0.17.3rc1`, and dropping the suffix would let a prerelease pass as a release.
 */
export function matchedVersionText(
  stdout: string,
  match: RegExpExecArray | null,
): string | undefined {
  if (match === null) return undefined;
  const text = match[1] ?? match[0];
  if (text === "") return undefined;
  const at = match.index + Math.max(0, match[0].indexOf(text)) + text.length;
  const attached = /^[0-9A-Za-z.+-]+/.exec(stdout.slice(at));
  return attached === null ? text : `${text}${attached[0].replace(/\.$/, "")}`;
}
