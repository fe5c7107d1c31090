/**
 * Local process tools (`tools/<ns>/<tool>/manifest.json`) through the built CLI: a graph step
 * and a managed agent call them under the native tools' admission (input contract, scopes,
 * containment, receipts), and `runx tool search`/`inspect` see them.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;

beforeEach(() => {
  ws = makeWorkspace("runx-local-tools-");
});
afterEach(() => ws.cleanup());

/** A tool that greets `name` and reports its cwd, so the test sees where it ran. */
const GREET_SCRIPT = [
  "const inputs = JSON.parse(process.env.RUNX_INPUTS_JSON);",
  "process.stdout.write(JSON.stringify({",
  "  message: `hello ${process.env.RUNX_INPUT_NAME}`,",
  "  punctuation: inputs.punctuation,",
  "  cwd: process.cwd(),",
  "  leaked: process.env.SECRET_TOKEN ?? null,",
  "}));",
  "",
].join("\n");

const UPPER_SCRIPT =
  "process.stdout.write(JSON.stringify({ text: process.env.RUNX_INPUT_TEXT.toUpperCase() }));\n";

function manifest(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema: "runx.tool.manifest.v1",
    name: "demo.greet",
    description: "Greets someone by name with a friendly salutation.",
    source: { type: "cli-tool", command: "node", args: ["./run.mjs"] },
    inputs: {
      name: { type: "string", required: true, description: "Who to greet." },
      punctuation: { type: "string", default: "!" },
    },
    scopes: ["demo.greet"],
    artifacts: { wrap_as: "greeting" },
    ...overrides,
  };
}

function writeTool(dir: string, doc: Record<string, unknown>, script: string): void {
  ws.write(`${dir}/manifest.json`, JSON.stringify(doc, null, 2));
  ws.write(`${dir}/run.mjs`, script);
}

/** The demo.upper tool (wrapped as `shout`) at `dir`. */
function writeUpper(dir: string): void {
  writeTool(
    dir,
    manifest({
      name: "demo.upper",
      description: "Upper-cases a text.",
      inputs: { text: { type: "string", required: true } },
      scopes: ["demo.upper"],
      artifacts: { wrap_as: "shout" },
    }),
    UPPER_SCRIPT,
  );
}

function writeGreetAndUpper(): void {
  writeTool("tools/demo/greet", manifest(), GREET_SCRIPT);
  writeUpper("tools/demo/upper");
}

function graphSkill(stepLines: string[], resultFrom = "[upper]"): void {
  ws.write("skills/flow/SKILL.md", "---\nname: flow\n---\nGreet, then shout.\n");
  ws.write(
    "skills/flow/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    graph:",
      "      name: flow",
      `      result_from: ${resultFrom}`,
      "      steps:",
      ...stepLines.map((l) => `        ${l}`),
      "",
    ].join("\n"),
  );
}

const GREET_THEN_UPPER = [
  "- id: greet",
  "  tool: demo.greet",
  "  scopes: [demo.greet]",
  "  inputs:",
  "    name: world",
  "- id: upper",
  "  tool: demo.upper",
  "  scopes: [demo.upper]",
  "  context:",
  "    text: greet.greeting.data.message",
];

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  result: Record<string, unknown>;
  closure: { disposition: string; summary?: string } | null;
  error?: { reason: string; message: string };
}

/** A graph package at `<base>/skills/flow` whose steps call `demo.greet`, then `demo.upper`. */
function packagedFlow(base: string): void {
  ws.write(`${base}/skills/flow/SKILL.md`, "---\nname: flow\n---\nGreet, then shout.\n");
  ws.write(
    `${base}/skills/flow/X.yaml`,
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    graph:",
      "      name: flow",
      "      result_from: [upper]",
      "      steps:",
      ...GREET_THEN_UPPER.map((l) => `        ${l}`),
      "harness:",
      "  cases:",
      "    - name: greets-then-shouts",
      "      expect:",
      "        status: sealed",
      "        steps: [greet, upper]",
      "",
    ].join("\n"),
  );
  // One tool beside the skills/ folder, one inside the package: both are the package's own.
  writeTool(`${base}/tools/demo/greet`, manifest(), GREET_SCRIPT);
  writeUpper(`${base}/skills/flow/tools/demo/upper`);
}

