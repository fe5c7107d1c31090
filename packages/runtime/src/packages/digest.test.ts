import { mkdtemp, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { computePackageDigest } from "./digest.js";

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), "runx-digest-"));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function writeFiles(
  root: string,
  files: ReadonlyArray<readonly [string, string]>,
): Promise<void> {
  for (const [relative, content] of files) {
    await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
    await writeFile(path.join(root, relative), content);
  }
}

const FILES = [
  ["a.txt", "a"],
  ["dir/b.txt", "bc"],
  ["B.md", ""],
] as const;

/** The error `fn` throws (fails the test when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("computePackageDigest", () => {
  it("matches a hand-computed vector", async () => {
    // sha256("runx.skill-package.v1\0" + for each path in byte order ["B.md", "a.txt", "dir/b.txt"]:
    //   u64be(len(path)) + path + u64be(len(content)) + content), computed independently in Python.
    const dir = await tempDir();
    await writeFiles(dir, FILES);
    expect(computePackageDigest(dir)).toBe(
      "sha256:69d37682b156074674bc0412c2a601c3d031f5c3f1d2bca199d64abe2ea9e4b8",
    );
  });

  it("hashes only the domain tag for an empty package", async () => {
    expect(computePackageDigest(await tempDir())).toBe(
      "sha256:2c2c17d5e2c04803514a4148f406dbb4f533607cd94c25b3ce3cd703b4e0f7f8",
    );
  });

  it("is stable across runs and independent of file creation order", async () => {
    const first = await tempDir();
    const second = await tempDir();
    await writeFiles(first, FILES);
    await writeFiles(second, [...FILES].reverse());
    const digest = computePackageDigest(first);
    expect(computePackageDigest(first)).toBe(digest);
    expect(computePackageDigest(second)).toBe(digest);
  });

  it("changes when one byte changes", async () => {
    const dir = await tempDir();
    await writeFiles(dir, FILES);
    const before = computePackageDigest(dir);
    await writeFile(path.join(dir, "dir/b.txt"), "bd");
    expect(computePackageDigest(dir)).not.toBe(before);
  });

  it("ignores .runx, .git and node_modules at any depth", async () => {
    const dir = await tempDir();
    await writeFiles(dir, FILES);
    const before = computePackageDigest(dir);
    await writeFiles(dir, [
      [".runx/state.json", "{}"],
      [".git/HEAD", "ref"],
      ["node_modules/x/index.js", ""],
      ["dir/node_modules/y.js", ""],
    ]);
    expect(computePackageDigest(dir)).toBe(before);
  });

  it("hashes an in-package file symlink under its own path with the target's bytes", async () => {
    const dir = await tempDir();
    await writeFiles(dir, [
      ["v1.mjs", "one"],
      ["v2.mjs", "two"],
    ]);
    await symlink("v1.mjs", path.join(dir, "run.mjs"));
    const first = computePackageDigest(dir);
    await rm(path.join(dir, "run.mjs"));
    await symlink("v2.mjs", path.join(dir, "run.mjs"));
    expect(computePackageDigest(dir)).not.toBe(first);
  });

  it("refuses a symlink that points outside the package", async () => {
    const outside = await tempDir();
    const dir = await tempDir();
    await writeFiles(outside, [["secret.txt", "s"]]);
    await symlink(path.join(outside, "secret.txt"), path.join(dir, "link.txt"));
    expect(thrown(() => computePackageDigest(dir))).toMatchObject({
      code: "PACKAGE_INVALID",
      details: { file: "link.txt" },
    });
  });

  it("refuses symlinked directories and dangling symlinks", async () => {
    const dir = await tempDir();
    await writeFiles(dir, [["lib/a.mjs", ""]]);
    await symlink("lib", path.join(dir, "alias"));
    expect(thrown(() => computePackageDigest(dir))).toMatchObject({ code: "PACKAGE_INVALID" });
    await rm(path.join(dir, "alias"));
    await symlink("missing.mjs", path.join(dir, "gone.mjs"));
    expect(thrown(() => computePackageDigest(dir))).toMatchObject({ code: "PACKAGE_INVALID" });
  });
});
