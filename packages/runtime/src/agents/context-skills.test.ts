import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  CONTEXT_SKILL_MAX_BYTES,
  CONTEXT_SKILLS_MAX_COUNT,
  resolveContextSkills,
} from "./context-skills.js";

let base: string;
let skills: string;
let pkg: string;

function skillMd(name: string, body = "Guidance."): string {
  return `---\nname: ${name}\ndescription: context\n---\n${body}\n`;
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "runx-context-"));
  skills = join(base, "skills");
  pkg = join(skills, "graph-owner");
  write(join(pkg, "SKILL.md"), skillMd("graph-owner"));
  write(join(pkg, "context", "operator", "SKILL.md"), skillMd("operator", "Be careful."));
  write(join(skills, "taste-profile", "SKILL.md"), skillMd("taste-profile", "Prefer clarity."));
  write(join(base, "outside", "SKILL.md"), skillMd("outside"));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const code = (c: string): Error => expect.objectContaining({ code: c }) as Error;

describe("resolveContextSkills", () => {
  it("reads package-relative and sibling refs as digest-labelled untrusted artifacts", async () => {
    const artifacts = await resolveContextSkills(["./context/operator", "../taste-profile"], {
      packageDir: pkg,
    });
    const text = skillMd("operator", "Be careful.");
    expect(artifacts[0]).toEqual({
      type: "runx.skill.context",
      label: "operator",
      ref: "./context/operator",
      digest: `sha256:${createHash("sha256").update(text).digest("hex")}`,
      bytes: Buffer.byteLength(text),
      content: text,
      trust: "untrusted",
    });
    expect(artifacts[1]).toMatchObject({ label: "taste-profile", trust: "untrusted" });
  });

  it("reads the upstream loop-orchestration context skill", async () => {
    const dir = "/work/shared/conformance/runx-upstream/examples/loop-orchestration";
    const [artifact] = await resolveContextSkills(["./context/loop-operator"], { packageDir: dir });
    expect(artifact?.type).toBe("runx.skill.context");
    expect(artifact?.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("refuses refs that escape the package's parent directory, absolutely or by symlink", async () => {
    await expect(resolveContextSkills(["../../outside"], { packageDir: pkg })).rejects.toThrow(
      code("PATH_ESCAPE"),
    );
    await expect(
      resolveContextSkills([join(skills, "taste-profile")], { packageDir: pkg }),
    ).rejects.toThrow(code("PATH_ESCAPE"));
    symlinkSync(join(base, "outside"), join(pkg, "linked"));
    await expect(resolveContextSkills(["./linked"], { packageDir: pkg })).rejects.toThrow(
      code("PATH_ESCAPE"),
    );
  });

  it("reports a missing context skill as PACKAGE_NOT_FOUND", async () => {
    await expect(resolveContextSkills(["./nope"], { packageDir: pkg })).rejects.toThrow(
      code("PACKAGE_NOT_FOUND"),
    );
  });

  it(`refuses more than ${CONTEXT_SKILLS_MAX_COUNT} refs before reading any`, async () => {
    const refs = Array.from({ length: CONTEXT_SKILLS_MAX_COUNT + 1 }, () => "./nope");
    await expect(resolveContextSkills(refs, { packageDir: pkg })).rejects.toThrow(
      code("CONTEXT_SKILLS_LIMIT"),
    );
  });

  it("refuses one SKILL.md over 64 KiB and a set over 256 KiB in total", async () => {
    write(join(skills, "big", "SKILL.md"), skillMd("big", "x".repeat(CONTEXT_SKILL_MAX_BYTES)));
    await expect(resolveContextSkills(["../big"], { packageDir: pkg })).rejects.toThrow(
      code("CONTEXT_SKILLS_LIMIT"),
    );
    const refs: string[] = [];
    for (let i = 0; i < 5; i++) {
      write(join(skills, `mid${i}`, "SKILL.md"), skillMd(`mid${i}`, "y".repeat(60 * 1024)));
      refs.push(`../mid${i}`);
    }
    await expect(resolveContextSkills(refs.slice(0, 4), { packageDir: pkg })).resolves.toHaveLength(
      4,
    );
    await expect(resolveContextSkills(refs, { packageDir: pkg })).rejects.toThrow(
      code("CONTEXT_SKILLS_LIMIT"),
    );
  });

  it("refuses registry refs without a registry directory", async () => {
    await expect(
      resolveContextSkills(["registry:runx/taste-profile@1.0.0"], { packageDir: pkg }),
    ).rejects.toThrow(code("CONTEXT_SKILL_INVALID"));
  });

  it("reads registry refs from the local registry and checks their recorded digest", async () => {
    const registryDir = join(base, "registry");
    const markdown = skillMd("taste-profile", "# Taste Profile");
    const digest = createHash("sha256").update(markdown).digest("hex");
    write(
      join(registryDir, "runx", "taste-profile", "1.0.0.json"),
      JSON.stringify({ skill_id: "runx/taste-profile", version: "1.0.0", digest, markdown }),
    );
    const [artifact] = await resolveContextSkills(["registry:runx/taste-profile@1.0.0"], {
      packageDir: pkg,
      registryDir,
    });
    expect(artifact).toMatchObject({ label: "taste-profile", digest: `sha256:${digest}` });
    write(
      join(registryDir, "runx", "taste-profile", "1.0.1.json"),
      JSON.stringify({ digest, markdown: `${markdown}tampered` }),
    );
    await expect(
      resolveContextSkills(["registry:runx/taste-profile@1.0.1"], { packageDir: pkg, registryDir }),
    ).rejects.toThrow(code("CONTEXT_SKILL_INVALID"));
    await expect(
      resolveContextSkills(["registry:runx/taste-profile"], { packageDir: pkg, registryDir }),
    ).rejects.toThrow(code("CONTEXT_SKILL_INVALID"));
  });
});