describe("a package's own local tools", () => {
  it("resolves a nested graph's tool steps against the nested package's own tools", async () => {
    // The upper tool lives only in the nested package: the outer package's roots never see it.
    ws.write("skills/inner/SKILL.md", "---\nname: inner\n---\nShout.\n");
    ws.write(
      "skills/inner/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: inner",
        "      result_from: [upper]",
        "      steps:",
        "        - id: upper",
        "          tool: demo.upper",
        "          scopes: [demo.upper]",
        "          inputs:",
        "            text: nested",
        "",
      ].join("\n"),
    );
    writeUpper("skills/inner/tools/demo/upper");
    graphSkill(["- id: nested", "  skill: ../inner", "  scopes: [demo.upper]"], "[nested]");
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.stderr).toBe("");
    const env = r.json<Envelope>();
    expect(env.error).toBeUndefined();
    expect(env.status).toBe("sealed");
    expect(JSON.stringify(env.result)).toContain("NESTED");
    expect(r.code).toBe(0);
  });

  it("finds the tools beside the package, not only the workspace's tools/", async () => {
    packagedFlow("vendor/pack");
    const r = await runx(ws, ["skill", "vendor/pack/skills/flow", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const env = r.json<Envelope>();
    expect(env.status).toBe("sealed");
    expect(env.result.shout).toEqual({ data: { text: "HELLO WORLD" } });
  });

  it("runs them from the original package when the harness runs a scratch copy", async () => {
    packagedFlow("vendor/pack");
    const r = await runx(ws, ["harness", "vendor/pack/skills/flow", "--json"]);
    expect(r.stdout).toContain('"case_names":["greets-then-shouts"]');
    expect(r.json<{ status: string; assertion_errors: string[] }>()).toMatchObject({
      status: "passed",
      assertion_errors: [],
    });
    expect(r.code).toBe(0);
  });

  it("refuses a tools/ beside the skills folder that is a link out of its project", async () => {
    packagedFlow("vendor/pack");
    const outside = join(ws.home, "elsewhere-tools");
    mkdirSync(join(outside, "demo", "greet"), { recursive: true });
    writeFileSync(join(outside, "demo", "greet", "manifest.json"), JSON.stringify(manifest()));
    writeFileSync(
      join(outside, "demo", "greet", "run.mjs"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync("ran.txt", "x");\n${GREET_SCRIPT}`,
    );
    const sibling = join(ws.root, "vendor/pack/tools");
    rmSync(sibling, { recursive: true });
    symlinkSync(outside, sibling);
    const r = await runx(ws, ["skill", "vendor/pack/skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("PATH_ESCAPE");
    expect(() => readFileSync(join(outside, "demo", "greet", "ran.txt"))).toThrow();
  });
});

describe("local tools in graph steps", () => {
  it("runs a local tool, passes its output to the next step and seals receipts", async () => {
    writeGreetAndUpper();
    graphSkill(GREET_THEN_UPPER, "[greet, upper]");
    const r = await runx(ws, ["skill", "skills/flow", "--json"], {
      env: { SECRET_TOKEN: "must-not-reach-the-tool" },
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const env = r.json<Envelope>();
    expect(env.status).toBe("sealed");
    expect(env.result.shout).toEqual({ data: { text: "HELLO WORLD" } });
    const greeting = (env.result.greeting as { data: Record<string, unknown> }).data;
    // Default applied, cwd is the tool directory, the environment is deny-by-default.
    expect(greeting).toMatchObject({ message: "hello world", punctuation: "!", leaked: null });
    expect(String(greeting.cwd)).toMatch(/tools\/demo\/greet$/);
    const receipt = JSON.parse(
      ws.read(`.runx/receipts/sha256-${env.receipt_id.slice(7)}.json`),
    ) as { seal: { disposition: string } };
    expect(receipt.seal.disposition).toBe("closed");
    const receipts = ws.files(".runx/receipts").filter((f) => /sha256-[0-9a-f]+\.json$/.test(f));
    const bodies = receipts.map((f) => ws.read(f));
    expect(bodies.some((b) => b.includes('"demo.greet"'))).toBe(true);
    expect(bodies.some((b) => b.includes('"demo.upper"'))).toBe(true);
  });

  it("finds a local tool under RUNX_TOOL_ROOTS", async () => {
    writeGreetAndUpper();
    // Move greet to an extra root outside tools/.
    writeTool("extra-tools/demo/hi", manifest({ name: "demo.hi" }), GREET_SCRIPT);
    graphSkill(
      ["- id: hi", "  tool: demo.hi", "  scopes: [demo.greet]", "  inputs:", "    name: root"],
      "[hi]",
    );
    const r = await runx(ws, ["skill", "skills/flow", "--json"], {
      env: { RUNX_TOOL_ROOTS: "extra-tools" },
    });
    expect(r.code).toBe(0);
    const greeting = (r.json<Envelope>().result.greeting as { data: Record<string, unknown> }).data;
    expect(greeting.message).toBe("hello root");
    expect(String(greeting.cwd)).toMatch(/extra-tools\/demo\/hi$/);
  });

  it("refuses a step not granted the manifest's scopes, before the tool runs", async () => {
    writeTool(
      "tools/demo/greet",
      manifest(),
      `import { writeFileSync } from "node:fs";\nwriteFileSync("ran.txt", "x");\n${GREET_SCRIPT}`,
    );
    graphSkill(
      [
        "- id: greet",
        "  tool: demo.greet",
        "  scopes: [something.else]",
        "  inputs:",
        "    name: world",
      ],
      "[greet]",
    );
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    const text = r.stdout + r.stderr;
    expect(text).toContain("POLICY_DENIED");
    expect(text).toContain("demo.greet");
    expect(ws.files("tools/demo/greet")).not.toContain("tools/demo/greet/ran.txt");
  });

  it("refuses an input that breaks the manifest's contract", async () => {
    writeGreetAndUpper();
    graphSkill(
      ["- id: greet", "  tool: demo.greet", "  scopes: [demo.greet]", "  inputs:", "    name: 7"],
      "[greet]",
    );
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(/INPUT_INVALID[^\n]*name/);
  });

  it("refuses an invalid manifest naming the file and the field", async () => {
    writeTool(
      "tools/demo/greet",
      manifest({ source: { type: "cli-tool", args: ["./run.mjs"] } }),
      GREET_SCRIPT,
    );
    graphSkill(
      [
        "- id: greet",
        "  tool: demo.greet",
        "  scopes: [demo.greet]",
        "  inputs:",
        "    name: world",
      ],
      "[greet]",
    );
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    const text = r.stdout + r.stderr;
    expect(text).toContain("TOOL_MANIFEST_INVALID");
    expect(text).toContain("tools/demo/greet/manifest.json");
    expect(text).toContain("source.command");
  });

  it("refuses retrying a mutating local tool unless its manifest declares an idempotency key", async () => {
    const steps = [
      "- id: greet",
      "  tool: demo.greet",
      "  scopes: [demo.greet]",
      "  retry:",
      "    max_attempts: 2",
      "  inputs:",
      "    name: world",
    ];
    writeTool("tools/demo/greet", manifest({ mutating: true }), GREET_SCRIPT);
    graphSkill(steps, "[greet]");
    const refused = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain("RETRY_REFUSED");
    writeTool(
      "tools/demo/greet",
      manifest({ mutating: true, idempotency: { key: "demo-greet" } }),
      GREET_SCRIPT,
    );
    const admitted = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(admitted.stdout + admitted.stderr).not.toContain("RETRY_REFUSED");
    expect(admitted.code).toBe(0);
  });

  it("refuses a local manifest that would shadow a native tool", async () => {
    writeTool("tools/data/digest", manifest({ name: "data.digest" }), GREET_SCRIPT);
    graphSkill(["- id: digest", "  tool: data.digest", "  inputs:", "    value: x"], "[digest]");
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toMatch(
      /TOOL_MANIFEST_INVALID[^\n]*tools\/data\/digest\/manifest\.json/,
    );
  });

  it("refuses a tool directory symlinked out of the workspace", async () => {
    const outside = join(ws.home, "evil", "greet");
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, "manifest.json"), JSON.stringify(manifest()));
    writeFileSync(
      join(outside, "run.mjs"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync("ran.txt", "x");\n${GREET_SCRIPT}`,
    );
    mkdirSync(join(ws.root, "tools", "demo"), { recursive: true });
    symlinkSync(outside, join(ws.root, "tools", "demo", "greet"));
    graphSkill(
      [
        "- id: greet",
        "  tool: demo.greet",
        "  scopes: [demo.greet]",
        "  inputs:",
        "    name: world",
      ],
      "[greet]",
    );
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).not.toBe(0);
    const text = r.stdout + r.stderr;
    expect(text).toContain("PATH_ESCAPE");
    expect(text).toContain("tools/demo/greet/manifest.json");
    expect(() => readFileSync(join(outside, "ran.txt"))).toThrow();
  });
});

