import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createTaintSet } from "../redaction.js";
import type { JsonRecord, NativeTool, ToolResult } from "../tools/types.js";
import type { AgentSettings } from "./config.js";
import { runManagedAgent, toolFunctionName } from "./managed-agent.js";
import type { ManagedAgentOptions } from "./managed-agent.js";
import { buildAgentActRequest } from "./request.js";
import type { SkillContextArtifact } from "./request.js";

const API_KEY = "sk-local-test-4f9a1c2b7e";

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string; tool_call_id?: string }>;
  tools?: unknown;
  response_format?: unknown;
}
interface Recorded {
  headers: IncomingHttpHeaders;
  body: ChatBody;
}
type Reply = { status: number; body: unknown };

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((done) => (server === undefined ? done() : server.close(() => done())));
  server = undefined;
});

/** Starts an OpenAI-compatible fake on 127.0.0.1:0 that answers with `replies` in order. */
async function startModel(replies: Reply[]): Promise<{ baseUrl: string; seen: Recorded[] }> {
  const seen: Recorded[] = [];
  const srv = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
      const reply = replies[seen.length - 1] ?? { status: 500, body: { error: "no more" } };
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body));
    });
  });
  server = srv;
  await new Promise<void>((done) => srv.listen(0, "127.0.0.1", done));
  const { port } = srv.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, seen };
}

