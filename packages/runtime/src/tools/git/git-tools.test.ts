import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsGitBranchOutput } from "../../generated/validate-tools-git-branch.output.js";
import { validateToolsGitDiffOutput } from "../../generated/validate-tools-git-diff.output.js";
import { validateToolsGitStatusOutput } from "../../generated/validate-tools-git-status.output.js";
import { createTaintSet } from "../../redaction.js";
import {
  failureCode,
  makeLayoutContext,
  successData,
  successOutput,
} from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";
import type { ToolContext } from "../types.js";
import {
  gitBlobDigestTool,
  gitCurrentBranchTool,
  gitDiffNameOnlyTool,
  gitStatusTool,
} from "./git-tools.js";

let layout: TestWorkspace;
let ctx: ToolContext;
let repo: string;

/** Runs git for test set-up (the tools under test run their own). */
function git(...args: string[]): string {
  return execFileSync(
    "git",
    [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.test",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ],
    { cwd: repo, encoding: "utf8" },
  ).trim();
}

beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext({ scopes: ["git.read"] }));
  repo = join(layout.workspace, "repo");
  mkdirSync(repo);
  git("init", "-q");
  writeFileSync(join(repo, "a.txt"), "one\n");
  git("add", "a.txt");
  git("commit", "-qm", "first");
});
afterEach(() => layout.cleanup());

describe("git.current_branch", () => {
  it("reads the branch, then the short commit of a detached HEAD", async () => {
    const data = successData(await gitCurrentBranchTool.execute({ repo_root: "repo" }, ctx));
    expect(validateToolsGitBranchOutput(data)).toBe(true);
    expect(data).toEqual({ repo_root: "repo", branch: "main", detached: false });
    git("checkout", "-q", "--detach");
    const detached = successData(await gitCurrentBranchTool.execute({ repo_root: "repo" }, ctx));
    expect(detached).toEqual({
      repo_root: "repo",
      branch: git("rev-parse", "--short", "HEAD"),
      detached: true,
    });
  });

  it("refuses a directory that is not a repository, and a root outside the workspace", async () => {
    mkdirSync(join(layout.workspace, "plain"));
    // The temp workspace is not inside any repository, so git finds none above plain/.
    const plain = await gitCurrentBranchTool.execute({ repo_root: "plain" }, ctx);
    expect(failureCode(plain)).toBe("INPUT_INVALID");
    expect(failureCode(await gitCurrentBranchTool.execute({ repo_root: "../outside" }, ctx))).toBe(
      "PATH_ESCAPE",
    );
  });
});

describe("git.status", () => {
  it("reports a clean tree with its branch header", async () => {
    const data = successData(await gitStatusTool.execute({ repo_root: "repo" }, ctx));
    expect(validateToolsGitStatusOutput(data)).toBe(true);
    expect(data).toEqual({ repo_root: "repo", clean: true, entries: [], branch: "main" });
  });

  it("lists modified and untracked paths as short-status entries", async () => {
    writeFileSync(join(repo, "a.txt"), "two\n");
    writeFileSync(join(repo, "new.txt"), "n\n");
    const data = successData(await gitStatusTool.execute({ repo_root: "repo" }, ctx));
    expect(data).toEqual({
      repo_root: "repo",
      clean: false,
      entries: [" M a.txt", "?? new.txt"],
      branch: "main",
    });
  });

  it("redacts a delivered secret that appears in a path", async () => {
    writeFileSync(join(repo, "tok-s3cr3t-value.txt"), "x");
    const taint = createTaintSet();
    taint.add("s3cr3t-value");
    const output = successOutput(
      await gitStatusTool.execute({ repo_root: "repo" }, { ...ctx, taint }),
    );
    expect(JSON.stringify(output)).not.toContain("s3cr3t-value");
  });

  it("declares the git.read scope and no mutation", () => {
    expect(gitStatusTool.scopes).toEqual(["git.read"]);
    expect(gitStatusTool.mutating).toBe(false);
  });
});

describe("git.diff_name_only", () => {
  it("lists paths changed against HEAD by default and against an older commit", async () => {
    writeFileSync(join(repo, "b.txt"), "b\n");
    git("add", "b.txt");
    git("commit", "-qm", "second");
    writeFileSync(join(repo, "a.txt"), "changed\n");
    const head = successData(await gitDiffNameOnlyTool.execute({ repo_root: "repo" }, ctx));
    expect(validateToolsGitDiffOutput(head)).toBe(true);
    expect(head).toEqual({ repo_root: "repo", base: "HEAD", files: ["a.txt"] });
    const older = successData(
      await gitDiffNameOnlyTool.execute({ repo_root: "repo", base: "HEAD~1" }, ctx),
    );
    expect(older).toEqual({ repo_root: "repo", base: "HEAD~1", files: ["a.txt", "b.txt"] });
  });

  it("refuses option-like, blank or unresolvable bases with INPUT_INVALID", async () => {
    for (const base of ["--output=/tmp/x", "", "a b", "no-such-ref"]) {
      const result = await gitDiffNameOnlyTool.execute({ repo_root: "repo", base }, ctx);
      expect(failureCode(result)).toBe("INPUT_INVALID");
    }
  });
});

describe("git.blob_digest", () => {
  it("computes the blob id git hash-object gives the same bytes", async () => {
    const contents = "héllo\nwörld\n";
    writeFileSync(join(repo, "blob.txt"), contents);
    const data = successData(await gitBlobDigestTool.execute({ contents }, ctx));
    expect(data).toEqual({
      algorithm: "sha1",
      digest: git("hash-object", "blob.txt"),
      bytes: Buffer.byteLength(contents),
    });
    expect(gitBlobDigestTool.scopes).toEqual([]);
    expect(failureCode(await gitBlobDigestTool.execute({}, ctx))).toBe("INPUT_INVALID");
  });
});
