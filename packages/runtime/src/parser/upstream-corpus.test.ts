import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadSkillPackage, resolveSkillRef } from "../packages/resolve.js";
import { parseExecutionProfile } from "./execution-profile.js";
import { selectRunner } from "./select-runner.js";

// <repo>/packages/runtime/src/parser/this-file → <repo>; the shared corpus sits beside the repo.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../..");
const upstream = path.resolve(repoRoot, "../shared/conformance/runx-upstream");

/** Packages we deliberately refuse, with the reason. Empty: every upstream package parses. */
const DELIBERATELY_REJECTED: Readonly<Record<string, string>> = {};

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.name === "X.yaml" || entry.name === "SKILL.md") out.push(full);
  }
  return out;
}

const files = existsSync(upstream) ? walk(upstream) : [];
const packageDirs = [
  ...new Set(files.filter((f) => f.endsWith("SKILL.md")).map((f) => path.dirname(f))),
].sort();
const profileOnly = files
  .filter((f) => f.endsWith("X.yaml") && !existsSync(path.join(path.dirname(f), "SKILL.md")))
  .sort();
const rel = (p: string): string => path.relative(upstream, p).split(path.sep).join("/");

describe("upstream conformance corpus", () => {
  it("is present next to the repository", () => {
    expect(statSync(upstream).isDirectory()).toBe(true);
    expect(packageDirs.length).toBeGreaterThan(60);
  });

  it.each(packageDirs.map((dir) => [rel(dir), dir]))("loads the package %s", async (name, dir) => {
    const load = async () =>
      loadSkillPackage(await resolveSkillRef(dir, { workspaceRoot: upstream }));
    const reason = DELIBERATELY_REJECTED[name];
    if (reason !== undefined) {
      await expect(load()).rejects.toMatchObject({ code: expect.any(String) });
      return;
    }
    const pkg = await load();
    expect(pkg.name).not.toBe("");
    expect(Object.keys(pkg.runners).length).toBeGreaterThan(0);
    const hasDefault =
      Object.values(pkg.runners).some((r) => r.default) || Object.keys(pkg.runners).length === 1;
    if (hasDefault) expect(selectRunner(pkg).name).toBeTypeOf("string");
    for (const runnerName of Object.keys(pkg.runners))
      expect(selectRunner(pkg, runnerName).name).toBe(runnerName);
  });

  it.each(profileOnly.map((file) => [rel(file), file]))(
    "parses the graph-stage profile %s",
    (_name, file) => {
      const profile = parseExecutionProfile(readFileSync(file, "utf8"), { file });
      expect(Object.keys(profile.runners).length).toBeGreaterThan(0);
    },
  );

  it("reproduces the parser fixtures' runner normalisation", () => {
    const dir = path.join(upstream, "fixtures/parser/runner-manifests");
    for (const name of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const fixture = JSON.parse(readFileSync(path.join(dir, name), "utf8")) as {
        input: { yaml: string };
        expected: {
          validated: { runners: Record<string, { default: boolean; source: { type: string } }> };
        };
      };
      const profile = parseExecutionProfile(fixture.input.yaml, { file: name });
      for (const [runnerName, expected] of Object.entries(fixture.expected.validated.runners)) {
        expect(profile.runners[runnerName]?.type).toBe(expected.source.type);
        expect(profile.runners[runnerName]?.default).toBe(expected.default);
      }
    }
  });
});