function completion(message: Record<string, unknown>, finish = "stop"): Reply {
  return {
    status: 200,
    body: {
      model: "fake-model-1",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

function toolCall(id: string, name: string, args: unknown): Reply {
  return completion(
    {
      content: null,
      tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    },
    "tool_calls",
  );
}

const fakeRead: NativeTool = {
  name: "fs.read",
  description: "Read a workspace file (fake).",
  mutating: false,
  scopes: ["fs.read"],
  inputSchema: {
    type: "object",
    required: ["path"],
    properties: { path: { type: "string" } },
    additionalProperties: false,
  },
  outputSchema: { type: "object" },
  validateInput(input) {
    const ok = typeof input === "object" && input !== null && "path" in input;
    return ok ? { ok: true } : { ok: false, path: "path", message: "is required" };
  },
  execute: () => Promise.resolve({ status: "success", output: {} }),
};

const context: SkillContextArtifact = {
  type: "runx.skill.context",
  label: "loop-operator",
  ref: "./context/loop-operator",
  digest: "sha256:feedface",
  bytes: 12,
  content: "Stop early.",
  trust: "untrusted",
};

function options(
  baseUrl: string,
  overrides: Partial<ManagedAgentOptions> = {},
): ManagedAgentOptions & { calls: Array<[string, JsonRecord]> } {
  const calls: Array<[string, JsonRecord]> = [];
  const settings: AgentSettings = {
    provider: "openai",
    model: "gpt-test",
    baseUrl,
    apiKey: API_KEY,
  };
  return {
    settings,
    request: buildAgentActRequest({
      agent: "reviewer",
      task: "review-plan",
      skill: "loop",
      skillBody: "Review the plan.",
      inputs: { objective: "ship it" },
      outputs: { decision: { type: "string" } },
      allowedTools: ["fs.read"],
      runId: "rx_1",
      currentContext: [context],
    }),
    outputs: { decision: { type: "string" } },
    tools: [fakeRead],
    callTool: (name, input): Promise<ToolResult> => {
      calls.push([name, input]);
      return Promise.resolve({ status: "success", output: { content: "PLAN: step one" } });
    },
    taint: createTaintSet(),
    timeoutMs: 5_000,
    calls,
    ...overrides,
  };
}

describe("managed agent", () => {
  it("runs a tool-call round trip and returns the validated JSON answer", async () => {
    const { baseUrl, seen } = await startModel([
      toolCall("call_1", "fs__read", { path: "plan.md" }),
      completion({ content: '```json\n{"decision": "approve"}\n```' }),
    ]);
    const opts = options(baseUrl);
    const result = await runManagedAgent(opts);
    expect(result).toEqual({
      status: "success",
      output: { decision: "approve" },
      rounds: 2,
      model: "fake-model-1",
      usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
    });
    expect(opts.calls).toEqual([["fs.read", { path: "plan.md" }]]);

    const [first, second] = seen;
    expect(first?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(first?.body.model).toBe("gpt-test");
    expect(first?.body.response_format).toEqual({ type: "json_object" });
    expect(first?.body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "fs__read",
          description: fakeRead.description,
          parameters: fakeRead.inputSchema,
        },
      },
    ]);
    const system = first?.body.messages[0]?.content;
    expect(system).toContain("Review the plan.");
    expect(system).toContain("untrusted advisory data");
    expect(system).toContain("sha256:feedface");
    expect(first?.body.messages[1]).toEqual({
      role: "user",
      content: JSON.stringify({ objective: "ship it" }),
    });
    const toolMessage = second?.body.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(JSON.parse(toolMessage?.content ?? "")).toMatchObject({
      status: "success",
      output: { content: "PLAN: step one" },
    });
  });

  it("fails with AGENT_REPLY_INVALID on a final reply that is not a JSON object", async () => {
    const { baseUrl } = await startModel([completion({ content: "I think we should approve." })]);
    const result = await runManagedAgent(options(baseUrl));
    expect(result).toMatchObject({ status: "failure", code: "AGENT_REPLY_INVALID", rounds: 1 });
  });

  it("fails with AGENT_REPLY_INVALID naming the path when the answer breaks the contract", async () => {
    const { baseUrl } = await startModel([completion({ content: '{"decision": 7}' })]);
    const result = await runManagedAgent(options(baseUrl));
    expect(result).toMatchObject({ status: "failure", code: "AGENT_REPLY_INVALID" });
    expect(result.status === "failure" && result.reason).toContain("decision");
  });

  it("never echoes the API key, even when the endpoint's error body contains it", async () => {
    const { baseUrl } = await startModel([
      { status: 401, body: { error: { message: `Incorrect API key provided: ${API_KEY}` } } },
    ]);
    const opts = options(baseUrl);
    const result = await runManagedAgent(opts);
    expect(result).toMatchObject({ status: "failure", code: "AGENT_PROVIDER_ERROR" });
    expect(JSON.stringify(result)).not.toContain(API_KEY);
    expect(JSON.stringify(result)).toContain("401");
    expect(opts.taint.taints(API_KEY)).toBe(true);
  });

  it("fails with AGENT_ROUNDS_EXCEEDED when the model still wants tools in the last round", async () => {
    const { baseUrl, seen } = await startModel([
      toolCall("c1", "fs__read", { path: "a" }),
      toolCall("c2", "fs__read", { path: "b" }),
    ]);
    const opts = options(baseUrl, { rounds: 2 });
    const result = await runManagedAgent(opts);
    expect(result).toMatchObject({ status: "failure", code: "AGENT_ROUNDS_EXCEEDED", rounds: 2 });
    expect(seen).toHaveLength(2);
    expect(opts.calls).toHaveLength(1);
  });

  it("ends the loop with the approval request when a tool needs a human decision", async () => {
    const { baseUrl } = await startModel([toolCall("c1", "fs__read", { path: "a" })]);
    const result = await runManagedAgent(
      options(baseUrl, {
        callTool: () =>
          Promise.resolve({
            status: "needs_approval",
            approval: {
              gate_id: "provider-effect:demo",
              reason: "publish",
              summary: {
                provider: "demo",
                operation: "publish",
                target: "t",
                scopes: [],
                payload_digest: "sha256:1",
                plan_digest: "sha256:2",
              },
            },
          }),
      }),
    );
    expect(result).toMatchObject({
      status: "needs_approval",
      tool: "fs.read",
      request: { id: "provider-effect:demo", kind: "approval", gate: { reason: "publish" } },
    });
  });

  it("answers unknown functions and bad arguments to the model without calling the tool", async () => {
    const { baseUrl, seen } = await startModel([
      toolCall("c1", "command__execute", { argv: ["rm"] }),
      toolCall("c2", "fs__read", { nope: 1 }),
      completion({ content: '{"decision": "hold"}' }),
    ]);
    const opts = options(baseUrl);
    const result = await runManagedAgent(opts);
    expect(result).toMatchObject({ status: "success", output: { decision: "hold" } });
    expect(opts.calls).toEqual([]);
    expect(JSON.parse(seen[1]?.body.messages.at(-1)?.content ?? "")).toMatchObject({
      code: "POLICY_DENIED",
    });
    expect(JSON.parse(seen[2]?.body.messages.at(-1)?.content ?? "")).toMatchObject({
      code: "INPUT_INVALID",
    });
  });

  it("refuses an allowed tool missing from the catalog before any model call", async () => {
    const { baseUrl, seen } = await startModel([]);
    const result = await runManagedAgent(options(baseUrl, { tools: [] }));
    expect(result).toMatchObject({ status: "failure", code: "AGENT_TOOLS_INVALID", rounds: 0 });
    expect(seen).toHaveLength(0);
  });

  it("retries once without response_format when the endpoint rejects it", async () => {
    const { baseUrl, seen } = await startModel([
      { status: 400, body: { error: { message: "response_format is not supported" } } },
      completion({ content: '{"decision": "approve"}' }),
    ]);
    const result = await runManagedAgent(options(baseUrl, { tools: [fakeRead] }));
    expect(result).toMatchObject({ status: "success", rounds: 1 });
    expect(seen[1]?.body.response_format).toBeUndefined();
  });

  it("refuses a round limit outside 1–32 and maps dotted tool names to function names", async () => {
    await expect(runManagedAgent(options("http://127.0.0.1:9/v1", { rounds: 33 }))).rejects.toThrow(
      expect.objectContaining({ code: "USAGE" }),
    );
    expect(toolFunctionName("data.read_events")).toBe("data__read_events");
  });
});
