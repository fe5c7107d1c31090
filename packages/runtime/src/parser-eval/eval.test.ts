import { describe, expect, it } from "vitest";
import type { JsonValue } from "../parser/json.js";
import { evaluateParserRequest } from "./eval.js";

type Outcome = { status: string; value?: Record<string, unknown>; error?: Record<string, unknown> };

/** Evaluates one input in a returnErrors batch and returns its outcome. */
function one(input: Record<string, JsonValue>): Outcome {
  const answer = evaluateParserRequest(JSON.stringify({ inputs: [input], returnErrors: true }));
  if (answer.status !== "success") throw new Error(JSON.stringify(answer));
  return (answer.result.value as Outcome[])[0] as Outcome;
}

const graph = (yaml: string) => one({ kind: "parser.validateGraphYaml", yaml });

describe("parser eval: graphs", () => {
  it("maps context edges, retry and declared result_from to the IR form", () => {
    const out = graph(
      [
        "name: g",
        "result_from: [second]",
        "steps:",
        "  - id: first",
        "    tool: fs.read",
        "    mutation: true",
        "  - id: second",
        "    skill: ./s",
        "    context:",
        "      zeta: first.data.items",
        "      alpha: $steps.first.result",
        "    retry: {max_attempts: 3}",
        "    when: {field: first.ok, not_equals: false}",
        "",
      ].join("\n"),
    );
    expect(out.status).toBe("success");
    const value = out.value as Record<string, unknown> & { steps: Record<string, unknown>[] };
    expect(value.resultFrom).toEqual(["second"]);
    expect(value.fanoutGroups).toEqual({});
    expect(value).not.toHaveProperty("policy");
    expect(value.steps[0]).toEqual({
      id: "first",
      tool: "fs.read",
      inputs: {},
      context: {},
      contextEdges: [],
      scopes: [],
      mutating: true,
    });
    expect(value.steps[1]).toMatchObject({
      context: { alpha: "$steps.first.result", zeta: "first.data.items" },
      contextEdges: [
        { input: "alpha", fromStep: "first", output: "result" },
        { input: "zeta", fromStep: "first", output: "data.items" },
      ],
      retry: { maxAttempts: 3 },
      when: { field: "first.ok", notEquals: false },
    });
  });

  it("reports an undeclared result_from as an empty list (our runtime defaults it later)", () => {
    const out = graph("name: g\nsteps:\n  - id: only\n    tool: fs.read\n");
    expect(out.value?.resultFrom).toEqual([]);
  });

  it("rejects YAML problems as parse_error and rule violations as validation_error", () => {
    expect(graph("name: [x\n").error?.code).toBe("parse_error");
    expect(graph("name: &a x\nsteps: []\n").error?.code).toBe("parse_error");
    expect(graph("- a\n").error).toEqual({
      code: "parse_error",
      message: "Graph YAML must parse to an object.",
    });
    const bad = graph("name: g\nsteps:\n  - id: a\n    skill: ./s\n    tool: fs.read\n").error;
    expect(bad?.code).toBe("validation_error");
    expect(bad?.message).toMatch(/^steps\[0\]: .*exactly one of skill, tool or run/);
  });
});

describe("parser eval: runner manifests", () => {
  it("normalizes runners, inputs, catalog defaults and graph runners", () => {
    const yaml = [
      "skill: demo",
      "catalog:",
      "  kind: skill",
      "runners:",
      "  main:",
      "    default: true",
      "    type: cli-tool",
      "    command: node",
      "    args: [run.mjs]",
      "    inputs:",
      "      message: {}",
      "  flow:",
      "    type: graph",
      "    graph:",
      "      name: flow",
      "      steps:",
      "        - id: a",
      "          tool: fs.read",
      "",
    ].join("\n");
    const out = one({ kind: "parser.validateRunnerManifestYaml", yaml });
    expect(out.status).toBe("success");
    const value = out.value as Record<string, Record<string, Record<string, unknown>>>;
    expect(value.catalog).toEqual({ kind: "skill", visibility: "public" });
    expect(value.runners?.main).toMatchObject({
      name: "main",
      default: true,
      inputs: { message: { type: "string", required: false } },
      source: { type: "cli-tool", command: "node", args: ["run.mjs"] },
    });
    expect(value.runners?.main?.source).toMatchObject({
      raw: { type: "cli-tool", command: "node", args: ["run.mjs"] },
    });
    expect(value.runners?.flow?.source).toMatchObject({
      type: "graph",
      graph: { name: "flow", resultFrom: [], steps: [{ id: "a", tool: "fs.read" }] },
    });
    expect(value.raw).toMatchObject({ raw: yaml });
  });

  it("rejects a runner missing its required source field as validation_error", () => {
    const out = one({
      kind: "parser.validateRunnerManifestYaml",
      yaml: "runners:\n  main:\n    type: cli-tool\n",
    });
    expect(out.error?.code).toBe("validation_error");
    expect(out.error?.message).toMatch(/command/);
  });
});

