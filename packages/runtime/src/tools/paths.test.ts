import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import {
  resolveDirectory,
  resolveReadable,
  resolveRoot,
  resolveWritable,
  splitRelative,
} from "./paths.js";
import { makeTempWorkspace, makeToolContext, type TestWorkspace } from "../testing/tool-context.js";
import type { ToolContext } from "./types.js";

let layout: TestWorkspace;
let ctx: ToolContext;

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (isRuntimeError(error) ? error.code : String(error)),
  );
}

beforeEach(() => {
  layout = makeTempWorkspace();
  ctx = makeToolContext({
    workspaceRoot: layout.workspace,
    packageDir: layout.packageDir,
    runDir: layout.runDir,
  });
});
afterEach(() => layout.cleanup());

describe("tool path containment", () => {
  it("normalizes `.` and empty segments and refuses `..`, absolute, backslash and NUL", () => {
    expect(splitRelative("./a//b/.", "path")).toEqual(["a", "b"]);
    expect(splitRelative(".", "path")).toEqual([]);
    for (const bad of ["..", "a/../b", "/etc", "C:/x", "a\\b", "a\0"]) {
      expect(() => splitRelative(bad, "path")).toThrow(
        expect.objectContaining({ code: "PATH_ESCAPE" }) as Error,
      );
    }
  });

  it("names the field and the relative path in the message, never the host path", async () => {
    symlinkSync(layout.outside, join(layout.workspace, "out"));
    const root = await resolveRoot(ctx, {});
    const error = await resolveReadable(root, "out/x", "paths.2").catch((e: unknown) => e);
    expect(isRuntimeError(error) && error.message).toBe(
      'paths.2 "out/x" resolves outside its root',
    );
    expect(isRuntimeError(error) && error.details).toEqual({ path: "paths.2", target: "out/x" });
  });

  it("lists the directories a write must create, outermost first", async () => {
    mkdirSync(join(layout.workspace, "a"));
    const root = await resolveRoot(ctx, {});
    const target = await resolveWritable(root, "a/b/c/file.txt", "path");
    expect(target).toMatchObject({
      relative: "a/b/c/file.txt",
      absolute: join(layout.workspace, "a/b/c/file.txt"),
      missingDirs: [join(layout.workspace, "a/b"), join(layout.workspace, "a/b/c")],
      exists: false,
    });
  });

  it("refuses writes that reach runx state through an inside symlink", async () => {
    symlinkSync(join(layout.workspace, ".runx"), join(layout.workspace, "state"));
    const root = await resolveRoot(ctx, {});
    expect(await codeOf(resolveWritable(root, "state/config.json", "path"))).toBe("POLICY_DENIED");
  });

  it("resolves repo_root inside the skill package for path_scope skill", async () => {
    mkdirSync(join(layout.packageDir, "fixtures"));
    writeFileSync(join(layout.packageDir, "fixtures", "f.txt"), "f");
    const root = await resolveRoot(ctx, { repoRoot: "fixtures", pathScope: "skill" });
    expect(root.label).toBe("fixtures");
    expect((await resolveReadable(root, "f.txt", "path")).absolute).toBe(
      join(layout.packageDir, "fixtures", "f.txt"),
    );
    expect(await codeOf(resolveDirectory(root, "missing", "cwd"))).toBe("FILE_NOT_FOUND");
  });
});

describe("runx's own state", () => {
  it("refuses reads, writes and directories in .runx/ before saying whether they exist", async () => {
    mkdirSync(join(layout.workspace, ".runx", "keys"), { recursive: true });
    writeFileSync(join(layout.workspace, ".runx", "state.sqlite"), "db");
    const root = await resolveRoot(ctx, {});
    expect(await codeOf(resolveReadable(root, ".runx/state.sqlite", "path"))).toBe("POLICY_DENIED");
    expect(await codeOf(resolveReadable(root, ".runx/missing", "path"))).toBe("POLICY_DENIED");
    expect(await codeOf(resolveDirectory(root, ".runx/keys", "cwd"))).toBe("POLICY_DENIED");
    expect(await codeOf(resolveWritable(root, ".runx/new/file", "path"))).toBe("POLICY_DENIED");
    expect(await codeOf(resolveRoot(ctx, { repoRoot: ".runx" }))).toBe("POLICY_DENIED");
  });

  it("refuses the configured state roots inside the workspace, and a hard link to their files", async () => {
    const home = join(layout.workspace, "home-runx");
    mkdirSync(join(home, "keys"), { recursive: true });
    writeFileSync(join(home, "keys", "k.json"), "secret");
    linkSync(join(home, "keys", "k.json"), join(layout.workspace, "k-copy"));
    writeFileSync(join(layout.workspace, "plain.txt"), "plain");
    linkSync(join(layout.workspace, "plain.txt"), join(layout.workspace, "plain-link"));
    const guarded = { ...ctx, stateRoots: [home] };
    const root = await resolveRoot(guarded, {});
    expect(await codeOf(resolveReadable(root, "home-runx/keys/k.json", "path"))).toBe(
      "POLICY_DENIED",
    );
    expect(await codeOf(resolveReadable(root, "k-copy", "path"))).toBe("POLICY_DENIED");
    // A hard link between two ordinary workspace files is not state.
    expect((await resolveReadable(root, "plain-link", "path")).relative).toBe("plain-link");
  });

  it("ignores a state root that holds the whole workspace (a receipt dir set to '.')", async () => {
    writeFileSync(join(layout.workspace, "f.txt"), "f");
    const root = await resolveRoot({ ...ctx, stateRoots: [layout.workspace] }, {});
    expect((await resolveReadable(root, "f.txt", "path")).relative).toBe("f.txt");
  });

  it("lets a registry skill materialised under .runx/ read its own package, never write it", async () => {
    const own = join(layout.workspace, ".runx", "registry-step-skills", "0123", "demo");
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, "SKILL.md"), "# demo\n");
    writeFileSync(join(layout.workspace, ".runx", "state.sqlite"), "db");
    symlinkSync("../../../state.sqlite", join(own, "db"));
    const scoped = { ...ctx, packageDir: own };
    const root = await resolveRoot(scoped, { pathScope: "skill" });
    expect((await resolveReadable(root, "SKILL.md", "path")).relative).toBe("SKILL.md");
    const workspace = await resolveRoot(scoped, {});
    const pkg = ".runx/registry-step-skills/0123/demo";
    expect((await resolveReadable(workspace, `${pkg}/SKILL.md`, "path")).relative).toBe(
      `${pkg}/SKILL.md`,
    );
    // Its own package is no way into the rest of .runx/, nor a place to write.
    expect(await codeOf(resolveReadable(workspace, `${pkg}/db`, "path"))).toBe("POLICY_DENIED");
    expect(await codeOf(resolveWritable(workspace, `${pkg}/SKILL.md`, "path"))).toBe(
      "POLICY_DENIED",
    );
    expect(await codeOf(resolveReadable(workspace, ".runx/state.sqlite", "path"))).toBe(
      "POLICY_DENIED",
    );
  });
});
