/**
 * A skill package's bytes as the authoring tools see them: every regular file below the
 * package directory (`.git`, `.runx`, `node_modules` and `target` skipped; symlinks and other
 * file types refused), in name order, within 500 files and 20 MiB. The package digest is
 * sha256 over `directory\0` then, per file, its relative path, its mode (u32) and its bytes,
 * each prefixed with its length as a big-endian u64; an absent package digests as
 * sha256(`absent`). The metrics count files, bytes and text lines by class (generated under
 * dist/ or generated/, test under fixtures/, tests/, test/ or *.test.*, production otherwise)
 * and executable files by extension.
 */
import { lstat, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../../errors.js";
import { sha256Prefixed } from "../../receipts/canonical.js";

/** Package bounds (files, bytes) for snapshots and inline candidates. */
export const MAX_PACKAGE_FILES = 500;
export const MAX_PACKAGE_BYTES = 20 * 1024 * 1024;

const IGNORED = new Set([".git", ".runx", "node_modules", "target"]);
const EXECUTABLE = [".cjs", ".js", ".mjs", ".ts", ".tsx", ".py", ".rb", ".rs", ".sh"];

/** One file of a snapshot (path relative to the package, `/`-separated). */
export interface PackageFile {
  path: string;
  contents: Buffer;
  mode: number;
}

/** A package's files and digest. */
export interface PackageSnapshot {
  digest: string;
  exists: boolean;
  files: PackageFile[];
}

/** `runx.skill` package metrics. */
export interface PackageMetrics {
  [key: string]: number;
  files: number;
  bytes: number;
  production_lines: number;
  test_lines: number;
  generated_lines: number;
  executable_files: number;
  executable_lines: number;
}

/** True for a directory entry name no package snapshot includes. */
export function ignoredEntry(name: string): boolean {
  return IGNORED.has(name);
}

/** The digest of a package directory that does not exist. */
export function absentDigest(): string {
  return sha256Prefixed("absent");
}

function refusePackage(path: string, message: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", message, { path });
}

async function collect(
  root: string,
  rel: string,
  out: PackageFile[],
  budget: { bytes: number },
  field: string,
): Promise<void> {
  const names = (await readdir(join(root, rel))).sort((a, b) =>
    Buffer.compare(Buffer.from(a), Buffer.from(b)),
  );
  for (const name of names) {
    if (ignoredEntry(name)) continue;
    const child = rel === "" ? name : `${rel}/${name}`;
    const info = await lstat(join(root, child));
    if (info.isSymbolicLink()) {
      throw refusePackage(field, `skill package contains an unsupported symbolic link: ${child}`);
    }
    if (info.isDirectory()) {
      await collect(root, child, out, budget, field);
    } else if (info.isFile()) {
      const contents = await readFile(join(root, child));
      budget.bytes += contents.length;
      if (out.length + 1 > MAX_PACKAGE_FILES || budget.bytes > MAX_PACKAGE_BYTES) {
        throw new RuntimeError(
          "LIMIT_EXCEEDED",
          `skill package exceeds the limit (${MAX_PACKAGE_FILES} files, ${MAX_PACKAGE_BYTES} bytes)`,
          { path: field, limit_files: MAX_PACKAGE_FILES, limit_bytes: MAX_PACKAGE_BYTES },
        );
      }
      out.push({ path: child, contents, mode: info.mode });
    } else {
      throw refusePackage(field, `skill package contains an unsupported file type: ${child}`);
    }
  }
}

function lengthPrefixed(value: Buffer): Buffer[] {
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(value.length));
  return [length, value];
}

/** The digest of a list of package files (already in snapshot order). */
export function digestFiles(files: readonly PackageFile[]): string {
  const parts: Buffer[] = [Buffer.from("directory\0")];
  for (const file of files) {
    const mode = Buffer.alloc(4);
    mode.writeUInt32BE(file.mode >>> 0);
    parts.push(...lengthPrefixed(Buffer.from(file.path)), ...lengthPrefixed(mode));
    parts.push(...lengthPrefixed(file.contents));
  }
  return sha256Prefixed(Buffer.concat(parts));
}

/** Reads a package directory (absolute, already contained) into a snapshot. */
export async function packageSnapshot(dir: string, field: string): Promise<PackageSnapshot> {
  let info;
  try {
    info = await lstat(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      return { digest: absentDigest(), exists: false, files: [] };
    }
    throw error;
  }
  if (info.isSymbolicLink())
    throw refusePackage(field, "skill package target cannot be a symbolic link");
  if (!info.isDirectory()) throw refusePackage(field, "skill package target is not a directory");
  const files: PackageFile[] = [];
  await collect(dir, "", files, { bytes: 0 }, field);
  return { digest: digestFiles(files), exists: true, files };
}

function lineClass(path: string): "production_lines" | "test_lines" | "generated_lines" {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (path.startsWith("dist/") || path.startsWith("generated/") || name.includes(".generated.")) {
    return "generated_lines";
  }
  if (
    ["fixtures/", "tests/", "test/"].some((prefix) => path.startsWith(prefix)) ||
    name.includes(".test.") ||
    name.endsWith("_test.rs")
  ) {
    return "test_lines";
  }
  return "production_lines";
}

function textLines(contents: Buffer): number {
  if (contents.length === 0) return 0;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(contents);
  } catch {
    return 0;
  }
  let lines = 0;
  for (const byte of contents) if (byte === 0x0a) lines += 1;
  return contents[contents.length - 1] === 0x0a ? lines : lines + 1;
}

/** True for a path whose extension marks executable package code. */
export function isExecutablePath(path: string): boolean {
  return EXECUTABLE.some((ext) => path.endsWith(ext));
}

/** The metrics of a list of package files. */
export function packageMetrics(files: readonly PackageFile[]): PackageMetrics {
  const m: PackageMetrics = {
    files: 0,
    bytes: 0,
    production_lines: 0,
    test_lines: 0,
    generated_lines: 0,
    executable_files: 0,
    executable_lines: 0,
  };
  for (const file of files) {
    const lines = textLines(file.contents);
    m.files += 1;
    m.bytes += file.contents.length;
    m[lineClass(file.path)] += lines;
    if (isExecutablePath(file.path)) {
      m.executable_files += 1;
      m.executable_lines += lines;
    }
  }
  return m;
}

/** `after - before`, field by field. */
export function metricsDelta(before: PackageMetrics, after: PackageMetrics): PackageMetrics {
  const out = { ...after };
  for (const key of Object.keys(out)) out[key] = (after[key] ?? 0) - (before[key] ?? 0);
  return out;
}
