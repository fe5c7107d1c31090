import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSkillPackage, resolveSkillRef } from "./resolve.js";

const SKILL = "---\nname: echo\ndescription: Echo.\n---\n\nEcho the message.\n";
const PROFILE =
  "skill: echo\nrunners:\n  default:\n    default: true\n    type: cli-tool\n    command: sh\n";

let root: string;
const at = (...parts: string[]) => path.join(root, ...parts);

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "runx-resolve-"));
  await mkdir(at("skills", "echo"), { recursive: true });
  await writeFile(at("skills", "echo", "SKILL.md"), SKILL);
  await writeFile(at("skills", "echo", "X.yaml"), PROFILE);
  await mkdir(at("portable"));
  await writeFile(at("portable", "SKILL.md"), "---\nname: portable\n---\nThink.\n");
  await writeFile(at("notes.md"), SKILL);
  await writeFile(at("SKILL.md"), "---\nname: workspace\n---\nWorkspace manual.\n");
  await mkdir(at("empty"));
  await mkdir(at("owned", "skills"), { recursive: true });
  await writeFile(at("owned", "SKILL.md"), "---\nname: owned\n---\n");
  await writeFile(at("owned", "X.yaml"), "skill: owned\nrunners:\n  main:\n    type: agent\n");
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("resolveSkillRef", () => {
  it("resolves a package directory", async () => {
    const resolved = await resolveSkillRef("skills/echo", { workspaceRoot: root });
    expect(resolved).toEqual({
      workspaceRoot: root,
      packageDir: at("skills", "echo"),
      skillMdPath: at("skills", "echo", "SKILL.md"),
      profilePath: at("skills", "echo", "X.yaml"),
    });
  });

  it("resolves the SKILL.md inside a package, with no profile when X.yaml is absent", async () => {
    const resolved = await resolveSkillRef("portable/SKILL.md", { workspaceRoot: root });
    expect(resolved.packageDir).toBe(at("portable"));
    expect(resolved.profilePath).toBeUndefined();
  });

  it("resolves a bare name from the workspace skills/ catalog", async () => {
    expect((await resolveSkillRef("echo", { workspaceRoot: root })).packageDir).toBe(
      at("skills", "echo"),
    );
  });

  it("refuses a flat markdown file", async () => {
    await expect(resolveSkillRef("notes.md", { workspaceRoot: root })).rejects.toMatchObject({
      code: "PACKAGE_INVALID",
      details: { file: "notes.md" },
    });
  });

  it("refuses a catalog workspace root whose SKILL.md is the workspace manual", async () => {
    await expect(resolveSkillRef(".", { workspaceRoot: root })).rejects.toMatchObject({
      code: "PACKAGE_INVALID",
    });
    await expect(resolveSkillRef("SKILL.md", { workspaceRoot: root })).rejects.toMatchObject({
      code: "PACKAGE_INVALID",
    });
  });

  it("accepts a catalog root that opts in with its own X.yaml", async () => {
    expect((await resolveSkillRef("owned", { workspaceRoot: root })).profilePath).toBe(
      at("owned", "X.yaml"),
    );
  });

  it.each([["missing"], ["./missing"], ["skills/missing"], ["empty"]])(
    "reports %s as not found",
    async (ref) => {
      await expect(resolveSkillRef(ref, { workspaceRoot: root })).rejects.toMatchObject({
        code: "PACKAGE_NOT_FOUND",
      });
    },
  );
});

describe("loadSkillPackage", () => {
  it("parses SKILL.md and X.yaml into a package", async () => {
    const pkg = await loadSkillPackage(await resolveSkillRef("echo", { workspaceRoot: root }));
    expect(pkg).toMatchObject({
      name: "echo",
      description: "Echo.",
      packageDir: at("skills", "echo"),
    });
    expect(pkg.runners.default?.type).toBe("cli-tool");
    expect(pkg.files).toEqual({ skillMd: "skills/echo/SKILL.md", profile: "skills/echo/X.yaml" });
  });

  it("labels files outside the workspace without revealing their absolute path", async () => {
    const other = await mkdtemp(path.join(tmpdir(), "runx-outside-"));
    try {
      await writeFile(path.join(other, "SKILL.md"), "---\nname: [\n---\n");
      const error = await loadSkillPackage(
        await resolveSkillRef(other, { workspaceRoot: root }),
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({
        code: "YAML_SYNTAX",
        details: { file: "<outside-workspace>/SKILL.md" },
      });
      expect(JSON.stringify(error) + String((error as Error).message)).not.toContain(other);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });

  it("refuses package files that are not UTF-8", async () => {
    await mkdir(at("latin1"));
    await writeFile(at("latin1", "SKILL.md"), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0x0a]));
    await expect(
      loadSkillPackage(await resolveSkillRef("latin1", { workspaceRoot: root })),
    ).rejects.toMatchObject({
      code: "PACKAGE_INVALID",
    });
  });
});
