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
        "      alpha: first.result",
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
      context: { alpha: "first.result", zeta: "first.data.items" },
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
      message: "graph: YAML parse failed: invalid type: sequence, expected a map",
    });
    const bad = graph("name: g\nsteps:\n  - id: a\n    skill: ./s\n    tool: fs.read\n").error;
    expect(bad).toEqual({
      code: "validation_error",
      message: "steps.0 must not declare more than one of run, skill, or tool.",
    });
  });

  it("words graph rejections as upstream does, in upstream's order", () => {
    const message = (yaml: string) => graph(yaml).error?.message;
    expect(message("steps:\n  - id: a\n    tool: fs.read\n")).toBe("name is required.");
    expect(message("name: g\nsteps: []\n")).toBe("steps must contain at least one step.");
    expect(message("name: g\nsteps: {}\n")).toBe("steps must be an array.");
    expect(message("name: g\nschedule: daily\nsteps: []\n")).toBe(
      "schedule is not supported by the local sequential graph runner.",
    );
    expect(message("name: g\nsteps:\n  - tool: fs.read\n")).toBe("steps.0.id is required.");
    expect(message("name: g\nsteps:\n  - id: a\n")).toBe(
      "steps.0 must declare exactly one of skill, tool, or run.",
    );
    expect(
      message("name: g\nsteps:\n  - id: a\n    tool: fs.read\n  - id: a\n    tool: fs.read\n"),
    ).toBe("steps.1.id 'a' must be unique.");
    expect(message("name: g\nsteps:\n  - id: a\n    run: {agent: x}\n")).toBe(
      "steps.0.run is not a valid inline source: source.type is required.",
    );
    expect(
      message("name: g\nsteps:\n  - id: a\n    tool: fs.read\n    context: {x: $steps.a.out}\n"),
    ).toBe("steps.0.context.x references unknown or later step '$steps'.");
    expect(
      message(
        "name: g\nsteps:\n  - id: a\n    tool: fs.read\n  - id: b\n    tool: fs.read\n    inputs: {x: a.data}\n",
      ),
    ).toBe(
      'steps.1.inputs.x looks like step output reference "a.data"; move it to context if you meant to read a previous step output.',
    );
    expect(
      message("name: g\npolicy:\n  transitions: []\nsteps:\n  - id: a\n    tool: fs.read\n"),
    ).toBe("policy has unknown field 'transitions'; only 'guards' is supported.");
    expect(
      message(
        "name: g\npolicy:\n  guards:\n    - {step: a, field: ok}\nsteps:\n  - id: a\n    tool: fs.read\n",
      ),
    ).toBe("policy.guards.0 must declare equals or not_equals.");
    expect(
      message("name: g\nsteps:\n  - id: a\n    tool: fs.read\n    retry: {max_attempts: 0}\n"),
    ).toBe("steps.0.retry.max_attempts must be a positive integer.");
  });

  it("words fanout rejections as upstream does", () => {
    const message = (yaml: string) => graph(yaml).error?.message;
    const branches =
      "steps:\n  - id: a\n    tool: fs.read\n    fanout_group: g\n  - id: b\n    tool: fs.read\n    fanout_group: g\n";
    const withGroup = (group: string) =>
      `name: f\nfanout:\n  groups:\n    g: ${group}\n${branches}`;
    expect(message(withGroup("{strategy: some}"))).toBe(
      "fanout.groups.g.strategy must be all, any, or quorum.",
    );
    expect(message(withGroup("{strategy: quorum}"))).toBe(
      "fanout.groups.g.min_success must be a positive integer for quorum sync.",
    );
    expect(message(withGroup("{strategy: quorum, min_success: 3}"))).toBe(
      "fanout.groups.g.min_success cannot exceed the number of branches.",
    );
    expect(message(withGroup("{on_branch_failure: retry}"))).toBe(
      "fanout.groups.g.on_branch_failure must be halt or continue.",
    );
    expect(
      message(withGroup("{threshold_gates: [{step: c, field: score, above: 1, action: pause}]}")),
    ).toBe("fanout.groups.g.threshold_gates step 'c' is not in the fanout group.");
    expect(message(withGroup("{conflict_gates: [{field: verdict, action: stop}]}"))).toBe(
      "fanout.groups.g.conflict_gates.0.action must be pause or escalate.",
    );
    expect(message(`name: f\nfanout:\n  groups:\n    h: {}\n${branches}`)).toBe(
      "steps.a.fanout_group references unknown fanout group 'g'.",
    );
    expect(
      message(
        "name: f\nfanout:\n  groups:\n    g: {}\nsteps:\n  - id: a\n    tool: fs.read\n    fanout_group: g\n  - id: m\n    tool: fs.read\n  - id: b\n    tool: fs.read\n    fanout_group: g\n",
      ),
    ).toBe("fanout group 'g' steps must be contiguous.");
  });
});

