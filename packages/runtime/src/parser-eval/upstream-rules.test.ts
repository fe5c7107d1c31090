/**
 * Upstream parser rules as `runx parser eval` answers them: each case is our own input, and the
 * expected sentence or normal form is the one upstream's parser source states for that rule.
 */
import { createHash } from "node:crypto";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { describe, expect, it } from "vitest";
import type { JsonValue } from "../parser/json.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import { evaluateParserRequest } from "./eval.js";

interface Outcome {
  status: string;
  value?: Record<string, JsonValue>;
  error?: { code: string; message: string };
}

function one(input: Record<string, JsonValue>): Outcome {
  const answer = evaluateParserRequest(JSON.stringify({ inputs: [input], returnErrors: true }));
  if (answer.status !== "success") throw new Error(JSON.stringify(answer));
  return (answer.result.value as unknown as Outcome[])[0] as Outcome;
}

const skill = (frontmatter: string, mode?: string) =>
  one({
    kind: "parser.validateSkillMarkdown",
    markdown: `---\n${frontmatter}\n---\nbody\n`,
    ...(mode === undefined ? {} : { mode }),
  });
const skillError = (frontmatter: string) => skill(frontmatter).error?.message;
const source = (value: Record<string, JsonValue>) =>
  one({ kind: "parser.validateSkillSource", source: value });
const sourceError = (value: Record<string, JsonValue>) => source(value).error?.message;
const manifest = (yaml: string) => one({ kind: "parser.validateRunnerManifestYaml", yaml });
const manifestError = (yaml: string) => manifest(yaml).error?.message;

describe("upstream rules: sources", () => {
  it("words the retired http and catalog source types", () => {
    expect(sourceError({ type: "http", url: "https://x" })).toBe(
      "source.type http was removed; compose http.read, http.query, or http.execute in a graph.",
    );
    expect(sourceError({ type: "catalog", catalog_ref: "x" })).toBe(
      "source.type catalog was removed; invoke catalog tools from a graph tool step.",
    );
    expect(sourceError({ type: "harness-hook" })).toBe(
      "source.type harness-hook is not a supported source type.",
    );
  });

  it("refuses fields a source does not have, naming the allowed ones", () => {
    expect(sourceError({ type: "cli-tool", command: "node", hook: "x" })).toBe(
      "source.hook is not supported; allowed fields: act, agent, agent_card_url, agent_identity, args, arguments, command, cwd, environment, external_adapter, export, graph, input_mode, module, outputs, pages, server, task, thread_outbox_provider, timeout_seconds, tool, type.",
    );
  });

  it("keeps javascript sources pure and portable", () => {
    expect(sourceError({ type: "javascript", module: "a.mjs", command: "node", cwd: "." })).toBe(
      "javascript sources are pure domain modules and cannot declare effect or process fields: command, cwd.",
    );
    expect(sourceError({ type: "javascript", module: "../a.mjs" })).toBe(
      "source.module must be a portable relative .mjs or .js path without '.', '..', or backslash segments.",
    );
    expect(sourceError({ type: "javascript", module: "a.mjs", export: "9x" })).toBe(
      "source.export must be a JavaScript identifier.",
    );
    expect(sourceError({ type: "cli-tool", command: "node", module: "a.mjs" })).toBe(
      "source.module and source.export are only valid for javascript sources.",
    );
    expect(sourceError({ type: "javascript", module: "a.mjs", timeout_seconds: 31 })).toBe(
      "source.timeout_seconds for javascript must be between 1 and 30.",
    );
    expect(sourceError({ type: "cli-tool", command: "node", pages: {} })).toBe(
      "source.pages is only valid for deterministic javascript sources.",
    );
  });

  it("answers a javascript source with its module, export and page defaults", () => {
    const value = {
      type: "javascript",
      module: "lib/run.mjs",
      export: "main",
      pages: { path_from: "file", media_type: "application/json", framing: "json_array" },
    };
    expect(source(value).value).toEqual({
      type: "javascript",
      module: "lib/run.mjs",
      export: "main",
      args: [],
      pages: {
        path_from: "file",
        media_type: "application/json",
        framing: "json_array",
        page_bytes: 1048576,
      },
      raw: value,
    });
  });

  it("checks environment names and reports only the lists that have entries", () => {
    expect(
      sourceError({ type: "cli-tool", command: "x", environment: { required: ["RUNX_HOME"] } }),
    ).toBe(
      "source.environment.required cannot request runtime-reserved environment variable RUNX_HOME",
    );
    expect(
      sourceError({
        type: "cli-tool",
        command: "x",
        environment: { required: ["A"], optional: ["A"] },
      }),
    ).toBe('source.environment.optional repeats environment variable "A"');
    expect(
      source({ type: "cli-tool", command: "x", environment: { required: ["TOKEN"] } }).value
        ?.environment,
    ).toEqual({ required: ["TOKEN"] });
  });

  it("deserializes act declarations strictly and checks their coherence", () => {
    expect(sourceError({ type: "agent", act: { purpose: "p", color: "red" } })).toMatch(
      /^source\.act is malformed: unknown field `color`, expected one of `form`, `form_from`, /,
    );
    expect(sourceError({ type: "agent", act: { requested_scope_from: "s" } })).toBe(
      "source.act.requested_scope_from is only valid with a mint_authority directive.",
    );
    expect(
      sourceError({ type: "agent", act: { mint_authority: { source: "requested_scope" } } }),
    ).toBe("source.act.mint_authority source requested_scope requires requested_scope_from.");
  });

  it("checks thread-outbox-provider and external-adapter declarations", () => {
    expect(
      sourceError({
        type: "thread-outbox-provider",
        thread_outbox_provider: { operation: "pull", manifest_path: "m.json" },
      }),
    ).toBe("source.thread_outbox_provider.operation must be push or fetch, got 'pull'.");
    expect(
      source({
        type: "thread-outbox-provider",
        thread_outbox_provider: { operation: "push", manifest_path: "m.json" },
      }).value?.threadOutboxProvider,
    ).toEqual({ operation: "push", manifestPath: "m.json" });
    expect(
      sourceError({ type: "external-adapter", external_adapter: { manifest_path: "../m.json" } }),
    ).toBe(
      "source.external_adapter.manifest_path must be a relative path below the skill directory: '../m.json'",
    );
    expect(sourceError({ type: "external-adapter", external_adapter: {} })).toBe(
      "source.external_adapter must declare exactly one of manifest or manifest_path.",
    );
  });

  it("refuses an output declaration that is neither a type nor a field spec", () => {
    expect(sourceError({ type: "agent", outputs: { summary: "text" } })).toBe(
      "source.outputs is invalid: output declaration is invalid: data did not match any variant of untagged enum OutputField",
    );
  });
});

