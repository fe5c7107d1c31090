import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsFsApplyBundleOutput } from "../../generated/validate-tools-fs-apply-bundle.output.js";
import { validateToolsFsReadBundleOutput } from "../../generated/validate-tools-fs-read-bundle.output.js";
import { validateToolsFsReadOutput } from "../../generated/validate-tools-fs-read.output.js";
import { validateToolsFsWriteOutput } from "../../generated/validate-tools-fs-write.output.js";
import { fsApplyBundleTool } from "./apply-bundle.js";
import { fsReadBundleTool } from "./read-bundle.js";
import { fsReadTool } from "./read.js";
import { applyTransaction, planTransaction } from "./transaction.js";
import { fsWriteTool } from "./write.js";
import { resolveRoot } from "../paths.js";
import {
  failureCode,
  snapshotTree,
  successData,
  type TestWorkspace,
  makeLayoutContext,
} from "../../testing/tool-context.js";
import type { ToolContext } from "../types.js";

const MiB = 1024 * 1024;
let layout: TestWorkspace;
let ctx: ToolContext;

const sha = (data: string | Buffer): string =>
  `sha256:${createHash("sha256").update(data).digest("hex")}`;
const put = (rel: string, data: string | Buffer): void => {
  const file = join(layout.workspace, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, data);
};
const read = (rel: string): string => readFileSync(join(layout.workspace, rel), "utf8");

beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext());
});
afterEach(() => layout.cleanup());

describe("fs.read", () => {
  it("reads a contained text file with its relative path, size and digest", async () => {
    put("docs/a.md", "héllo\n");
    const out = successData(await fsReadTool.execute({ path: "./docs//a.md" }, ctx));
    expect(out).toEqual({
      path: "docs/a.md",
      repo_root: ".",
      contents: "héllo\n",
      bytes: 7,
      truncated: false,
      content_digest: sha("héllo\n"),
    });
    expect(validateToolsFsReadOutput(out)).toBe(true);
  });

  it("reads relative to repo_root and to the skill package under path_scope skill", async () => {
    put("sub/x.txt", "sub");
    writeFileSync(join(layout.packageDir, "SKILL.md"), "skill");
    const sub = successData(await fsReadTool.execute({ repo_root: "sub", path: "x.txt" }, ctx));
    expect(sub).toMatchObject({ path: "x.txt", repo_root: "sub", contents: "sub" });
    const skill = successData(
      await fsReadTool.execute({ path_scope: "skill", path: "SKILL.md" }, ctx),
    );
    expect(skill.contents).toBe("skill");
  });

  it("follows a symlink that stays inside the workspace", async () => {
    put("real.txt", "real");
    symlinkSync(join(layout.workspace, "real.txt"), join(layout.workspace, "alias.txt"));
    const out = successData(await fsReadTool.execute({ path: "alias.txt" }, ctx));
    expect(out.contents).toBe("real");
  });

  it("stops at 1 MiB by default and marks the read truncated", async () => {
    put("big.txt", "a".repeat(MiB + 10));
    const out = successData(await fsReadTool.execute({ path: "big.txt" }, ctx));
    expect(out).toMatchObject({ bytes: MiB, truncated: true });
  });

  it("does not mark a file of exactly max_bytes as truncated", async () => {
    put("exact.txt", "abcd");
    const out = successData(await fsReadTool.execute({ path: "exact.txt", max_bytes: 4 }, ctx));
    expect(out).toMatchObject({ contents: "abcd", truncated: false });
  });

  it("never cuts inside a multi-byte character when truncating", async () => {
    put("euro.txt", "€€€");
    const out = successData(await fsReadTool.execute({ path: "euro.txt", max_bytes: 5 }, ctx));
    expect(out).toMatchObject({
      contents: "€",
      bytes: 3,
      truncated: true,
      content_digest: sha("€"),
    });
  });

  it("refuses max_bytes above 8 MiB, unknown fields and a missing path as INPUT_INVALID", async () => {
    const tooBig = { path: "a", max_bytes: 8 * MiB + 1 };
    expect(fsReadTool.validateInput(tooBig)).toMatchObject({ ok: false, path: "max_bytes" });
    expect(failureCode(await fsReadTool.execute(tooBig, ctx))).toBe("INPUT_INVALID");
    expect(fsReadTool.validateInput({ path: "a", mode: "x" })).toMatchObject({
      ok: false,
      path: "mode",
    });
    expect(failureCode(await fsReadTool.execute({}, ctx))).toBe("INPUT_INVALID");
  });

  it("reports a missing file as FILE_NOT_FOUND and a directory or binary file as INPUT_INVALID", async () => {
    mkdirSync(join(layout.workspace, "dir"));
    put("bin.dat", Buffer.from([0xff, 0xfe, 0x00]));
    expect(failureCode(await fsReadTool.execute({ path: "nope.txt" }, ctx))).toBe("FILE_NOT_FOUND");
    expect(failureCode(await fsReadTool.execute({ path: "dir" }, ctx))).toBe("INPUT_INVALID");
    expect(failureCode(await fsReadTool.execute({ path: "bin.dat" }, ctx))).toBe("INPUT_INVALID");
  });
});