describe("parser eval: runner manifests", () => {
  it("normalizes runners, inputs, catalog defaults and graph runners", () => {
    const yaml = [
      "skill: demo",
      "catalog:",
      "  kind: skill",
      "  audience: public",
      "  role: canonical",
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
      "      result_from: [a]",
      "      steps:",
      "        - id: a",
      "          tool: fs.read",
      "",
    ].join("\n");
    const out = one({ kind: "parser.validateRunnerManifestYaml", yaml });
    expect(out.status).toBe("success");
    const value = out.value as Record<string, Record<string, Record<string, unknown>>>;
    expect(value.catalog).toEqual({
      kind: "skill",
      audience: "public",
      visibility: "public",
      role: "canonical",
    });
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
      graph: { name: "flow", resultFrom: ["a"], steps: [{ id: "a", tool: "fs.read" }] },
    });
    expect(value.raw).toMatchObject({ raw: yaml });
  });

  it("rejects a runner missing its required source field as validation_error", () => {
    const out = one({
      kind: "parser.validateRunnerManifestYaml",
      yaml: "runners:\n  main:\n    type: cli-tool\n",
    });
    expect(out.error).toEqual({
      code: "validation_error",
      message: "source.command is required.",
    });
  });

  it("checks runner sources as upstream checks a skill source", () => {
    const message = (yaml: string) =>
      one({ kind: "parser.validateRunnerManifestYaml", yaml }).error?.message;
    expect(
      message("runners:\n  main:\n    source:\n      type: agent-task\n      agent: a\n"),
    ).toBe("source.task is required.");
    expect(
      message(
        "runners:\n  main:\n    type: agent-task\n    agent: a\n    task: t\n    command: x\n",
      ),
    ).toBe("agent-task sources must not declare source.command or source.args.");
    expect(message("runners:\n  main:\n    source: 3\n")).toBe(
      "runners.main.source must be an object.",
    );
    expect(
      message("runners:\n  main:\n    type: cli-tool\n    command: x\n    input_mode: pipe\n"),
    ).toBe("source.input_mode must be args, stdin, or none.");
    expect(message("runners:\n  main:\n    type: mcp\n    tool: t\n")).toBe(
      "source.server is required.",
    );
  });
});

