/**
 * Package digest (§5.4): sha256 over "runx.skill-package.v1\0" followed by, for every package
 * file in ascending byte order of its `/`-separated relative path, the u64 big-endian path
 * length, the path bytes, the u64 big-endian content length and the content.
 *
 * File set (our documented choice; upstream leaves it open): every regular file under the
 * package directory, at any depth, except entries named `.runx`, `.git` or `node_modules`.
 * Symlinks: a link whose target resolves outside the package is refused (PACKAGE_INVALID);
 * a link to a file inside the package is hashed under the link's own path with the target's
 * bytes (so retargeting a link changes the digest); links to directories and dangling links
 * are refused. FIFOs, sockets and devices are ignored.
 */
import { createSha256 } from "../crypto/sha256.js";
import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { RuntimeError } from "../errors.js";

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

/** The digest over a file set (sorted by path bytes). The reads are synchronous on purpose. */
function digestFiles(files: PackageFile[]): string {
  return digestEntries(
    files.map((file) => ({ path: file.relative, read: () => readFileSync(file.absolute) })),
  );
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
export function computePackageDigest(packageDir: string): string {
  const root = realpathSync(packageDir);
  const files: PackageFile[] = [];
  collect(root, root, "", files);
  return digestFiles(files);
}

/**
 * The digest of what a resolved reference executes: the package directory, or for a
 * standalone graph document the document alone (one file, under its base name), so files
 * beside the document do not bind into it.
 */
export function computeSourceDigest(resolved: {
  packageDir: string;
  graphDocumentPath?: string;
}): string {
  if (resolved.graphDocumentPath === undefined) return computePackageDigest(resolved.packageDir);
  const absolute = realpathSync(resolved.graphDocumentPath);
  return digestFiles([{ relative: path.basename(resolved.graphDocumentPath), absolute }]);
}
