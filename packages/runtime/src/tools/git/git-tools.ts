/**
 * The Git observation tools (`git.current_branch`, `git.status`, `git.diff_name_only`, scope
 * `git.read`) and `git.blob_digest` (no scope, no process). Each observes a working tree inside
 * the workspace through run-git.ts and returns its packet wrapped as upstream names it
 * (`git_branch`, `git_status`, `git_diff`, `git_blob_digest`). `repo_root` in a packet is the
 * caller's relative root, never a host path.
 */
import { createHash } from "node:crypto";
import blobInputSchema from "../../../schemas/tools/git/blob-digest.input.schema.json" with { type: "json" };
import blobOutputSchema from "../../../schemas/tools/git/blob-digest.output.schema.json" with { type: "json" };
import branchOutputSchema from "../../../schemas/tools/git/branch.output.schema.json" with { type: "json" };
import diffInputSchema from "../../../schemas/tools/git/diff-name-only.input.schema.json" with { type: "json" };
import diffOutputSchema from "../../../schemas/tools/git/diff.output.schema.json" with { type: "json" };
import rootInputSchema from "../../../schemas/tools/git/repo-root.input.schema.json" with { type: "json" };
import statusOutputSchema from "../../../schemas/tools/git/status.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsGitBlobDigestInput } from "../../generated/validate-tools-git-blob-digest.input.js";
import { validateToolsGitDiffNameOnlyInput } from "../../generated/validate-tools-git-diff-name-only.input.js";
import { validateToolsGitRepoRootInput } from "../../generated/validate-tools-git-repo-root.input.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { resolveRoot } from "../paths.js";
import type { JsonRecord, NativeTool, ToolContext } from "../types.js";
import { runGit } from "./run-git.js";

const GIT_READ = ["git.read"] as const;

interface RootInput {
  repo_root?: string;
}
interface DiffInput extends RootInput {
  base?: string;
}

/** The contained directory of `repo_root` and the label the packet repeats. */
async function repoRoot(
  ctx: ToolContext,
  input: RootInput,
): Promise<{ dir: string; label: string }> {
  const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
  return { dir: root.dir, label: root.label };
}

function invalid(tool: string, message: string, path?: string): RuntimeError {
  return new RuntimeError(
    "INPUT_INVALID",
    `${tool}: ${message}`,
    path === undefined ? {} : { path },
  );
}

/** `git.current_branch`: the branch, or the short commit of a detached HEAD. */
export const gitCurrentBranchTool: NativeTool = withNamedOutput(
  defineTool<RootInput, JsonRecord>({
    name: "git.current_branch",
    description: "Read the current branch or detached HEAD through native process supervision.",
    mutating: false,
    scopes: GIT_READ,
    inputSchema: rootInputSchema,
    outputSchema: branchOutputSchema,
    validate: validateToolsGitRepoRootInput,
    async run(input, ctx) {
      const tool = "git.current_branch";
      const root = await repoRoot(ctx, input);
      const symbolic = await runGit(ctx, {
        tool,
        cwd: root.dir,
        args: ["symbolic-ref", "--short", "HEAD"],
      });
      let branch = symbolic.stdout;
      let detached = false;
      if (!symbolic.ok) {
        const head = await runGit(ctx, {
          tool,
          cwd: root.dir,
          args: ["rev-parse", "--short", "HEAD"],
        });
        if (!head.ok)
          throw invalid(
            tool,
            "repo_root must be a Git repository with a readable HEAD",
            "repo_root",
          );
        branch = head.stdout;
        detached = true;
      }
      if (branch === "") throw invalid(tool, "Git returned an empty HEAD reference");
      return {
        output: { repo_root: root.label, branch, detached },
        summary: detached ? `detached at ${branch}` : `on ${branch}`,
      };
    },
  }),
  { name: "git_branch", packet: "runx.git.branch.v1" },
);

