/**
 * The exact file set of a registry package, read from a source directory, and the path rules
 * every package entry obeys (also when a record is read back from a registry).
 *
 * The set is the package-digest set: every regular file under the directory except
 * `.git`, `.runx` and `node_modules`, so a package run from its source directory and from the
 * registry binds the same package digest. Publishing refuses symlinks (a registry package holds
 * files only), secret-looking file names (`.env`, `*.pem`, `id_rsa`, …), more than 128 files,
 * a file over 512 KiB and more than 2 MiB in total.
 */
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { RuntimeError } from "../errors.js";

/** At most this many files per package. */
export const PACKAGE_MAX_FILES = 128;
/** At most this many bytes per file. */
export const PACKAGE_MAX_FILE_BYTES = 512 * 1024;
/** At most this many bytes over all files. */
export const PACKAGE_MAX_TOTAL_BYTES = 2 * 1024 * 1024;

const EXCLUDED: ReadonlySet<string> = new Set([".git", ".runx", "node_modules"]);
const SECRET_NAMES =
  /^(\.env(\..*)?|\.npmrc|\.netrc|\.pypirc|id_(rsa|dsa|ecdsa|ed25519)(\.pub)?|credentials(\.json)?|.*\.(pem|key|p12|pfx|keystore|jks))$/i;

/** One package file: `/`-separated relative path and its bytes. */
export interface PackageEntry {
  path: string;
  content: Uint8Array;
}

/**
 * Why `entry` is not an acceptable package path, or undefined when it is: relative, `/`
 * separated, no empty, `.` or `..` segment, no backslash, drive letter or control character,
 * and no excluded directory.
 */
export function packagePathProblem(entry: string): string | undefined {
  if (entry === "") return "the path is empty";
  if (entry.startsWith("/") || /^[A-Za-z]:/.test(entry)) return "the path is absolute";
  if (entry.includes("\\")) return "the path contains a backslash";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(entry)) return "the path contains a control character";
  const segments = entry.split("/");
  if (segments.some((s) => s === "..")) return "the path climbs out of the package (..)";
  if (segments.some((s) => s === "" || s === ".")) return "the path is not normalized";
  if (segments.some((s) => EXCLUDED.has(s))) return "the path is inside an excluded directory";
  if (entry.length > 1024) return "the path is longer than 1024 characters";
  return undefined;
}

function refuse(message: string, file?: string): never {
  throw new RuntimeError("REGISTRY_INVALID", message, file !== undefined ? { file } : {});
}

/** Reads the package file set of `dir` (see the module comment). Writes nothing. */
export function readPackageEntries(dir: string): PackageEntry[] {
  const root = path.resolve(dir);
  const out: PackageEntry[] = [];
  let total = 0;
  const walk = (absolute: string, prefix: string): void => {
    const entries = readdirSync(absolute, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (EXCLUDED.has(entry.name)) continue;
      const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      const full = path.join(absolute, entry.name);
      const problem = packagePathProblem(relative);
      if (problem !== undefined) refuse(`package file ${relative}: ${problem}`, relative);
      const info = lstatSync(full);
      if (info.isSymbolicLink()) {
        refuse(
          `package file ${relative} is a symlink; registry packages hold regular files only`,
          relative,
        );
      }
      if (info.isDirectory()) {
        walk(full, relative);
        continue;
      }
      if (!info.isFile()) continue;
      if (SECRET_NAMES.test(entry.name)) {
        refuse(
          `package file ${relative} looks like a secret and is never published; move it out of the package`,
          relative,
        );
      }
      if (info.size > PACKAGE_MAX_FILE_BYTES) {
        refuse(`package file ${relative} is larger than 512 KiB`, relative);
      }
      total += info.size;
      if (total > PACKAGE_MAX_TOTAL_BYTES) refuse("the package is larger than 2 MiB in total");
      out.push({ path: relative, content: new Uint8Array(readFileSync(full)) });
      if (out.length > PACKAGE_MAX_FILES) refuse("the package has more than 128 files");
    }
  };
  walk(root, "");
  return out;
}
