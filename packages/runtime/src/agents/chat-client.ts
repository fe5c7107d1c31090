/**
 * A minimal OpenAI-compatible chat-completions client for the managed agent. One call per
 * round; bounded in time and response size; redirects are refused so the bearer token only
 * ever reaches the configured origin. Every error message passes through the caller's taint
 * set (which holds the API key) and quotes at most 200 characters of what the server said.
 */
import { RuntimeError } from "../errors.js";
import type { TaintSet } from "../redaction.js";
import type { JsonRecord } from "../tools/types.js";

/** One function call the model asked for. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A chat message as the API takes it. */
export type ChatMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };

/** A function tool offered to the model. */
export interface ChatTool {
  type: "function";
  function: { name: string; description: string; parameters: JsonRecord };
}

/** Token counts as reported by the endpoint (summed over rounds by the caller). */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The parts of one completion the agent loop uses. */
export interface ChatReply {
  content: string | null;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
  model: string | null;
  usage: ChatUsage | null;
}

/** Connection settings of a chat client. */
export interface ChatClientOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutMs: number;
  taint: TaintSet;
  signal?: AbortSignal;
}

/** One completion request. */
export type ChatCompletion = (messages: ChatMessage[], tools: ChatTool[]) => Promise<ChatReply>;

/** Quoted server text is cut to this many characters. */
export const EXCERPT_CHARS = 200;
/** Replies larger than this are refused. */
const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** A redacted single-line excerpt of at most 200 characters. */
export function excerpt(text: string, taint: TaintSet): string {
  const flat = taint.redactText(text).replace(/\s+/g, " ").trim();
  return flat.length > EXCERPT_CHARS ? `${flat.slice(0, EXCERPT_CHARS)}…` : flat;
}

function providerError(message: string, taint: TaintSet, status?: number): RuntimeError {
  return new RuntimeError(
    "AGENT_PROVIDER_ERROR",
    taint.redactText(message),
    status === undefined ? {} : { status },
  );
}

async function readCapped(response: Response): Promise<string> {
  if (response.body === null) return "";
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel();
      throw new RuntimeError("AGENT_PROVIDER_ERROR", "the model endpoint's reply exceeds 8 MiB");
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** The `error.message` of an OpenAI-style error body, else the body itself. */
function serverMessage(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === "object" && parsed !== null && "error" in parsed) {
      const error: unknown = parsed.error;
      if (typeof error === "string") return error;
      if (typeof error === "object" && error !== null && "message" in error) {
        if (typeof error.message === "string") return error.message;
      }
    }
  } catch {
    // not JSON: quote the text
  }
  return body;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function toolCallsOf(value: unknown): ChatToolCall[] | undefined {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return undefined;
  const calls: ChatToolCall[] = [];
  for (const item of value) {
    const call = asRecord(item);
    const fn = asRecord(call?.function);
    if (typeof call?.id !== "string" || typeof fn?.name !== "string") return undefined;
    const args = typeof fn.arguments === "string" ? fn.arguments : "{}";
    calls.push({ id: call.id, type: "function", function: { name: fn.name, arguments: args } });
  }
  return calls;
}

function usageOf(value: unknown): ChatUsage | null {
  const usage = asRecord(value);
  if (usage === undefined) return null;
  const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
  return {
    prompt_tokens: n(usage.prompt_tokens),
    completion_tokens: n(usage.completion_tokens),
    total_tokens: n(usage.total_tokens),
  };
}

function parseReply(body: string): ChatReply {
  const invalid = (why: string): never => {
    throw new RuntimeError("AGENT_REPLY_INVALID", `the model endpoint's reply ${why}`);
  };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return invalid("is not JSON");
  }
  const root = asRecord(parsed);
  const choices = root?.choices;
  const choice = Array.isArray(choices) ? asRecord(choices[0]) : undefined;
  const message = asRecord(choice?.message);
  if (root === undefined || message === undefined) return invalid("has no message");
  const toolCalls = toolCallsOf(message.tool_calls);
  if (toolCalls === undefined) return invalid("has malformed tool calls");
  return {
    content: typeof message.content === "string" ? message.content : null,
    toolCalls,
    finishReason: typeof choice?.finish_reason === "string" ? choice.finish_reason : null,
    model: typeof root.model === "string" ? root.model : null,
    usage: usageOf(root.usage),
  };
}

/** Creates the completion function for one agent run. */
export function createChatCompletion(options: ChatClientOptions): ChatCompletion {
  const { taint } = options;
  const url = `${options.baseUrl.replace(/\/+$/, "")}/chat/completions`;
  // Servers that reject `response_format` get one retry without it, then never see it again.
  let jsonMode = true;

  const post = async (
    payload: Record<string, unknown>,
  ): Promise<{ status: number; body: string }> => {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal =
      options.signal === undefined ? timeout : AbortSignal.any([options.signal, timeout]);
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(payload),
        redirect: "error",
        signal,
      });
      return { status: response.status, body: await readCapped(response) };
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      if (options.signal?.aborted === true) {
        throw new RuntimeError("INTERRUPTED", "the managed agent was interrupted");
      }
      if (timeout.aborted) {
        throw providerError(
          `the model endpoint did not answer within ${Math.round(options.timeoutMs / 1000)} s`,
          taint,
        );
      }
      const cause = (error as { cause?: { code?: unknown } }).cause?.code;
      const why = typeof cause === "string" ? cause : "network error";
      throw providerError(`the model endpoint could not be reached (${why})`, taint);
    }
  };

  return async (messages, tools) => {
    const payload = (withJson: boolean): Record<string, unknown> => {
      const body: Record<string, unknown> = { model: options.model, messages };
      if (tools.length > 0) {
        body.tools = tools;
        body.tool_choice = "auto";
      }
      if (withJson) body.response_format = { type: "json_object" };
      return body;
    };
    let reply = await post(payload(jsonMode));
    if (jsonMode && reply.status === 400 && /response_format|json_object/i.test(reply.body)) {
      jsonMode = false;
      reply = await post(payload(false));
    }
    if (reply.status < 200 || reply.status > 299) {
      const said = excerpt(serverMessage(reply.body), taint);
      throw providerError(
        `the model endpoint answered HTTP ${reply.status}${said === "" ? "" : `: ${said}`}`,
        taint,
        reply.status,
      );
    }
    return parseReply(reply.body);
  };
}