describe("upstream rules: SKILL.md", () => {
  it("checks the registry owner, agent tool refs and execution semantics", () => {
    expect(skillError("name: s\nregistry_owner: Acme")).toBe(
      "registry_owner must be a canonical lowercase registry namespace.",
    );
    expect(skillError("name: s\nrunx:\n  allowed_tools: [read]")).toBe(
      'runx.allowed_tools entry "read" is not an admissible agent tool ref: tool ref must include a namespace, for example fs.read.',
    );
    expect(skillError("name: s\nexecution:\n  disposition: done")).toBe(
      "execution.disposition must be one of completed, needs_agent, policy_denied, approval_required, observing, escalated.",
    );
    expect(skillError("name: s\nexecution:\n  surface_refs: {}")).toBe(
      "execution.surface_refs must be an array when present.",
    );
  });

  it("checks input declarations: fields, type, default, packet and schema", () => {
    expect(skillError("name: s\ninputs:\n  a: {type: text}")).toBe(
      "inputs.a.type must be one of array, boolean, integer, json, number, object, or string",
    );
    expect(skillError("name: s\ninputs:\n  a: {kind: x}")).toBe(
      "inputs.a.kind is not supported; allowed fields: type, required, description, default, artifact, packet, schema.",
    );
    expect(skillError("name: s\ninputs:\n  a: {type: number, default: one}")).toBe(
      "inputs.a.default must match declared type number",
    );
    expect(skillError("name: s\ninputs:\n  a: {packet: runx.plan.v1}")).toBe(
      "inputs.a.packet requires inputs.a.type to be json",
    );
    expect(skillError("name: s\ninputs:\n  a: {type: object, schema: {title: x}}")).toBe(
      "inputs.a.schema declares an object without a shape; define its properties or set additionalProperties explicitly for an intentional open object",
    );
    expect(
      skillError(
        "name: s\ninputs:\n  a:\n    type: integer\n    schema: {minimum: 2}\n    default: 1",
      ),
    ).toBe("inputs.a.default must match the declared input schema");
  });

  it("answers governance and execution with the contract types' snake_case keys", () => {
    const value = skill(
      "name: s\nretry: {}\nrunx:\n  artifacts: {named_emits: {plan: plan}, wrap_as: runx.plan.v1}\nexecution:\n  outcome_state: pending\n  input_context: {max_bytes: 10}",
    ).value;
    expect(value?.retry).toEqual({ max_attempts: 1 });
    expect(value?.artifacts).toEqual({ named_emits: { plan: "plan" }, wrap_as: "runx.plan.v1" });
    expect(value?.execution).toEqual({
      outcome_state: "pending",
      input_context: { max_bytes: 10 },
    });
  });

  it("tolerates a non-mapping runx block only in lenient mode", () => {
    expect(skillError("name: s\nrunx: 3")).toBe("runx must be an object when present.");
    const lenient = skill("name: s\nrunx: 3", "lenient");
    expect(lenient.status).toBe("success");
    expect(lenient.value && "runx" in lenient.value).toBe(false);
  });

  it("splits SKILL.md the way upstream does: the body is everything after the closing ---", () => {
    const out = one({
      kind: "parser.validateSkillMarkdown",
      markdown: "---\nname: s\n---body on the delimiter line\n",
    });
    expect(out.value?.body).toBe("body on the delimiter line\n");
    expect(out.value?.raw).toMatchObject({ rawFrontmatter: "name: s" });
  });
});