describe("fs.read_bundle", () => {
  it("reads several files and reports missing ones under on_missing report", async () => {
    put("a.txt", "A");
    put("b/c.txt", "C");
    const out = successData(
      await fsReadBundleTool.execute(
        { paths: ["a.txt", "gone.txt", "b/c.txt"], on_missing: "report" },
        ctx,
      ),
    );
    expect(out).toMatchObject({
      file_count: 2,
      total_bytes: 2,
      missing: [
        {
          path: "gone.txt",
          reason: "file was unavailable within the declared root and read limits",
        },
      ],
    });
    expect(validateToolsFsReadBundleOutput(out)).toBe(true);
  });

  it("fails on a missing file by default", async () => {
    put("a.txt", "A");
    const result = await fsReadBundleTool.execute({ paths: ["a.txt", "gone.txt"] }, ctx);
    expect(failureCode(result)).toBe("FILE_NOT_FOUND");
  });

  it("refuses two spellings of one file and more than sixteen paths", async () => {
    put("a.txt", "A");
    expect(failureCode(await fsReadBundleTool.execute({ paths: ["a.txt", "./a.txt"] }, ctx))).toBe(
      "INPUT_INVALID",
    );
    const seventeen = Array.from({ length: 17 }, (_, i) => `f${i}.txt`);
    expect(failureCode(await fsReadBundleTool.execute({ paths: seventeen }, ctx))).toBe(
      "INPUT_INVALID",
    );
  });

  it("fails with LIMIT_EXCEEDED when the files add up to more than 32 MiB", async () => {
    const chunk = "x".repeat(7 * MiB);
    const paths = ["1", "2", "3", "4", "5"].map((n) => `big-${n}.txt`);
    for (const p of paths) put(p, chunk);
    expect(failureCode(await fsReadBundleTool.execute({ paths }, ctx))).toBe("LIMIT_EXCEEDED");
  });
});