describe("parser eval: runner manifest rejections", () => {
  const runner = (yaml: string) => one({ kind: "parser.validateRunnerManifestYaml", yaml });

  it("refuses a reflect policy other than auto, always or never", () => {
    const yaml = (reflect: string) =>
      `runners:\n  main:\n    type: cli-tool\n    command: node\n    runx:\n      post_run:\n        reflect: ${reflect}\n`;
    expect(runner(yaml("sometimes")).error).toEqual({
      code: "validation_error",
      message: "runners.main.runx.post_run.reflect must be auto, always, or never.",
    });
    expect(runner(yaml("[auto]")).error?.message).toBe(
      "runners.main.runx.post_run.reflect must be a string.",
    );
    expect(runner(yaml("always")).status).toBe("success");
    expect(
      runner(
        "runners:\n  main:\n    type: cli-tool\n    command: node\n    runx:\n      post_run: 3\n",
      ).error?.message,
    ).toBe("runners.main.runx.post_run must be an object.");
  });

  it("words manifest-level rejections as upstream does", () => {
    expect(runner("skill: s\n").error?.message).toBe("runners is required.");
    expect(runner("runners:\n  main: 3\n").error?.message).toBe("runners.main must be an object.");
    expect(runner("extra: 1\nrunners: {}\n").error?.message).toBe(
      "runner_manifest.extra is not supported; allowed fields: skill, version, runx, policy, emits, catalog, credentials, input_definitions, runners, harness.",
    );
    expect(runner("- a\n").error).toEqual({
      code: "parse_error",
      message: "runner_manifest: Runner manifest YAML must parse to an object.",
    });
  });

  it("checks each runner in upstream's order with upstream's sentences", () => {
    const cli = "    type: cli-tool\n    command: node\n";
    const message = (extra: string, top = "") =>
      runner(`${top}runners:\n  main:\n${cli}${extra}`).error?.message;
    expect(message("    instructions: do it\n")).toBe(
      "runners.main.instructions is not supported; put agent operating instructions in the owning SKILL.md",
    );
    expect(message("    env: {A: b}\n")).toMatch(
      /^runners\.main\.env is not supported; allowed fields: act, agent, .*, allow_private_network\.$/,
    );
    expect(message("    runx:\n      scopes: [a]\n")).toBe(
      "runners.main.runx contains unknown field 'scopes'; execution requirements belong on the runner or its source",
    );
    expect(message("    retry: {max_attempts: 0}\n")).toBe(
      "runners.main.retry.max_attempts must be a positive integer.",
    );
    expect(message("    idempotency: ' '\n")).toBe("runners.main.idempotency must not be empty.");
    expect(message("    mutating: 1\n")).toBe("runners.main.mutating must be a boolean.");
    expect(message("    inputs:\n      a: 3\n")).toBe("runners.main.inputs.a must be an object.");
    expect(message("    inputs:\n      a: {definition: missing}\n")).toBe(
      "runners.main.inputs.a.definition references unknown input_definitions.missing",
    );
    expect(message("    examples: {}\n")).toBe("runners.main.examples must be an array.");
    expect(message("    default: 1\n")).toBe("runners.main.default must be a boolean.");
    expect(message("    scopes: ['']\n")).toBe(
      "runners.main.scopes must contain only non-empty scope strings",
    );
    expect(
      runner("runners:\n  main:\n    type: javascript\n    module: a.mjs\n    credential: c\n")
        .error?.message,
    ).toBe(
      "runners.main.credential is not valid for a pure javascript source; route credentials through a native provider tool",
    );
    expect(
      runner(
        "runners:\n  flow:\n    type: graph\n    outputs: {a: string}\n    graph:\n      name: f\n      steps:\n        - id: a\n          tool: fs.read\n",
      ).error?.message,
    ).toBe(
      "runners.flow.outputs is ambiguous for a graph source; declare outputs on the graph's terminal output-producing step",
    );
  });

  it("words a graph runner's graph rejection with graph-relative fields", () => {
    const out = runner(
      "runners:\n  flow:\n    type: graph\n    graph:\n      name: flow\n      steps:\n        - tool: fs.read\n",
    );
    expect(out.error).toEqual({ code: "validation_error", message: "steps.0.id is required." });
  });
});

