import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { buildSkillPackage } from "./package.js";
import { selectRunner } from "./select-runner.js";
import type { SkillPackage } from "./package.js";

const skillMd = (frontmatter = "") => ({
  text: `---\nname: demo\ndescription: Demo.\n${frontmatter}---\n\n# Demo\n\n## Quality Profile\n\nBe exact.\n\n## Other\n`,
  file: "demo/SKILL.md",
});

function build(profile?: string, frontmatter?: string): SkillPackage {
  return buildSkillPackage({
    skillMd: skillMd(frontmatter),
    profile: profile === undefined ? undefined : { text: profile, file: "demo/X.yaml" },
  });
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error.code;
    throw error;
  }
  return "none";
}

const TWO_RUNNERS = `skill: demo
runners:
  a:
    type: cli-tool
    command: node
    args: [a.mjs]
  b:
    source:
      type: agent-step
      agent: builder
      task: review
    outputs:
      verdict: string
`;

describe("buildSkillPackage", () => {
  it("normalizes flattened and nested runners with their defaults", () => {
    const pkg = build(TWO_RUNNERS);
    expect(pkg.name).toBe("demo");
    expect(pkg.qualityProfile).toBe("Be exact.");
    expect(pkg.runners.a).toMatchObject({
      name: "a",
      type: "cli-tool",
      command: "node",
      args: ["a.mjs"],
      input_mode: "args",
      environment: { required: [], optional: [] },
      env: {},
      default: false,
      scopes: [],
    });
    expect(pkg.runners.b).toMatchObject({
      type: "agent-task",
      agent: "builder",
      task: "review",
      outputs: { verdict: { type: "string" } },
    });
  });

  it("expands input definitions and defaults input fields", () => {
    const pkg = build(`skill: demo
input_definitions:
  target: { type: object, required: true, description: Where. }
runners:
  run:
    type: agent
    inputs:
      target: { definition: target }
      note: {}
`);
    expect(pkg.runners.run?.inputs).toEqual({
      target: { name: "target", type: "object", required: true, description: "Where." },
      note: { name: "note", type: "string", required: false },
    });
  });

  it("defaults a graph's result_from to its last step and keeps it when declared", () => {
    const pkg = build(`skill: demo
runners:
  g:
    type: graph
    graph:
      name: g
      steps:
        - id: first
          tool: fs.read
        - id: second
          tool: fs.read
`);
    const runner = pkg.runners.g;
    expect(runner?.type === "graph" && runner.graph.result_from).toEqual(["second"]);
    expect(runner?.type === "graph" && runner.result_from_defaulted).toBe(true);
  });

  it("builds one implicit runner from frontmatter source when there is no X.yaml", () => {
    expect(build().runners).toMatchObject({
      default: { type: "agent", implicit: true, default: true },
    });
    const legacy = build(
      undefined,
      "source:\n  type: cli-tool\n  command: node\n  args: [run.mjs]\n",
    );
    expect(legacy.runners.default).toMatchObject({
      type: "cli-tool",
      command: "node",
      args: ["run.mjs"],
    });
  });
});

describe("runner post-run reflect policy", () => {
  const profile = (postRun: string) =>
    `skill: demo\nrunners:\n  a:\n    type: cli-tool\n    command: node\n    runx:\n      post_run: ${postRun}\n`;

  it("accepts auto, always and never", () => {
    for (const reflect of ["auto", "always", "never"])
      expect(build(profile(`{reflect: ${reflect}}`)).runners.a?.runx).toEqual({
        post_run: { reflect },
      });
  });

  it("refuses any other policy at load, naming the key path", () => {
    let caught: unknown;
    try {
      build(profile("{reflect: sometimes}"));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RuntimeError);
    const error = caught as RuntimeError;
    expect(error.message).toBe("reflect must be auto, always or never");
    expect(error.details.path).toBe("runners.a.runx.post_run.reflect");
    expect(code(() => build(profile("3")))).toBe(error.code);
  });
});

describe("selectRunner", () => {
  it("selects the named runner, or refuses an undeclared one", () => {
    const pkg = build(TWO_RUNNERS);
    expect(selectRunner(pkg, "b").name).toBe("b");
    expect(code(() => selectRunner(pkg, "c"))).toBe("RUNNER_NOT_FOUND");
  });

  it("refuses to guess between several runners without a default", () => {
    expect(code(() => selectRunner(build(TWO_RUNNERS)))).toBe("RUNNER_AMBIGUOUS");
  });

  it("selects the default runner, else the only runner", () => {
    expect(
      selectRunner(build(TWO_RUNNERS.replace("  b:\n", "  b:\n    default: true\n"))).name,
    ).toBe("b");
    expect(selectRunner(build("skill: demo\nrunners:\n  only:\n    type: agent\n")).name).toBe(
      "only",
    );
  });

  it("falls back to the implicit frontmatter runner for SKILL.md-only packages", () => {
    expect(selectRunner(build())).toMatchObject({ name: "default", type: "agent" });
  });

  it("merges skill-level inputs and settings under the runner's own", () => {
    const pkg = build(
      "skill: demo\nrunners:\n  r:\n    type: agent\n    retry: { max_attempts: 3 }\n    inputs:\n      topic: { type: string, required: true }\n",
      "inputs:\n  topic: { type: number }\n  lang: { type: string, default: en }\nretry:\n  max_attempts: 2\nrisk:\n  mutating: true\nidempotency: run-key\n",
    );
    const runner = selectRunner(pkg);
    expect(runner.inputs.topic).toMatchObject({ type: "string", required: true });
    expect(runner.inputs.lang).toMatchObject({ default: "en" });
    expect(runner.retry).toEqual({ max_attempts: 3 });
    expect(runner.mutating).toBe(true);
    expect(runner.idempotency).toEqual({ key: "run-key" });
  });
});
