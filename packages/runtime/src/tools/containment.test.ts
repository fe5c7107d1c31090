import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { builtinTools } from "./catalog.js";
import {
  failureCode,
  makeTempWorkspace,
  makeToolContext,
  snapshotTree,
  type TestWorkspace,
} from "../testing/tool-context.js";
import type { JsonRecord, NativeTool, ToolContext } from "./types.js";

let layout: TestWorkspace;
let ctx: ToolContext;

function tool(name: string): NativeTool {
  const found = builtinTools().find((t) => t.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

beforeEach(() => {
  layout = makeTempWorkspace();
  const { workspace, outside } = layout;
  writeFileSync(join(outside, "secret.txt"), "outside secret\n");
  mkdirSync(join(outside, "dir"));
  writeFileSync(join(workspace, "inside.txt"), "inside\n");
  writeFileSync(join(layout.packageDir, "SKILL.md"), "# demo\n");
  symlinkSync(join(outside, "secret.txt"), join(workspace, "link-out"));
  symlinkSync(outside, join(workspace, "dir-out"));
  symlinkSync(join(workspace, "inside.txt"), join(workspace, "link-in"));
  symlinkSync(join(outside, "missing.txt"), join(workspace, "dangling"));
  ctx = makeToolContext({
    workspaceRoot: workspace,
    packageDir: layout.packageDir,
    runDir: layout.runDir,
  });
});

afterEach(() => layout.cleanup());

/** Writes a file outside the workspace when run from an escaped cwd. */
const PWN = { command: "/bin/sh", args: ["-c", "echo pwned > escaped.txt"] };

const cases: Array<{ name: string; tool: string; input: () => JsonRecord }> = [
  { name: "fs.read of ../", tool: "fs.read", input: () => ({ path: "../outside/secret.txt" }) },
  { name: "fs.read of /etc/passwd", tool: "fs.read", input: () => ({ path: "/etc/passwd" }) },
  { name: "fs.read of a/../../x", tool: "fs.read", input: () => ({ path: "a/../../x" }) },
  {
    name: "fs.read of a symlink to an outside file",
    tool: "fs.read",
    input: () => ({ path: "link-out" }),
  },
  {
    name: "fs.read through a symlinked directory",
    tool: "fs.read",
    input: () => ({ path: "dir-out/secret.txt" }),
  },
  {
    name: "fs.read of a NUL byte path",
    tool: "fs.read",
    input: () => ({ path: "inside.txt\0.md" }),
  },
  {
    name: "fs.read of a dangling outside symlink",
    tool: "fs.read",
    input: () => ({ path: "dangling" }),
  },
  {
    name: "fs.read with an escaping repo_root",
    tool: "fs.read",
    input: () => ({ repo_root: "../outside", path: "secret.txt" }),
  },
  {
    name: "fs.read in the skill scope climbing out of the package",
    tool: "fs.read",
    input: () => ({ path_scope: "skill", path: "../../inside.txt" }),
  },
  {
    name: "fs.read_bundle with one escaping path even under on_missing report",
    tool: "fs.read_bundle",
    input: () => ({ paths: ["inside.txt", "dir-out/secret.txt"], on_missing: "report" }),
  },
  {
    name: "fs.read_bundle of a backslash path",
    tool: "fs.read_bundle",
    input: () => ({ paths: ["..\\outside\\secret.txt"] }),
  },
  {
    name: "fs.write to ../",
    tool: "fs.write",
    input: () => ({ path: "../outside/new.txt", contents: "x" }),
  },
  {
    name: "fs.write to an absolute path",
    tool: "fs.write",
    input: () => ({ path: join(layout.outside, "abs.txt"), contents: "x" }),
  },
  {
    name: "fs.write through a symlinked directory",
    tool: "fs.write",
    input: () => ({ path: "dir-out/new.txt", contents: "x" }),
  },
  {
    name: "fs.write creating directories under a symlinked directory",
    tool: "fs.write",
    input: () => ({ path: "dir-out/deep/er/new.txt", contents: "x" }),
  },
  {
    name: "fs.write through a symlink to an inside file",
    tool: "fs.write",
    input: () => ({ path: "link-in", contents: "x" }),
  },
  {
    name: "fs.write through a symlink to an outside file",
    tool: "fs.write",
    input: () => ({ path: "link-out", contents: "x" }),
  },
  {
    name: "fs.write through a dangling symlink",
    tool: "fs.write",
    input: () => ({ path: "dangling", contents: "x" }),
  },
  {
    name: "fs.write with a symlinked repo_root",
    tool: "fs.write",
    input: () => ({ repo_root: "dir-out", path: "x.txt", contents: "x" }),
  },
  {
    name: "fs.write of a NUL byte path",
    tool: "fs.write",
    input: () => ({ path: "a\0b", contents: "x" }),
  },
  {
    name: "fs.apply_bundle with one escaping write among good ones",
    tool: "fs.apply_bundle",
    input: () => ({
      writes: [
        { path: "ok.txt", contents: "ok" },
        { path: "dir-out/dir/x.txt", contents: "x" },
      ],
    }),
  },
  {
    name: "fs.apply_bundle deleting through a symlinked directory",
    tool: "fs.apply_bundle",
    input: () => ({ deletes: ["dir-out/secret.txt"] }),
  },
  {
    name: "fs.apply_bundle deleting a symlink",
    tool: "fs.apply_bundle",
    input: () => ({ writes: [{ path: "ok.txt", contents: "ok" }], deletes: ["link-out"] }),
  },
  {
    name: "artifact.admit of a symlink to outside",
    tool: "artifact.admit",
    input: () => ({ path: "link-out" }),
  },
  {
    name: "artifact.admit of ../",
    tool: "artifact.admit",
    input: () => ({ path: "../outside/secret.txt" }),
  },
  {
    name: "artifact.admit through a symlinked directory",
    tool: "artifact.admit",
    input: () => ({ path: "dir-out/secret.txt" }),
  },
  {
    name: "command.execute with an absolute cwd",
    tool: "command.execute",
    input: () => ({ ...PWN, cwd: layout.outside }),
  },
  {
    name: "command.execute with a ../ cwd",
    tool: "command.execute",
    input: () => ({ ...PWN, cwd: "../outside" }),
  },
  {
    name: "command.execute with a symlinked cwd",
    tool: "command.execute",
    input: () => ({ ...PWN, cwd: "dir-out" }),
  },
  {
    name: "command.execute with an escaping repo_root",
    tool: "command.execute",
    input: () => ({ ...PWN, repo_root: "dir-out/dir" }),
  },
  {
    name: "command.plan with a symlinked cwd",
    tool: "command.plan",
    input: () => ({ ...PWN, cwd: "dir-out" }),
  },
  {
    name: "cli.capture_help with a symlinked cwd",
    tool: "cli.capture_help",
    input: () => ({ command: "/bin/sh", cwd: "dir-out" }),
  },
  {
    name: "cli.capture_help with an escaping repo_root",
    tool: "cli.capture_help",
    input: () => ({ command: "/bin/sh", repo_root: "../outside" }),
  },
  {
    name: "git.status of a symlinked repo_root",
    tool: "git.status",
    input: () => ({ repo_root: "dir-out" }),
  },
  {
    name: "git.diff_name_only of a ../ repo_root",
    tool: "git.diff_name_only",
    input: () => ({ repo_root: "../outside" }),
  },
  {
    name: "git.current_branch of an absolute repo_root",
    tool: "git.current_branch",
    input: () => ({ repo_root: layout.outside }),
  },
];

describe("path containment across the native tools", () => {
  it("covers at least fifteen escape attempts", () => {
    expect(cases.length).toBeGreaterThanOrEqual(15);
  });

  it.each(cases)("refuses $name with PATH_ESCAPE and changes nothing", async (c) => {
    const t = tool(c.tool);
    const outsideBefore = snapshotTree(layout.outside);
    const workspaceBefore = snapshotTree(layout.workspace);
    const result = await t.execute(c.input(), ctx);
    expect(failureCode(result)).toBe("PATH_ESCAPE");
    expect(result.status === "failure" && result.summary).not.toContain(layout.base);
    expect(snapshotTree(layout.outside)).toEqual(outsideBefore);
    expect(snapshotTree(layout.workspace)).toEqual(workspaceBefore);
  });
});