describe("parser eval: tool manifests", () => {
  const yaml = [
    "schema: runx.tool.manifest.v1",
    "name: demo.echo",
    "version: 1.0.0",
    "description: Echo",
    "source:",
    "  type: cli-tool",
    "  command: node",
    "  args: [run.mjs]",
    "  input_mode: stdin",
    "  timeout_seconds: 30",
    "inputs:",
    "  message:",
    "    type: string",
    "    required: true",
    "    description: What to echo",
    "  times:",
    "    type: number",
    "    default: 1",
    "scopes: [fs:read]",
    "risk: {level: low}",
    "retry: {max_attempts: 2}",
    "idempotency: {key: message}",
    "mutating: false",
    "artifacts:",
    "  emits: echo",
    "",
  ].join("\n");
  const validated = {
    name: "demo.echo",
    version: "1.0.0",
    description: "Echo",
    source: {
      type: "cli-tool",
      command: "node",
      args: ["run.mjs"],
      inputMode: "stdin",
      timeoutSeconds: 30,
      raw: {
        type: "cli-tool",
        command: "node",
        args: ["run.mjs"],
        input_mode: "stdin",
        timeout_seconds: 30,
      },
    },
    inputs: {
      message: { type: "string", required: true, description: "What to echo" },
      times: { type: "number", required: false, default: 1 },
    },
    scopes: ["fs:read"],
    risk: { level: "low" },
    retry: { max_attempts: 2 },
    idempotency: { key: "message" },
    mutating: false,
    artifacts: { emits: ["echo"] },
  };
  const toolYaml = (text: string) => one({ kind: "parser.validateToolManifestYaml", yaml: text });
  const toolJson = (doc: Record<string, JsonValue>) =>
    one({ kind: "parser.validateToolManifestJson", json: JSON.stringify(doc) });

  it("validates YAML and JSON manifests to upstream's ValidatedTool shape", () => {
    expect(toolYaml(yaml)).toEqual({ status: "success", value: validated });
    const json = toolJson({
      schema: "runx.tool.manifest.v1",
      name: "demo.mcp",
      source: { type: "mcp", server: { command: "srv" }, tool: "echo" },
      idempotency: "k",
    });
    expect(json).toEqual({
      status: "success",
      value: {
        name: "demo.mcp",
        source: {
          type: "mcp",
          args: [],
          server: { command: "srv", args: [] },
          tool: "echo",
          raw: { type: "mcp", server: { command: "srv" }, tool: "echo" },
        },
        inputs: {},
        scopes: [],
        idempotency: { key: "k" },
      },
    });
  });

  it("rejects manifests with upstream's messages", () => {
    const base = {
      schema: "runx.tool.manifest.v1",
      name: "a.b",
      source: { type: "cli-tool", command: "x" },
    };
    const message = (doc: Record<string, JsonValue>) => toolJson(doc).error?.message;
    expect(toolJson({ ...base, source: { type: "agent" } }).error).toEqual({
      code: "validation_error",
      message: "source.type must be one of cli-tool, javascript, mcp, or a2a for tool manifests.",
    });
    expect(message({ ...base, extra: true })).toBe(
      "tool_manifest.extra is not supported; allowed fields: schema, name, version, description, source, inputs, scopes, risk, retry, idempotency, mutating, artifacts.",
    );
    expect(message({ name: "a.b", source: base.source })).toBe("schema is required");
    expect(message({ ...base, schema: "v2" })).toBe(
      "schema is invalid: unknown variant `v2`, expected `runx.tool.manifest.v1`",
    );
    expect(message({ ...base, source: { type: "cli-tool" } })).toBe("source.command is required.");
    expect(message({ ...base, source: { type: "nope" } })).toBe(
      "source.type nope is not a supported source type.",
    );
    expect(message({ schema: base.schema, source: base.source })).toBe("name is required.");
    expect(message({ ...base, scopes: ["ok", " "] })).toBe(
      "scopes must contain only non-empty scope strings",
    );
    expect(message({ ...base, retry: { max_attempts: 0 } })).toBe(
      "retry.max_attempts must be a positive integer.",
    );
    expect(message({ ...base, inputs: { a: 1 } })).toBe("inputs.a must be an object.");
    expect(message({ ...base, mutating: "yes" })).toBe("mutating must be a boolean.");
    expect(message({ ...base, artifacts: { packet: "p" } })).toBe(
      "artifacts.packet requires artifacts.wrap_as. Use named_emits for named packet outputs.",
    );
    expect(toolYaml("- a\n").error).toEqual({
      code: "parse_error",
      message: "tool_manifest: Tool manifest YAML must parse to an object.",
    });
    expect(one({ kind: "parser.validateToolManifestJson", json: "[1]" }).error).toEqual({
      code: "parse_error",
      message: "tool_manifest: Tool manifest JSON must parse to an object.",
    });
    const broken = one({ kind: "parser.validateToolManifestJson", json: "{" }).error;
    expect(broken?.code).toBe("parse_error");
    expect(broken?.message).toMatch(
      /^tool_manifest: JSON parse failed: Tool manifest JSON is invalid: /,
    );
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

  it("reports a graph source's graph in graph IR form", () => {
    const graphSkill = [
      "---",
      "name: flow",
      "source:",
      "  type: graph",
      "  graph:",
      "    name: inner",
      "    steps:",
      "      - id: a",
      "        tool: fs.read",
      "---",
      "# Flow",
      "",
    ].join("\n");
    const out = one({ kind: "parser.validateSkillMarkdown", markdown: graphSkill });
    const rawGraph = { name: "inner", steps: [{ id: "a", tool: "fs.read" }] };
    expect(out.value?.source).toEqual({
      type: "graph",
      args: [],
      raw: { type: "graph", graph: rawGraph },
      graph: {
        name: "inner",
        resultFrom: [],
        steps: [
          {
            id: "a",
            tool: "fs.read",
            inputs: {},
            context: {},
            contextEdges: [],
            scopes: [],
            mutating: false,
          },
        ],
        fanoutGroups: {},
        raw: { document: rawGraph },
      },
    });
    const broken = graphSkill.replace("      - id: a\n", "      - label: a\n");
    expect(one({ kind: "parser.validateSkillMarkdown", markdown: broken }).error).toEqual({
      code: "validation_error",
      message: "steps.0.id is required.",
    });
  });

  it("words skill rejections as upstream does", () => {
    const skill = (frontmatter: string) =>
      one({ kind: "parser.validateSkillMarkdown", markdown: `---\n${frontmatter}\n---\nbody\n` })
        .error?.message;
    expect(skill("description: d")).toBe("name is required.");
    expect(skill("name: 4")).toBe("name must be a string.");
    expect(skill("name: s\nrunx: 3")).toBe("runx must be an object when present.");
    expect(skill("name: s\nsource: 3")).toBe("source must be an object.");
    expect(skill("name: s\nsource: {type: cli-tool}")).toBe("source.command is required.");
    expect(skill("name: s\nsource: {type: graph}")).toBe("source.graph is required.");
    expect(skill("name: s\nretry: {max_attempts: 0}")).toBe(
      "retry.max_attempts must be a positive integer.",
    );
    expect(skill("name: s\nrunx:\n  artifacts: {packet: p}")).toBe(
      "runx.artifacts.packet requires runx.artifacts.wrap_as. Use named_emits for named packet outputs.",
    );
    expect(skill("name: s\ncategory: 3")).toBe("category must be a string.");
    expect(skill("name: s\ninputs:\n  a: {required: 1}")).toBe(
      "inputs.a.required must be a boolean.",
    );
    // Governance is checked before the name, as upstream does.
    expect(skill("retry: 3")).toBe("retry must be an object.");
  });

  it("reports governance in upstream's form (snake_case retry and artifact contract)", () => {
    const out = one({
      kind: "parser.validateSkillMarkdown",
      markdown:
        "---\nname: s\nretry: {max_attempts: 2}\nrunx:\n  artifacts: {emits: report, wrap_as: runx.report.v1}\n---\nbody\n",
    });
    expect(out.value).toMatchObject({
      retry: { max_attempts: 2 },
      artifacts: { emits: ["report"], wrap_as: "runx.report.v1" },
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
    // An origin without `ref` does not read as an install input, so the whole request fails.
    const noRef = evaluateParserRequest(
      JSON.stringify({
        inputs: [
          {
            kind: "parser.validateSkillInstall",
            markdown,
            origin: { source: "registry", source_label: "Registry" },
          },
        ],
        returnErrors: true,
      }),
    );
    expect(noRef).toEqual({
      status: "failure",
      error: {
        code: "invalid_input",
        message: "data did not match any variant of untagged enum ParserDocument",
      },
    });
  });
});

describe("parser eval: source, artifact contract and reflect policy inputs", () => {
  it("validates one skill source to upstream's SkillSource shape", () => {
    const source = { type: "a2a", agent_card_url: "https://a.example/card", task: "t" };
    expect(one({ kind: "parser.validateSkillSource", source })).toEqual({
      status: "success",
      value: {
        type: "a2a",
        args: [],
        agentCardUrl: "https://a.example/card",
        task: "t",
        raw: source,
      },
    });
    const graph = { name: "g", steps: [{ id: "a", tool: "fs.read" }] };
    const out = one({ kind: "parser.validateSkillSource", source: { type: "graph", graph } });
    expect(out.status).toBe("success");
    expect(out.value?.graph).toMatchObject({ name: "g", raw: { document: graph } });
    expect(
      one({ kind: "parser.validateSkillSource", source: { type: "agent-step" } }).error,
    ).toEqual({
      code: "validation_error",
      message: "source.type agent-step is not a supported source type.",
    });
    expect(
      evaluateParserRequest(JSON.stringify({ kind: "parser.validateSkillSource" })),
    ).toMatchObject({ status: "failure", error: { code: "invalid_input" } });
  });

  it("validates an artifact contract under the given field", () => {
    const contract = (artifacts: JsonValue, field?: string) =>
      one({
        kind: "parser.validateSkillArtifactContract",
        artifacts,
        ...(field === undefined ? {} : { field }),
      });
    expect(contract({ emits: "report", wrap_as: "runx.report.v1" }).value).toEqual({
      emits: ["report"],
      wrap_as: "runx.report.v1",
    });
    expect(contract({}).value).toBeNull();
    expect(contract({ packets: { plan: "runx.plan.v1" } }).error).toEqual({
      code: "validation_error",
      message: "runx.artifacts.packets requires runx.artifacts.named_emits",
    });
    expect(contract({ named_emits: { plan: " " } }, "artifacts").error?.message).toBe(
      "artifacts.named_emits.plan must be a non-empty string.",
    );
  });

  it("resolves the post-run reflect policy, defaulting to never", () => {
    const resolve = (runx?: JsonValue, field?: string) =>
      one({
        kind: "parser.resolvePostRunReflectPolicy",
        ...(runx === undefined ? {} : { runx }),
        ...(field === undefined ? {} : { field }),
      });
    expect(resolve().value).toBe("never");
    expect(resolve({ post_run: { reflect: "auto" } }).value).toBe("auto");
    expect(resolve({ post_run: { reflect: "later" } }, "runners.a.runx").error).toEqual({
      code: "validation_error",
      message: "runners.a.runx.post_run.reflect must be auto, always, or never.",
    });
    expect(resolve({ post_run: [] }).error?.message).toBe("runx.post_run must be an object.");
  });
});

describe("parser eval: requests", () => {
  it("names an unknown kind of a single input, and refuses a batch holding one", () => {
    expect(evaluateParserRequest(JSON.stringify({ kind: "parser.nope" }))).toEqual({
      status: "failure",
      error: { code: "invalid_input", message: "unsupported parser input kind 'parser.nope'" },
    });
    expect(evaluateParserRequest(JSON.stringify({ input: { kind: "parser.nope" } }))).toMatchObject(
      { error: { message: "unsupported parser input kind 'parser.nope'" } },
    );
    expect(evaluateParserRequest(JSON.stringify({ inputs: [{ kind: "parser.nope" }] }))).toEqual({
      status: "failure",
      error: {
        code: "invalid_input",
        message: "data did not match any variant of untagged enum ParserDocument",
      },
    });
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