describe("upstream rules: runner manifests", () => {
  const graphRunner = (extra = "") =>
    `runners:\n  flow:\n    type: graph\n${extra}    graph:\n      name: flow\n      steps:\n        - id: a\n          tool: fs.read\n`;

  it("needs a graph runner to name its public result producers", () => {
    expect(manifestError(graphRunner())).toBe(
      "runners.flow.graph.result_from must name at least one intentional public result producer",
    );
  });

  it("refuses the retired marketplace block and unknown runner source fields", () => {
    expect(manifestError("marketplace: {}\nrunners: {}\n")).toBe(
      "runner_manifest.marketplace is not supported; allowed fields: skill, version, runx, policy, emits, catalog, credentials, input_definitions, runners, harness.",
    );
    expect(
      manifestError(
        "runners:\n  a:\n    source:\n      type: cli-tool\n      command: x\n      url: u\n",
      ),
    ).toMatch(/^runners\.a\.source\.url is not supported; allowed fields: act, /);
  });

  it("validates named credentials and the runners that reference them", () => {
    const runner = "runners:\n  a:\n    type: cli-tool\n    command: x\n    credential: gh\n";
    expect(manifestError(runner)).toBe("runners.a.credential references undeclared credential gh");
    const credentials = (env: string) =>
      `credentials:\n  gh:\n    provider: github\n    auth:\n      token:\n        delivery:\n          env: ${env}\n${runner}`;
    expect(manifestError(credentials("RUNX_TOKEN"))).toBe(
      "credentials.gh.auth.token.delivery.env cannot use reserved Runx environment variable RUNX_TOKEN",
    );
    expect(manifest(credentials("GH_TOKEN")).value?.credentials).toEqual({
      gh: { provider: "github", deliveries: { token: "GH_TOKEN" } },
    });
  });

  it("validates catalog metadata with upstream's defaults and bindings", () => {
    expect(manifestError("catalog:\n  kind: skill\nrunners: {}\n")).toBe(
      "catalog.audience is required.",
    );
    expect(
      manifestError(
        "catalog:\n  kind: skill\n  audience: public\n  role: graph-stage\nrunners: {}\n",
      ),
    ).toBe("catalog.role cannot be graph-stage when visibility is public.");
    expect(
      manifestError(
        "catalog:\n  kind: skill\n  audience: public\n  role: canonical\n  execution: read\nrunners: {}\n",
      ),
    ).toBe(
      "catalog capability metadata must declare execution, completion, requires_adapter, and approval together.",
    );
  });

  it("checks inline harness cases and their runner references", () => {
    const harness = (runner: string) =>
      `harness:\n  cases:\n    - name: c\n      runner: ${runner}\n      expect:\n        status: sealed\nrunners:\n  a:\n    type: cli-tool\n    command: x\n`;
    expect(manifestError(harness("b"))).toBe("harness.cases runner b is not declared in runners.");
    expect(manifest(harness("a")).value?.harness).toEqual({
      cases: [
        {
          name: "c",
          runner: "a",
          inputs: {},
          env: {},
          caller: { approvals: {} },
          expect: { status: "sealed", receipt: null, steps: [], output: null, step_outputs: {} },
        },
      ],
    });
    expect(
      manifestError(
        "harness:\n  cases:\n    - name: c\n      expect:\n        status: done\nrunners: {}\n",
      ),
    ).toBe(
      "harness.cases[0].expect: invalid harness fixture expect: unknown variant `done`, expected one of `sealed`, `failure`, `needs_agent`, `policy_denied`, `escalated`",
    );
  });

  it("checks runner examples against the runner's input contract", () => {
    const yaml =
      "runners:\n  a:\n    type: cli-tool\n    command: x\n    inputs:\n      count: {type: integer, required: true}\n    examples:\n      - {count: 2}\n      - {}\n";
    expect(manifestError(yaml)).toMatch(
      /^runners\.a\.examples\[1\] does not match the runner input contract: /,
    );
    expect(manifestError(yaml.replace("      - {}\n", ""))).toBeUndefined();
    expect(manifest(yaml.replace("      - {}\n", "")).value?.runners).toMatchObject({
      a: { examples: [{ count: 2 }] },
    });
  });
});

