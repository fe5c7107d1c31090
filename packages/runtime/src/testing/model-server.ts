/**
 * A loopback OpenAI-compatible chat-completions server for managed-agent tests: it records
 * every request and answers each with the next queued reply, so a test scripts the model's
 * turns and then asserts what runx sent. `configureManagedAgent` points a workspace's runx
 * home at it the way a user would, through `runx config set`.
 */
import { createServer } from "node:http";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { runx } from "./cli.js";
import type { Workspace } from "./cli.js";

/** What runx sent to the model (the parts tests look at). */
export interface ChatRequest {
  messages: Array<{ role: string; content?: string | null; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
}

/** One scripted model turn: the response body for the request it answers. */
export type ModelReply = (request: ChatRequest) => unknown;

export interface ModelServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  /** Every request received, in order. */
  seen: ChatRequest[];
  /** Replies still to give, first first (push to script turns). */
  replies: ModelReply[];
  close(): Promise<void>;
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => resolve(text));
  });
}

/** Starts the server on a free loopback port. A request beyond the script gets an error body. */
export async function startModelServer(): Promise<ModelServer> {
  const seen: ChatRequest[] = [];
  const replies: ModelReply[] = [];
  const server = createServer((req, res) => {
    void body(req).then((text) => {
      const parsed = JSON.parse(text) as ChatRequest;
      seen.push(parsed);
      const reply = replies.shift();
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify(reply === undefined ? { error: "no more replies" } : reply(parsed)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    replies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A model turn that calls one tool (`name` as the agent sees it, e.g. `fs__read`). */
export const toolCallReply =
  (name: string, args: unknown, id = "call_1"): ModelReply =>
  () => ({
    choices: [
      {
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { id, type: "function", function: { name, arguments: JSON.stringify(args) } },
          ],
        },
        finish_reason: "tool_calls",
      },
    ],
  });

/** A model turn that answers with `value` as its JSON content. */
export const answerReply =
  (value: unknown): ModelReply =>
  () => ({
    choices: [
      { message: { role: "assistant", content: JSON.stringify(value) }, finish_reason: "stop" },
    ],
  });

/** Configures the workspace's managed agent to use `server`; throws if a command fails. */
export async function configureManagedAgent(
  ws: Workspace,
  server: ModelServer,
  apiKey: string,
): Promise<void> {
  for (const [key, value] of [
    ["agent.provider", "local"],
    ["agent.model", "test-model"],
    ["agent.base_url", server.baseUrl],
  ] as const) {
    const result = await runx(ws, ["config", "set", key, value]);
    if (result.code !== 0) throw new Error(`runx config set ${key} failed: ${result.stderr}`);
  }
  const result = await runx(ws, ["config", "set", "agent.api_key", "--from-stdin"], {
    stdin: `${apiKey}\n`,
  });
  if (result.code !== 0) throw new Error(`runx config set agent.api_key failed: ${result.stderr}`);
}
