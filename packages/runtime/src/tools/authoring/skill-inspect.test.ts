import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsAuthoringRunxSkillInspectOutput } from "../../generated/validate-tools-authoring-runx-skill-inspect.output.js";
import { validateToolsAuthoringRunxSkillValidateOutput } from "../../generated/validate-tools-authoring-runx-skill-validate.output.js";
import type { JsonRecord, ToolContext, ToolResult } from "../types.js";
import {
  failureCode,
  makeLayoutContext,
  snapshotTree,
  successData,
  type TestWorkspace,
} from "../../testing/tool-context.js";
import { skillInspectTool } from "./skill-inspect.js";
import { skillValidateTool } from "./skill-validate.js";
import { notePackage } from "./decisions.test-kit.js";

/** The package digest computed from its definition, independently of snapshot.ts. */
function expectedDigest(files: Array<{ path: string; contents: string; mode: number }>): string {
  const hash = createHash("sha256").update("directory\0");
  const field = (value: Buffer): void => {
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(value.length));
    hash.update(length).update(value);
  };
  for (const f of files) {
    const mode = Buffer.alloc(4);
    mode.writeUInt32BE(f.mode);
    field(Buffer.from(f.path));
    field(mode);
    field(Buffer.from(f.contents));
  }
  return `sha256:${hash.digest("hex")}`;
}

describe("runx.skill.inspect", () => {
  let layout: TestWorkspace;
  let ctx: ToolContext;
  beforeEach(() => {
    ({ layout, ctx } = makeLayoutContext());
  });
  afterEach(() => layout.cleanup());

  const inspect = (input: Record<string, unknown>): Promise<ToolResult> =>
    skillInspectTool.execute(input as JsonRecord, ctx);

  const writePackage = (dir: string, files = notePackage()): void => {
    for (const f of files) {
      mkdirSync(join(layout.workspace, dir, f.path, ".."), { recursive: true });
      writeFileSync(join(layout.workspace, dir, f.path), f.contents);
    }
  };

  it("reports an absent target with the absent digest, the catalog and the native tools", async () => {
    writePackage("skills/digest-note");
    const context = successData(await inspect({ target_dir: "skills/new-one" }));
    expect(validateToolsAuthoringRunxSkillInspectOutput(context)).toBe(true);
    expect(context).toMatchObject({
      repo_root: ".",
      target_dir: "skills/new-one",
      target_exists: false,
      base_digest: `sha256:${createHash("sha256").update("absent").digest("hex")}`,
      target_files: [],
      target_inspection: null,
      catalog_root: "skills",
      catalog_skills: [
        {
          name: "digest-note",
          kind: "graph",
          path: "skills/digest-note",
          status: "ok",
          harness_cases: 1,
          fixtures: 0,
        },
      ],
    });
    const tools = (context.core_tools as Array<{ name: string }>).map((t) => t.name);
    for (const name of ["runx.skill.inspect", "runx.skill.apply", "data.digest", "http.read"]) {
      expect(tools).toContain(name);
    }
  });

  it("digests an existing package over its paths, modes and bytes in name order", async () => {
    const files = [...notePackage(), { path: "fixtures/case.yaml", contents: "name: x\n" }];
    writePackage("skills/digest-note", files);
    chmodSync(join(layout.workspace, "skills/digest-note/X.yaml"), 0o600);
    const sorted = files
      .map((f) => ({
        ...f,
        mode: statSync(join(layout.workspace, "skills/digest-note", f.path)).mode,
      }))
      .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)));
    const context = successData(await inspect({ target_dir: "skills/digest-note" }));
    expect(context.base_digest).toBe(expectedDigest(sorted));
    expect(context.target_files).toEqual(
      sorted.map((f) => ({ path: f.path, bytes: Buffer.byteLength(f.contents) })),
    );
    expect(context.target_metrics).toMatchObject({ files: 3, test_lines: 1, executable_files: 0 });
    expect(context.target_inspection).toMatchObject({
      status: "ok",
      name: "digest-note",
      capabilities: { execution: "read" },
    });
    chmodSync(join(layout.workspace, "skills/digest-note/X.yaml"), 0o644);
    const moved = successData(await inspect({ target_dir: "skills/digest-note" }));
    expect(moved.base_digest).not.toBe(context.base_digest);
  });

  it("treats a null target_dir (an optional graph input left out) as no target", async () => {
    const context = successData(await inspect({ repo_root: ".", target_dir: null }));
    expect(context).toMatchObject({ target_dir: null, target_exists: false, target_files: [] });
  });

  it("reports an unloadable package as an invalid inspection, not a failure", async () => {
    writePackage("skills/broken", [{ path: "SKILL.md", contents: "no frontmatter\n" }]);
    const context = successData(await inspect({ target_dir: "skills/broken" }));
    expect(context.target_inspection).toMatchObject({ status: "invalid" });
  });

  it("refuses targets outside the workspace, inside runx state, or named by a bad field", async () => {
    const escape = await inspect({ target_dir: "../outside" });
    expect(failureCode(escape)).toBe("PATH_ESCAPE");
    expect(escape).toMatchObject({ output: { details: { path: "target_dir" } } });
    expect(failureCode(await inspect({ target_dir: ".runx/runs" }))).toBe("POLICY_DENIED");
    const unknown = await inspect({ target: "skills/x" });
    expect(failureCode(unknown)).toBe("INPUT_INVALID");
    expect(unknown).toMatchObject({ output: { details: { path: "target" } } });
  });
});

