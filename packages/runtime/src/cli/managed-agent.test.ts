import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { configureManagedAgent, startModelServer } from "../testing/model-server.js";
import type { ChatRequest, ModelReply, ModelServer } from "../testing/model-server.js";

const API_KEY = "sk-test-Vq3nX8pL2mR7tY9w";

let ws: Workspace;
let model: ModelServer;
let seen: ChatRequest[];
let replies: ModelReply[];

beforeEach(async () => {
  ws = makeWorkspace();
  model = await startModelServer();
  seen = model.seen;
  replies = model.replies;
  await configureManagedAgent(ws, model, API_KEY);
  expect(
    (await runx(ws, ["config", "set", "agent.api_key", "--from-stdin"], { stdin: `${API_KEY}\n` }))
      .code,
  ).toBe(0);
  ws.write("notes.md", "The rollout finished without incidents.\n");
  ws.write(
    "skills/summarize/SKILL.md",
    "---\nname: summarize\n---\nRead notes.md and return a verdict.\n",
  );
  ws.write(
    "skills/summarize/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: agent-task",
      "    agent: summarizer",
      "    task: summarize",
      "    scopes: [fs.read]",
      "    allowed_tools: [fs.read]",
      "    outputs:",
      "      verdict: string",
      "",
    ].join("\n"),
  );
});

afterEach(async () => {
  await model.close();
  ws.cleanup();
});

const message = (content: string) => ({
  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

describe("managed agent runs", () => {
  it("offers the allowed native tool, sends its result back, and seals the validated answer", async () => {
    replies.push((req) => ({
      choices: [
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_1",
                type: "function",
                function: {
                  name: req.tools?.[0]?.function.name,
                  arguments: JSON.stringify({ path: "notes.md" }),
                },
              },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    }));
    replies.push(() => message(JSON.stringify({ verdict: "healthy rollout" })));
    const r = await runx(ws, ["skill", "skills/summarize", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ status: "sealed", result: { verdict: "healthy rollout" } });
    expect(seen).toHaveLength(2);
    const toolMessage = seen[1]?.messages.find((m) => m.role === "tool");
    expect(toolMessage?.content).toContain("The rollout finished without incidents.");
    const stateBytes = ws
      .files(".runx")
      .map((f) => readFileSync(join(ws.root, f)).toString("latin1"))
      .join("");
    expect(stateBytes + r.stdout + r.stderr).not.toContain(API_KEY);
  });

  it("seals a failure receipt with a clear reason when the model's reply is malformed", async () => {
    replies.push(() => message("this is not json at all"));
    replies.push(() => message("still not json"));
    const r = await runx(ws, ["skill", "skills/summarize", "--json"]);
    expect(r.code).toBe(1);
    const env = r.json<{
      status: string;
      receipt_id: string;
      closure: { disposition: string; summary: string };
    }>();
    expect(env.status).toBe("sealed");
    expect(env.closure.disposition).toBe("failed");
    expect(env.closure.summary).toContain("AGENT_REPLY_INVALID");
    const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${env.receipt_id.slice(7)}.json`));
    expect(receipt.seal.disposition).toBe("failed");
  });
});
