/**
 * Package digest: sha256 over "runx.skill-package.v1\0" followed by, for every package
 * file in ascending byte order of its `/`-separated relative path, the u64 big-endian path
 * length, the path bytes, the u64 big-endian content length and the content.
 *
 * File set (our documented choice; upstream leaves it open): every regular file under the
 * package directory, at any depth, except entries named `.runx`, `.git` or `node_modules`.
 * Symlinks: a link whose target resolves outside the package is refused (PACKAGE_INVALID);
 * a link to a file inside the package is hashed under the link's own path with the target's
 * bytes (so retargeting a link changes the digest); links to directories and dangling links
 * are refused. FIFOs, sockets and devices are ignored. Sizes are capped (read-capped.ts).
 */
import { createSha256 } from "../crypto/sha256.js";
import { readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { isRuntimeError, RuntimeError } from "../errors.js";
import { displayPath } from "../workspace.js";
import {
  formatBytes,
  PACKAGE_FILE_LIMITS,
  PACKAGE_MAX_BYTES,
  PACKAGE_MAX_FILE_COUNT,
  readFileCappedSync,
} from "./read-capped.js";

const DOMAIN = Buffer.from("runx.skill-package.v1\0", "utf8");
const EXCLUDED: ReadonlySet<string> = new Set([".runx", ".git", "node_modules"]);

interface PackageFile {
  relative: string;
  absolute: string;
}

function u64(n: number): Buffer {
  // Two 32-bit halves: lengths are safe integers, and BigInt's first use costs a command more.
  const out = Buffer.alloc(8);
  out.writeUInt32BE(Math.floor(n / 0x1_0000_0000), 0);
  out.writeUInt32BE(n >>> 0, 4);
  return out;
}

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative === "" || (!relative.startsWith("..") && !path.isAbsolute(relative));
}

function collect(root: string, dir: string, prefix: string, out: PackageFile[]): void {
  const entries = readdirSync(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (EXCLUDED.has(entry.name)) continue;
    const absolute = path.join(dir, entry.name);
    const relative = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.isDirectory()) {
      collect(root, absolute, relative, out);
    } else if (entry.isFile()) {
      out.push({ relative, absolute });
    } else if (entry.isSymbolicLink()) {
      let target: string | undefined;
      try {
        target = realpathSync(absolute);
      } catch {
        target = undefined;
      }
      if (target === undefined) {
        throw new RuntimeError("PACKAGE_INVALID", "package contains a dangling symlink", {
          file: relative,
        });
      }
      if (!isInside(root, target)) {
        throw new RuntimeError(
          "PACKAGE_INVALID",
          "package symlink points outside the package directory",
          { file: relative },
        );
      }
      const info = statSync(target);
      if (info.isDirectory()) {
        throw new RuntimeError(
          "PACKAGE_INVALID",
          "symlinked directories are not supported inside a package",
          { file: relative },
        );
      }
      if (info.isFile()) out.push({ relative, absolute: target });
    }
  }
}

/** The cap of one package file: the package's own documents have theirs (read-capped.ts). */
function fileCap(relative: string): { what: string; maxBytes: number } | undefined {
  if (relative === "SKILL.md") return { what: "SKILL.md", maxBytes: PACKAGE_FILE_LIMITS.skillMd };
  if (relative === "X.yaml") return { what: "X.yaml", maxBytes: PACKAGE_FILE_LIMITS.profile };
  return undefined;
}

/**
 * The digest over a file set (sorted by path bytes). The reads are synchronous on purpose, and
 * capped: the package's documents at their own limits, the whole package at PACKAGE_MAX_BYTES,
 * so nothing past a cap is read into memory.
 */