describe("parser eval: skills and installs", () => {
  const markdown = "---\nname: demo\ncategory: ' ops '\n---\n# Demo\n";

  it("validates SKILL.md with the default agent source and raw parts", () => {
    const out = one({ kind: "parser.validateSkillMarkdown", markdown });
    expect(out.value).toEqual({
      name: "demo",
      category: "ops",
      body: "# Demo\n",
      inputs: {},
      allowedTools: null,
      source: { type: "agent", args: [], raw: { type: "agent" } },
      raw: {
        frontmatter: { name: "demo", category: " ops " },
        rawFrontmatter: "name: demo\ncategory: ' ops '",
        body: "# Demo\n",
      },
    });
  });

  it("separates SKILL.md parse errors from frontmatter validation errors", () => {
    const missing = one({ kind: "parser.validateSkillMarkdown", markdown: "# none\n" });
    expect(missing.error?.code).toBe("parse_error");
    const invalid = one({ kind: "parser.validateSkillMarkdown", markdown: "---\nname: 4\n---\n" });
    expect(invalid.error?.code).toBe("validation_error");
  });

  it("returns the install origin and markdown beside the skill", () => {
    const origin = { source: "registry", source_label: "Registry", ref: "runx://skills/demo" };
    const out = one({ kind: "parser.validateSkillInstall", markdown, origin });
    expect(out.value).toMatchObject({ markdown, origin, skill: { name: "demo" } });
    const broken = one({ kind: "parser.validateSkillInstall", markdown: "# none\n", origin });
    expect(broken.error?.code).toBe("validation_error");
    const noRef = one({
      kind: "parser.validateSkillInstall",
      markdown,
      origin: { source: "registry", source_label: "Registry" },
    });
    expect(noRef.error).toEqual({
      code: "invalid_input",
      message: 'origin needs a string field "ref"',
    });
  });
});

describe("parser eval: requests", () => {
  it("names unknown and unimplemented kinds", () => {
    expect(one({ kind: "parser.nope" }).error).toEqual({
      code: "invalid_input",
      message: "unsupported parser input kind 'parser.nope'",
    });
    expect(one({ kind: "parser.validateToolManifestYaml", yaml: "x: 1\n" }).error?.message).toMatch(
      /not supported by this runtime/,
    );
  });

  it("answers single inputs and envelopes, and fails a batch without returnErrors wholesale", () => {
    const input = {
      kind: "parser.validateGraphYaml",
      yaml: "name: g\nsteps:\n  - id: a\n    tool: fs.read\n",
    };
    const single = evaluateParserRequest(JSON.stringify(input));
    expect(single).toMatchObject({
      status: "success",
      result: { kind: "output", value: { name: "g" } },
    });
    expect(evaluateParserRequest(JSON.stringify({ input }))).toEqual(single);
    const failing = evaluateParserRequest(
      JSON.stringify({ inputs: [input, { kind: "parser.validateGraphYaml", yaml: "[" }] }),
    );
    expect(failing).toMatchObject({ status: "failure", error: { code: "parse_error" } });
    expect(evaluateParserRequest("{")).toMatchObject({
      status: "failure",
      error: { code: "invalid_document" },
    });
  });
});