describe("runx.skill.validate", () => {
  let layout: TestWorkspace;
  let ctx: ToolContext;
  beforeEach(() => {
    ({ layout, ctx } = makeLayoutContext());
  });
  afterEach(() => layout.cleanup());

  const validate = (input: Record<string, unknown>): Promise<ToolResult> =>
    skillValidateTool.execute(input as JsonRecord, ctx);
  const writePackage = (dir: string, files = notePackage()): void => {
    for (const f of files) {
      mkdirSync(join(layout.workspace, dir), { recursive: true });
      writeFileSync(join(layout.workspace, dir, f.path), f.contents);
    }
  };
  const executePackage = () =>
    notePackage().map((f) =>
      f.path === "X.yaml"
        ? { ...f, contents: f.contents.replace("execution: read", "execution: execute") }
        : f,
    );

  it("tests a read package with its own harness and writes nothing", async () => {
    writePackage("skills/digest-note");
    const before = snapshotTree(layout.workspace);
    const report = successData(await validate({ skill_ref: "skills/digest-note" }));
    expect(validateToolsAuthoringRunxSkillValidateOutput(report)).toBe(true);
    expect(report).toMatchObject({
      schema: "runx.skill.validation.v1",
      requested_ref: "skills/digest-note",
      resolved_ref: "skills/digest-note",
      verdict: "tested",
      inspect: { status: "ok", name: "digest-note" },
      harness: { attempted: true, status: "passed", case_count: 1 },
    });
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  it("skips the harness of an execute package unless it is explicitly allowed", async () => {
    writePackage("skills/digest-note", executePackage());
    const skipped = successData(await validate({ skill_ref: "skills/digest-note/SKILL.md" }));
    expect(skipped).toMatchObject({
      resolved_ref: "skills/digest-note",
      verdict: "needs_consequential_harness_approval",
      harness: { attempted: false, status: "skipped" },
    });
    const allowed = successData(
      await validate({ skill_ref: "skills/digest-note", allow_execute_harness: true }),
    );
    expect(allowed).toMatchObject({ verdict: "tested" });
  });

  it("reports a package that fails to load or whose harness fails as validation_failed", async () => {
    writePackage("skills/broken", [{ path: "SKILL.md", contents: "no frontmatter\n" }]);
    expect(successData(await validate({ skill_ref: "skills/broken" }))).toMatchObject({
      verdict: "validation_failed",
      inspect: { status: "invalid" },
      harness: { attempted: false, status: "failed" },
    });
    writePackage(
      "skills/failing",
      notePackage().map((f) => ({
        ...f,
        contents: f.contents.replace("status: sealed", "status: failure"),
      })),
    );
    expect(successData(await validate({ skill_ref: "skills/failing" }))).toMatchObject({
      verdict: "validation_failed",
      harness: { attempted: true, status: "failed" },
    });
  });

  it("validates an inline candidate in a scratch stage and leaves the workspace as it was", async () => {
    const before = snapshotTree(layout.workspace);
    const report = successData(await validate({ skill_ref: null, candidate_files: notePackage() }));
    expect(report).toMatchObject({
      requested_ref: "inline-candidate",
      resolved_ref: "inline-candidate",
      verdict: "tested",
    });
    expect(snapshotTree(layout.workspace)).toEqual(before);
  });

  it("resolves a sibling of the calling skill inside its catalog, never outside it", async () => {
    writePackage("skills/digest-note");
    const sibling = successData(await validate({ skill_ref: "../digest-note" }));
    expect(sibling).toMatchObject({ verdict: "tested" });
    expect(failureCode(await validate({ skill_ref: "../../../outside" }))).toBe("PATH_ESCAPE");
  });

  const refusals: Array<[string, Record<string, unknown>, string, string]> = [
    ["neither a reference nor a candidate", {}, "INPUT_INVALID", "skill_ref"],
    [
      "both a reference and a candidate",
      { skill_ref: "skills/x", candidate_files: notePackage() },
      "INPUT_INVALID",
      "candidate_files",
    ],
    [
      "a candidate without X.yaml",
      { candidate_files: [notePackage()[0]] },
      "INPUT_INVALID",
      "candidate_files",
    ],
    [
      "a candidate path that climbs out",
      { candidate_files: [...notePackage(), { path: "../x.md", contents: "" }] },
      "PATH_ESCAPE",
      "candidate_files[2].path",
    ],
    [
      "a duplicate candidate file",
      { candidate_files: [...notePackage(), notePackage()[0]] },
      "INPUT_INVALID",
      "candidate_files[2].path",
    ],
    ["a reference outside the workspace", { skill_ref: "/etc" }, "PATH_ESCAPE", "skill_ref"],
    ["a reference into runx state", { skill_ref: ".runx/runs" }, "POLICY_DENIED", "skill_ref"],
    [
      "a non-boolean allowance",
      { skill_ref: "skills/x", allow_execute_harness: "yes" },
      "INPUT_INVALID",
      "allow_execute_harness",
    ],
  ];
  for (const [what, input, code, path] of refusals) {
    it(`refuses ${what} (${code} at ${path}) without writing`, async () => {
      const before = snapshotTree(layout.workspace);
      const result = await validate(input);
      expect(failureCode(result)).toBe(code);
      expect(result).toMatchObject({ output: { details: { path } } });
      expect(snapshotTree(layout.workspace)).toEqual(before);
    });
  }
});