/** `git.status`: porcelain short status with the branch header split off. */
export const gitStatusTool: NativeTool = withNamedOutput(
  defineTool<RootInput, JsonRecord>({
    name: "git.status",
    description: "Read bounded porcelain working-tree status without hooks, pagers, or locks.",
    mutating: false,
    scopes: GIT_READ,
    inputSchema: rootInputSchema,
    outputSchema: statusOutputSchema,
    validate: validateToolsGitRepoRootInput,
    async run(input, ctx) {
      const tool = "git.status";
      const root = await repoRoot(ctx, input);
      const result = await runGit(ctx, {
        tool,
        cwd: root.dir,
        args: ["status", "--short", "--branch"],
      });
      if (!result.ok)
        throw invalid(tool, "repo_root must be a readable Git working tree", "repo_root");
      const lines = result.stdout === "" ? [] : result.stdout.split("\n");
      const first = lines[0];
      const hasHeader = first?.startsWith("## ") === true;
      const entries = hasHeader ? lines.slice(1) : lines;
      const output: JsonRecord = { repo_root: root.label, clean: entries.length === 0, entries };
      if (hasHeader) output.branch = first.slice(3);
      return { output, summary: entries.length === 0 ? "clean" : `${entries.length} change(s)` };
    },
  }),
  { name: "git_status", packet: "runx.git.status.v1" },
);

/** A base Git can only read as a revision (never as an option). */
function checkBase(base: string): void {
  const bad =
    base === "" || base.startsWith("-") || Buffer.byteLength(base) > 1024 || /[\s\0]/u.test(base);
  if (bad)
    throw invalid("git.diff_name_only", "base must be a bounded Git ref or commit id", "base");
}

/** `git.diff_name_only`: paths changed against one verified commit, relative to repo_root. */
export const gitDiffNameOnlyTool: NativeTool = withNamedOutput(
  defineTool<DiffInput, JsonRecord>({
    name: "git.diff_name_only",
    description: "List changed paths against one verified Git commit without external drivers.",
    mutating: false,
    scopes: GIT_READ,
    inputSchema: diffInputSchema,
    outputSchema: diffOutputSchema,
    validate: validateToolsGitDiffNameOnlyInput,
    async run(input, ctx) {
      const tool = "git.diff_name_only";
      const base = input.base ?? "HEAD";
      checkBase(base);
      const root = await repoRoot(ctx, input);
      const resolved = await runGit(ctx, {
        tool,
        cwd: root.dir,
        args: ["rev-parse", "--verify", `${base}^{commit}`],
      });
      if (!resolved.ok) throw invalid(tool, "base must resolve to a readable Git commit", "base");
      const diff = await runGit(ctx, {
        tool,
        cwd: root.dir,
        args: [
          "diff",
          "--no-ext-diff",
          "--no-textconv",
          "--name-only",
          "--relative",
          resolved.stdout,
          "--",
        ],
      });
      if (!diff.ok) throw invalid(tool, "Git diff failed");
      const files = diff.stdout
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line !== "");
      return {
        output: { repo_root: root.label, base, files },
        summary: `${files.length} changed path(s)`,
      };
    },
  }),
  { name: "git_diff", packet: "runx.git.diff.v1" },
);

/** Git's blob id of exact contents: sha1 of `blob <bytes>\0<contents>`. */
export function gitBlobSha1(contents: string): { digest: string; bytes: number } {
  const body = Buffer.from(contents, "utf8");
  const hash = createHash("sha1").update(`blob ${body.length}\0`).update(body).digest("hex");
  return { digest: hash, bytes: body.length };
}

/** `git.blob_digest`: the blob id Git would give the contents (no repository needed). */
export const gitBlobDigestTool: NativeTool = withNamedOutput(
  defineTool<{ contents: string }, JsonRecord>({
    name: "git.blob_digest",
    description: "Compute the canonical Git blob SHA-1 for exact UTF-8 contents.",
    mutating: false,
    scopes: [],
    inputSchema: blobInputSchema,
    outputSchema: blobOutputSchema,
    validate: validateToolsGitBlobDigestInput,
    run(input) {
      const { digest, bytes } = gitBlobSha1(input.contents);
      return Promise.resolve({ output: { algorithm: "sha1", digest, bytes }, summary: digest });
    },
  }),
  { name: "git_blob_digest", packet: "runx.git.blob_digest.v1" },
);

/** The Git tool family. */
export function gitTools(): NativeTool[] {
  return [gitCurrentBranchTool, gitStatusTool, gitDiffNameOnlyTool, gitBlobDigestTool];
}