function digestFiles(
  files: PackageFile[],
  shown: (file: PackageFile) => string,
  single?: { what: string; maxBytes: number },
): string {
  if (files.length > PACKAGE_MAX_FILE_COUNT)
    throw new RuntimeError(
      "FILE_TOO_LARGE",
      `the package has more than ${PACKAGE_MAX_FILE_COUNT} files`,
      { limit: PACKAGE_MAX_FILE_COUNT, files: files.length },
    );
  let remaining = PACKAGE_MAX_BYTES;
  const read = (file: PackageFile): Uint8Array => {
    const own = single ?? fileCap(file.relative);
    const maxBytes = Math.min(own?.maxBytes ?? remaining, remaining);
    const what = own?.what ?? `package file ${file.relative}`;
    let bytes: Buffer;
    try {
      bytes = readFileCappedSync({ path: file.absolute, shown: shown(file), what, maxBytes });
    } catch (error) {
      if (isRuntimeError(error) && error.code === "FILE_TOO_LARGE" && maxBytes === remaining)
        throw new RuntimeError(
          "FILE_TOO_LARGE",
          `the package is larger than ${formatBytes(PACKAGE_MAX_BYTES)} in total`,
          { file: shown(file), limit: PACKAGE_MAX_BYTES },
        );
      throw error;
    }
    remaining -= bytes.length;
    return bytes;
  };
  return digestEntries(files.map((file) => ({ path: file.relative, read: () => read(file) })));
}

function digestEntries(entries: Array<{ path: string; read: () => Uint8Array }>): string {
  const keyed = entries.map((entry) => ({ ...entry, key: Buffer.from(entry.path, "utf8") }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
  const hash = createSha256();
  hash.update(DOMAIN);
  for (const entry of keyed) {
    const content = entry.read();
    hash.update(u64(entry.key.length));
    hash.update(entry.key);
    hash.update(u64(content.length));
    hash.update(content);
  }
  return `sha256:${hash.digestHex()}`;
}

/**
 * The package digest of an in-memory file set (`/`-separated relative paths), equal to
 * {@link computePackageDigest} of a directory holding exactly these files. Registry packages
 * are checked with it before anything is written.
 */
export function digestPackageEntries(
  entries: ReadonlyArray<{ path: string; content: Uint8Array }>,
): string {
  return digestEntries(entries.map((entry) => ({ path: entry.path, read: () => entry.content })));
}

/**
 * Computes `sha256:<hex>` for the package directory. Synchronous: a package is a handful of
 * small files, and a thread-pool round trip per call cost more than the reads.
 */
export function computePackageDigest(packageDir: string, workspaceRoot?: string): string {
  const root = realpathSync(packageDir);
  const files: PackageFile[] = [];
  collect(root, root, "", files);
  return digestFiles(files, (file) =>
    workspaceRoot === undefined
      ? file.relative
      : displayPath(workspaceRoot, path.join(packageDir, file.relative)),
  );
}

/**
 * The digest of what a resolved reference executes: the package directory (for an owned
 * execution profile, its owning package's, as upstream digests the owning root), or for a
 * standalone graph document the document alone (one file, under its base name), so files
 * beside the document do not bind into it. Errors name files relative to `workspaceRoot`.
 */
export function computeSourceDigest(resolved: {
  packageDir: string;
  graphDocumentPath?: string;
  workspaceRoot?: string;
  /** An owned execution profile's owning package (locate.ts): its digest binds the manual too. */
  ownerDir?: string;
}): string {
  const { graphDocumentPath, workspaceRoot } = resolved;
  if (graphDocumentPath === undefined)
    return computePackageDigest(resolved.ownerDir ?? resolved.packageDir, workspaceRoot);
  const absolute = realpathSync(graphDocumentPath);
  const relative = path.basename(graphDocumentPath);
  const shown =
    workspaceRoot === undefined ? relative : displayPath(workspaceRoot, graphDocumentPath);
  return digestFiles([{ relative, absolute }], () => shown, {
    what: "the graph document",
    maxBytes: PACKAGE_FILE_LIMITS.graphDocument,
  });
}