describe("upstream rules: tool manifests", () => {
  it("validates tool inputs with the shared input rules and keeps retry snake_case", () => {
    const yaml = (inputs: string) =>
      `schema: runx.tool.manifest.v1\nname: t\nsource:\n  type: cli-tool\n  command: x\nretry: {max_attempts: 2}\ninputs:\n${inputs}`;
    expect(
      one({ kind: "parser.validateToolManifestYaml", yaml: yaml("  a: {type: text}\n") }).error
        ?.message,
    ).toBe("inputs.a.type must be one of array, boolean, integer, json, number, object, or string");
    const ok = one({ kind: "parser.validateToolManifestYaml", yaml: yaml("  a: {}\n") });
    expect(ok.value?.retry).toEqual({ max_attempts: 2 });
  });
});

describe("upstream rules: graphs", () => {
  const graph = (yaml: string) => one({ kind: "parser.validateGraphYaml", yaml });
  const graphError = (yaml: string) => graph(yaml).error?.message;
  const steps = (body: string) => `name: g\nsteps:\n${body}`;

  it("checks declared result producers", () => {
    expect(graphError(`name: g\nresult_from: [b]\nsteps:\n  - id: a\n    tool: fs.read\n`)).toBe(
      "result_from.0 references unknown step 'b'.",
    );
    expect(graphError(`name: g\nresult_from: [a, a]\nsteps:\n  - id: a\n    tool: fs.read\n`)).toBe(
      "result_from contains duplicate step 'a'.",
    );
  });

  it("refuses retired bindings, doubled bindings and non-catalog tool refs", () => {
    expect(graphError(steps('  - id: a\n    tool: fs.read\n    inputs: {x: "{{ x }}"}\n'))).toBe(
      'steps.0.inputs.x uses retired graph input binding "{{ x }}"; use "$input.x".',
    );
    expect(
      graphError(
        steps(
          "  - id: a\n    tool: fs.read\n  - id: b\n    tool: fs.read\n    inputs: {x: 1}\n    context: {x: a.out}\n",
        ),
      ),
    ).toBe("steps.1 binds the same input through both inputs and context: x.");
    expect(graphError(steps("  - id: a\n    tool: read\n"))).toBe(
      'steps.0.tool "read" is not an admissible catalog tool ref: tool ref must include a namespace, for example fs.read.',
    );
    expect(graphError(steps("  - id: a\n    tool: fs.read\n    effect_family: x\n"))).toBe(
      "steps.0.effect_family is not supported; effect ownership is derived from the resolved target",
    );
  });

  it("checks inline run targets: approval control and the inline source kinds", () => {
    expect(graphError(steps("  - id: a\n    run: {type: approval, note: x}\n"))).toBe(
      "steps.0.run approval control accepts only type; unsupported fields: note",
    );
    expect(graphError(steps("  - id: a\n    run: {type: a2a, agent_card_url: u, task: t}\n"))).toBe(
      "steps.0.run.type 'a2a' is not an inline graph source; use a skill or tool target for supervised adapters",
    );
    expect(graph(steps("  - id: a\n    run: {type: approval}\n")).value?.steps).toMatchObject([
      { id: "a", run: { type: "approval" } },
    ]);
  });

  it("checks authority minting against the graph's charter", () => {
    expect(
      graphError(
        steps(
          "  - id: a\n    tool: fs.read\n    scopes: [s]\n    mint_authority: {source: static_scopes}\n",
        ),
      ),
    ).toBe("steps.0.mint_authority requires the graph to declare charter_from.");
  });

  it("answers step artifacts as the contract type and keeps a null guard value", () => {
    const value = graph(
      "name: g\npolicy:\n  guards:\n    - {step: a, field: ok, equals: null}\nsteps:\n  - id: a\n    tool: fs.read\n    artifacts: {emits: out}\n",
    ).value;
    expect(value?.policy).toEqual({ guards: [{ step: "a", field: "ok", equals: null }] });
    expect(value?.steps).toMatchObject([{ artifacts: { emits: ["out"] } }]);
  });
});

