import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-new-");
});
afterEach(() => ws.cleanup());

interface NewJson {
  status: string;
  new: { action: string; name: string; directory: string; files: string[]; next_steps: string[] };
}

interface FailureJson {
  status: string;
  error: { code: string; reason: string; message: string; field?: string };
}

describe("runx new", () => {
  it("without an objective, creates the fixed package that runs and harnesses", async () => {
    const r = await runx(ws, ["new", "digest-note", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<NewJson>();
    expect(out.status).toBe("success");
    expect(out.new).toMatchObject({
      action: "skill",
      name: "digest-note",
      files: ["SKILL.md", "X.yaml"],
    });
    expect(out.new.directory.endsWith(join("ws", "digest-note"))).toBe(true);
    expect(out.new.next_steps).toEqual([
      "runx harness digest-note --json",
      "runx skill digest-note --message hello --json",
    ]);
    expect(ws.files("digest-note")).toEqual(["digest-note/SKILL.md", "digest-note/X.yaml"]);
    const manual = ws.read("digest-note/SKILL.md");
    expect(manual).toContain("name: digest-note");
    expect(manual).toContain(
      'description: "A new runx skill; replace this description with what it is for."',
    );

    const run = await runx(ws, ["skill", "digest-note", "--message", "hello", "--json"]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const expected = createHash("sha256").update("hello", "utf8").digest("hex");
    expect(run.stdout).toContain(expected);

    const harness = await runx(ws, ["harness", "digest-note", "--json"]);
    expect(harness.code, harness.stdout + harness.stderr).toBe(0);
    expect(harness.json()).toMatchObject({
      status: "passed",
      case_count: 1,
      assertion_error_count: 0,
      case_names: ["digest-note-digest"],
    });
  });

  it("writes into --directory relative to the workspace and renders a human summary", async () => {
    const r = await runx(ws, ["new", "notes", "--directory", "skills/notes"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("created skill notes in");
    expect(r.stdout).toContain("runx harness skills/notes --json");
    expect(ws.files("skills")).toEqual(["skills/notes/SKILL.md", "skills/notes/X.yaml"]);
  });

  it("fills an existing empty directory but refuses a non-empty one without writing", async () => {
    mkdirSync(join(ws.root, "empty"));
    const ok = await runx(ws, ["new", "empty", "--json"]);
    expect(ok.code, ok.stdout).toBe(0);

    ws.write("taken/keep.txt", "mine\n");
    const r = await runx(ws, ["new", "taken", "--objective", "x", "--json"]);
    expect(r.code).toBe(1);
    const failure = r.json<FailureJson>();
    expect(failure.status).toBe("failure");
    expect(failure.error).toMatchObject({
      code: "invalid_target",
      reason: "SCAFFOLD_TARGET_INVALID",
    });
    expect(failure.error.message).toContain("not empty");
    expect(ws.files("taken")).toEqual(["taken/keep.txt"]);

    ws.write("file-target", "x\n");
    const f = await runx(ws, ["new", "file-target", "--objective", "x", "--json"]);
    expect(f.code).toBe(1);
    expect(f.json<FailureJson>().error.message).toContain("not a directory");
  });

  it("refuses a bad name, naming it, with a suggested spelling", async () => {
    for (const name of ["Digest Note", "../escape", "trailing-", "a/b", "x".repeat(65)]) {
      const r = await runx(ws, ["new", name, "--objective", "x", "--json"]);
      expect(r.code, name).toBe(64);
      const failure = r.json<FailureJson>();
      expect(failure.error).toMatchObject({ code: "usage_error", field: "name" });
      expect(failure.error.message).toContain(JSON.stringify(name));
    }
    const human = await runx(ws, ["new", "Digest Note", "--objective", "x"]);
    expect(human.stderr).toContain('"digest-note"');
    expect(human.stderr).not.toContain("    at ");
    expect(ws.files()).toEqual([]);
  });

  it("requires a name, and an objective when given must be non-empty", async () => {
    const noName = await runx(ws, ["new", "--objective", "x", "--json"]);
    expect(noName.code).toBe(64);
    expect(noName.json<FailureJson>().error.field).toBe("name");
    const blank = await runx(ws, ["new", "thing", "--objective", "   ", "--json"]);
    expect(blank.code).toBe(64);
    expect(blank.json<FailureJson>().error.field).toBe("objective");
    expect(ws.files()).toEqual([]);
  });

  it("refuses targets outside the workspace, directly or through a symlink", async () => {
    const outside = mkdtempSync(join(tmpdir(), "runx-new-outside-"));
    try {
      const abs = await runx(ws, [
        "new",
        "out",
        "--objective",
        "x",
        "--directory",
        join(outside, "out"),
        "--json",
      ]);
      expect(abs.code).toBe(1);
      expect(abs.json<FailureJson>().error).toMatchObject({
        code: "invalid_target",
        field: "directory",
      });
      const dots = await runx(ws, [
        "new",
        "out",
        "--objective",
        "x",
        "--directory",
        "../out",
        "--json",
      ]);
      expect(dots.code).toBe(1);
      expect(dots.json<FailureJson>().error.code).toBe("invalid_target");

      symlinkSync(outside, join(ws.root, "link"));
      const via = await runx(ws, [
        "new",
        "out",
        "--objective",
        "x",
        "--directory",
        "link/out",
        "--json",
      ]);
      expect(via.code).toBe(1);
      expect(via.json<FailureJson>().error.message).toContain("symlink");
      const self = await runx(ws, ["new", "link", "--objective", "x", "--json"]);
      expect(self.code).toBe(1);
      expect(self.json<FailureJson>().error.message).toContain("symlink");
      expect(existsSync(join(outside, "out"))).toBe(false);

      const root = await runx(ws, ["new", "out", "--objective", "x", "--directory", ".", "--json"]);
      expect(root.code).toBe(1);
      expect(root.json<FailureJson>().error.code).toBe("invalid_target");
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
    expect(existsSync(join(ws.root, "out"))).toBe(false);
  });

  it("is listed in help", async () => {
    const help = await runx(ws, ["new", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("runx new <name> --objective <text>");
  });
});