describe("local tools for managed agents", () => {
  let server: Server;
  let seen: Array<{
    messages: Array<{ role: string; content?: string | null }>;
    tools?: Array<{ function: { name: string } }>;
  }>;
  let replies: Array<() => unknown>;

  function body(req: IncomingMessage): Promise<string> {
    return new Promise((resolve) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => resolve(text));
    });
  }

  beforeEach(async () => {
    seen = [];
    replies = [];
    server = createServer((req, res) => {
      void body(req).then((text) => {
        seen.push(JSON.parse(text) as (typeof seen)[number]);
        const reply = replies.shift();
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify(reply === undefined ? { error: "no more replies" } : reply()));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    for (const [key, value] of [
      ["agent.provider", "local"],
      ["agent.model", "test-model"],
      ["agent.base_url", `http://127.0.0.1:${port}/v1`],
    ] as const) {
      expect((await runx(ws, ["config", "set", key, value])).code).toBe(0);
    }
    expect(
      (
        await runx(ws, ["config", "set", "agent.api_key", "--from-stdin"], {
          stdin: "sk-test-local-tools-key\n",
        })
      ).code,
    ).toBe(0);
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("offers the local tool as a function and sends its output back to the model", async () => {
    writeGreetAndUpper();
    ws.write("skills/helper/SKILL.md", "---\nname: helper\n---\nGreet the user.\n");
    ws.write(
      "skills/helper/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: agent-task",
        "    agent: helper",
        "    task: greet",
        "    scopes: [demo.greet]",
        "    allowed_tools: [demo.greet]",
        "    outputs:",
        "      reply: string",
        "",
      ].join("\n"),
    );
    replies.push(() => ({
      choices: [
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: { name: "demo__greet", arguments: JSON.stringify({ name: "agent" }) },
              },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    }));
    replies.push(() => ({
      choices: [
        {
          message: { role: "assistant", content: JSON.stringify({ reply: "done" }) },
          finish_reason: "stop",
        },
      ],
    }));
    const r = await runx(ws, ["skill", "skills/helper", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Envelope>()).toMatchObject({ status: "sealed", result: { reply: "done" } });
    expect(seen[0]?.tools?.map((t) => t.function.name)).toContain("demo__greet");
    const toolMessage = seen[1]?.messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("hello agent");
  });
});

describe("runx tool search and inspect over local tools", () => {
  it("finds a local tool by description and by tag, next to native tools", async () => {
    writeGreetAndUpper();
    const byDescription = await runx(ws, ["tool", "search", "friendly salutation", "--json"]);
    expect(byDescription.code).toBe(0);
    const doc = byDescription.json<{
      results: Array<{ name: string; source: string; tags: string[] }>;
    }>();
    expect(doc.results.map((r) => r.name)).toEqual(["demo.greet"]);
    expect(doc.results[0]).toMatchObject({ source: "local", tags: ["local", "cli-tool", "demo"] });

    const byTag = await runx(ws, ["tool", "search", "cli-tool", "--json"]);
    expect(byTag.json<{ results: Array<{ name: string }> }>().results.map((r) => r.name)).toEqual([
      "demo.greet",
      "demo.upper",
    ]);

    const nativeByTag = await runx(ws, ["tool", "search", "native", "--json"]);
    const names = nativeByTag
      .json<{ results: Array<{ name: string }> }>()
      .results.map((r) => r.name);
    expect(names).toContain("fs.read");
    expect(names).not.toContain("demo.greet");
  });

  it("searches the fixture MCP catalog by tag when it is enabled", async () => {
    const r = await runx(ws, ["tool", "search", "fixture", "--json"], {
      env: { RUNX_ENABLE_FIXTURE_TOOL_CATALOG: "1" },
    });
    expect(r.code).toBe(0);
    const results = r.json<{ results: Array<{ name: string; source: string }> }>().results;
    expect(results).toContainEqual(
      expect.objectContaining({ name: "fixture.echo", source: "fixture-mcp" }),
    );
  });

  it("names a missing tool on stderr", async () => {
    const r = await runx(ws, ["tool", "inspect", "demo.missing"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("demo.missing");
  });
});
