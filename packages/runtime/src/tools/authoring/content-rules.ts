/**
 * What skill-authoring may put into a package, checked before anything is staged: package
 * paths are relative POSIX child paths; no file may carry private-key blocks or live provider
 * keys; auxiliary documents (README.md, CHANGELOG.md, INSTALLATION_GUIDE.md,
 * QUICK_REFERENCE.md) are package bloat that may only be edited where they already exist in
 * improve mode and never deleted; SKILL.md is never deleted; harness mode changes only
 * `fixtures/*.yaml`. Pure.
 */
import { RuntimeError } from "../../errors.js";
import { splitRelative } from "../paths.js";

/** An authoring mode of runx.skill.apply. */
export type AuthoringMode = "build" | "improve" | "harness";

const AUXILIARY = new Set([
  "README.md",
  "CHANGELOG.md",
  "INSTALLATION_GUIDE.md",
  "QUICK_REFERENCE.md",
]);
const KEY_HEADERS = new Set([
  "PRIVATE KEY",
  "RSA PRIVATE KEY",
  "EC PRIVATE KEY",
  "OPENSSH PRIVATE KEY",
]);

function denied(field: string, message: string): RuntimeError {
  return new RuntimeError("POLICY_DENIED", message, { path: field });
}

/** The normalized package-relative path (`a/b`), or PATH_ESCAPE / INPUT_INVALID naming `field`. */
export function packagePath(rel: string, field: string): string {
  const parts = splitRelative(rel, field);
  if (parts.length === 0 || rel.trim() !== rel) {
    throw new RuntimeError("INPUT_INVALID", `${field} must name a file inside the package`, {
      path: field,
    });
  }
  return parts.join("/");
}

/** Refuses contents that look like secret material (never echoing it). */
export function rejectSecretMaterial(path: string, contents: string, field: string): void {
  const privateKey = contents.split(/\r?\n/).some((line) => {
    const t = line.trim();
    return t.startsWith("-----BEGIN ") && t.endsWith("-----") && KEY_HEADERS.has(t.slice(11, -5));
  });
  const providerKey = contents
    .split(/[^A-Za-z0-9_]/)
    .some((token) => token.startsWith("nskey_live_") || token.startsWith("nskey_test_"));
  if (privateKey || providerKey) {
    throw denied(field, `refusing secret-like material in ${path}`);
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function assertHarnessPath(path: string, mode: AuthoringMode, field: string): void {
  if (mode === "harness" && !(path.startsWith("fixtures/") && /\.ya?ml$/.test(path))) {
    throw denied(field, `harness mode may only change fixtures/*.yaml files: ${path}`);
  }
}

/** Checks one planned write (`exists`: the file is already in the package). */
export function assertWritable(
  path: string,
  mode: AuthoringMode,
  exists: boolean,
  field: string,
): void {
  const name = basename(path);
  if (AUXILIARY.has(name) && !(mode === "improve" && exists)) {
    throw denied(field, `${name} is auxiliary package bloat; keep operating guidance in SKILL.md`);
  }
  assertHarnessPath(path, mode, field);
}

/** Checks one planned delete. */
export function assertDeletable(path: string, mode: AuthoringMode, field: string): void {
  const name = basename(path);
  if (AUXILIARY.has(name)) {
    throw denied(field, `${name} is an existing public package surface and cannot be deleted`);
  }
  assertHarnessPath(path, mode, field);
  if (path === "SKILL.md") throw denied(field, "SKILL.md cannot be deleted");
}