describe("upstream rules: harness fixtures and packet schemas", () => {
  it("validates a harness fixture document into upstream's normal form", () => {
    const out = one({
      kind: "parser.validateHarnessFixtureYaml",
      yaml: "name: fixture\nkind: skill\ntarget: ..\nexpect:\n  status: sealed\n",
    });
    expect(out.value).toEqual({
      name: "fixture",
      kind: "skill",
      target: "..",
      runner: null,
      setup: { receipts: [] },
      inputs: {},
      env: {},
      caller: {},
      expect: { status: "sealed", receipt: null, steps: [], output: null, step_outputs: {} },
      operator_journeys: [],
      metadata: {},
    });
    const bad = (yaml: string) =>
      one({ kind: "parser.validateHarnessFixtureYaml", yaml }).error?.message;
    expect(bad("name: f\nkind: skill\n")).toBe("harness fixture target must not be empty");
    expect(bad("name: f\nkind: mcp\ntarget: x\n")).toBe(
      "harness fixture mode mcp at kind is not yet supported by the Rust harness",
    );
    expect(bad("name: f\nkind: skill\ntarget: x\ncaller:\n  web_responses: {}\n")).toBe(
      "invalid harness fixture caller.web_responses: was renamed to caller.http_responses",
    );
    expect(bad("name: f\nkind: skill\ntarget: x\nexpect:\n  receipt:\n    skill_name: s\n")).toBe(
      "retired receipt expectation field expect.receipt.skill_name",
    );
  });

  it("parses a packet schema document: id, value and the source's sha256", () => {
    const text = '{"x-runx-packet-id":"runx.demo.v1","type":"object"}';
    const out = one({ kind: "parser.parsePacketSchemaDocument", path: "p.json", source: text });
    expect(out.value).toEqual({
      packetId: "runx.demo.v1",
      value: { "x-runx-packet-id": "runx.demo.v1", type: "object" },
      sha256: `sha256:${createHash("sha256").update(text).digest("hex")}`,
    });
    expect(
      one({ kind: "parser.parsePacketSchemaDocument", path: "p.json", source: "{}" }).value,
    ).toBeNull();
    expect(
      one({
        kind: "parser.parsePacketSchemaDocument",
        path: "p.json",
        source: '{"x-runx-packet-id":" "}',
      }).error,
    ).toEqual({
      code: "validation_error",
      message: "p.json: x-runx-packet-id must be a non-empty string",
    });
  });
});

describe("upstream rules through the built CLI", () => {
  it("answers `runx parser eval --input req.json --json` with upstream's sentences", async () => {
    const ws = makeWorkspace("runx-parser-eval-");
    try {
      const request = {
        inputs: [
          { kind: "parser.validateSkillSource", source: { type: "http", url: "https://x" } },
          {
            kind: "parser.validateSkillMarkdown",
            markdown: "---\nname: s\nretry: {max_attempts: 2}\n---\nbody\n",
          },
        ],
        returnErrors: true,
      };
      ws.write("req.json", JSON.stringify(request));
      const result = await runx(ws, ["parser", "eval", "--input", "req.json", "--json"]);
      expect(result.code).toBe(0);
      const answer = JSON.parse(result.stdout) as { result: { value: Outcome[] } };
      expect(answer.result.value[0]).toEqual({
        status: "failure",
        error: {
          code: "validation_error",
          message:
            "source.type http was removed; compose http.read, http.query, or http.execute in a graph.",
        },
      });
      expect(answer.result.value[1]?.value?.retry).toEqual({ max_attempts: 2 });
    } finally {
      rmSync(dirname(ws.root), { recursive: true, force: true });
    }
  });
});