describe("fs.write", () => {
  it("writes atomically, creating parent directories, and leaves no temp files", async () => {
    const out = successData(
      await fsWriteTool.execute({ path: "new/deep/file.txt", contents: "héllo" }, ctx),
    );
    expect(out).toEqual({
      path: "new/deep/file.txt",
      repo_root: ".",
      bytes_written: 6,
      sha256: sha("héllo").slice("sha256:".length),
    });
    expect(validateToolsFsWriteOutput(out)).toBe(true);
    expect(read("new/deep/file.txt")).toBe("héllo");
    expect(readdirSync(join(layout.workspace, "new/deep"))).toEqual(["file.txt"]);
  });

  it("replaces an existing file and keeps its permission bits", async () => {
    put("script.sh", "old");
    chmodSync(join(layout.workspace, "script.sh"), 0o751);
    successData(await fsWriteTool.execute({ path: "script.sh", contents: "new" }, ctx));
    expect(read("script.sh")).toBe("new");
    expect(statSync(join(layout.workspace, "script.sh")).mode & 0o777).toBe(0o751);
    expect(readdirSync(layout.workspace).filter((n) => n.includes("runx-"))).toEqual([]);
  });

  it("refuses to replace a directory", async () => {
    mkdirSync(join(layout.workspace, "dir"));
    expect(failureCode(await fsWriteTool.execute({ path: "dir", contents: "x" }, ctx))).toBe(
      "INPUT_INVALID",
    );
  });

  it("refuses to write into runx's own state directory", async () => {
    const result = await fsWriteTool.execute(
      { path: ".runx/runs/test-run/artifacts/refs/forged.json", contents: "{}" },
      ctx,
    );
    expect(failureCode(result)).toBe("POLICY_DENIED");
    expect(existsSync(join(layout.runDir, "artifacts"))).toBe(false);
  });
});

describe("fs.apply_bundle", () => {
  it("applies writes and deletes and reports a missing delete", async () => {
    put("old.txt", "old");
    put("keep.txt", "keep");
    const out = successData(
      await fsApplyBundleTool.execute(
        {
          writes: [
            { path: "keep.txt", contents: "kept" },
            { path: "n/new.txt", contents: "new" },
          ],
          deletes: ["old.txt", "never.txt"],
        },
        ctx,
      ),
    );
    expect(out).toMatchObject({
      write_count: 2,
      delete_count: 2,
      deletes: [
        { path: "old.txt", status: "deleted" },
        { path: "never.txt", status: "missing" },
      ],
    });
    expect(validateToolsFsApplyBundleOutput(out)).toBe(true);
    expect(read("keep.txt")).toBe("kept");
    expect(read("n/new.txt")).toBe("new");
    expect(existsSync(join(layout.workspace, "old.txt"))).toBe(false);
    expect(readdirSync(layout.workspace).sort()).toEqual([".runx", "keep.txt", "n", "skills"]);
  });

  it("writes nothing when one path is bad", async () => {
    put("file", "a file, not a directory");
    const before = snapshotTree(layout.workspace);
    const result = await fsApplyBundleTool.execute(
      {
        writes: [
          { path: "a.txt", contents: "a" },
          { path: "fresh/b.txt", contents: "b" },
          { path: "file/c.txt", contents: "c" },
        ],
      },
      ctx,
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  it("refuses the same file twice, a file that another entry needs as a directory, and an empty bundle", async () => {
    const twice = { writes: [{ path: "a", contents: "1" }], deletes: ["./a"] };
    expect(failureCode(await fsApplyBundleTool.execute(twice, ctx))).toBe("INPUT_INVALID");
    const nested = {
      writes: [
        { path: "x", contents: "1" },
        { path: "x/y", contents: "2" },
      ],
    };
    expect(failureCode(await fsApplyBundleTool.execute(nested, ctx))).toBe("INPUT_INVALID");
    expect(failureCode(await fsApplyBundleTool.execute({}, ctx))).toBe("INPUT_INVALID");
    expect(existsSync(join(layout.workspace, "x"))).toBe(false);
  });

  it("rolls back committed changes when a later step fails", async () => {
    put("a.txt", "old a");
    put("c.txt", "c");
    const root = await resolveRoot(ctx, {});
    const plan = await planTransaction(root, {
      writes: [
        { path: "a.txt", contents: "new a" },
        { path: "made/b.txt", contents: "b" },
      ],
      deletes: ["c.txt"],
      writeField: (i) => `writes.${i}.path`,
    });
    // The delete target vanishes between planning and applying, so its commit fails.
    unlinkSync(join(layout.workspace, "c.txt"));
    const before = snapshotTree(layout.workspace);
    await expect(applyTransaction(plan)).rejects.toMatchObject({ code: "ENOENT" });
    expect(snapshotTree(layout.workspace)).toEqual(before);
    expect(read("a.txt")).toBe("old a");
  });
});
