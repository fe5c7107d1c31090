/**
 * `runx mcp serve`: every served skill becomes one MCP tool over the same runtime the CLI
 * uses. Packages are resolved once at start-up and their package and execution-closure digests
 * are pinned; every `tools/call` is a fresh `runSkill` bound to those digests, so it seals
 * receipts exactly as `runx skill` does. A paused run returns its requests; approvals are never
 * resolvable through MCP (they need a human `runx resume`).
 *
 * Transports: stdio (newline-delimited JSON-RPC, the SDK's framing) and streamable HTTP
 * (stateless, loopback by default, bearer token required).
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import { isIP } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Runtime } from "../create-runtime.js";
import { RuntimeError, isRuntimeError } from "../errors.js";
import { inputsJsonSchema, resolveInputs } from "../parser/inputs.js";
import type { InputDeclaration, SuppliedInput } from "../parser/inputs.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { hashCanonical } from "../receipts/canonical.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";

/** One served skill, bound at start-up. */
export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonObject;
  /** The resolved package directory (absolute); calls run this, never the original ref. */
  packageDir: string;
  runner: string;
  inputs: Readonly<Record<string, InputDeclaration>>;
  packageDigest: string;
  closureDigest: string;
}

/** Resolves the served skills and builds their tool definitions (duplicate names refused). */
export async function loadMcpTools(
  runtime: Runtime,
  refs: readonly string[],
  options: { runner?: string } = {},
): Promise<McpTool[]> {
  if (refs.length === 0) {
    throw new RuntimeError("USAGE", "runx mcp serve requires at least one skill reference.");
  }
  const tools: McpTool[] = [];
  const missing: string[] = [];
  for (const ref of refs) {
    const prep = await runtime.prepareSkill({
      ref,
      ...(options.runner !== undefined ? { runner: options.runner } : {}),
    });
    // A served call cannot stop to ask for a credential, so a declared one nothing satisfies
    // refuses the start, naming the setup, rather than failing every call later. A profile
    // that does not fit the requirement throws the resolver's own error here.
    const credential = await runtime.credentialReadiness(prep);
    if (credential?.status === "missing") {
      const first = Array.isArray(credential.setup) ? credential.setup[0] : undefined;
      const setup =
        typeof first === "string" ? first : "runx credential set <provider> --from-stdin";
      missing.push(
        `skill ${prep.pkg.name} (runner ${prep.runner.name}) needs credential '${credential.name}' for provider '${credential.provider}'\n  setup: ${setup}`,
      );
    }
    if (prep.pkg.profile === undefined && prep.pkg.graphDocumentPath === undefined) {
      throw new RuntimeError("PACKAGE_INVALID", "skill package does not declare X.yaml runners", {
        ref,
      });
    }
    const name = prep.pkg.name;
    if (tools.some((t) => t.name === name)) {
      throw new RuntimeError("USAGE", `two served skills are both named ${name}`, { ref });
    }
    tools.push({
      name,
      description: prep.pkg.description ?? `runx skill ${name}`,
      inputSchema: inputsJsonSchema(prep.runner.inputs),
      packageDir: prep.pkg.graphDocumentPath ?? prep.pkg.packageDir,
      runner: prep.runner.name,
      inputs: prep.runner.inputs,
      packageDigest: prep.packageDigest,
      closureDigest: prep.closureDigest,
    });
  }
  if (missing.length > 0) {
    throw new RuntimeError(
      "CREDENTIAL_REQUIRED",
      `runx mcp serve: a served skill's credential is not configured\n${missing.join("\n")}`,
      { skills: missing.length },
    );
  }
  return tools;
}

function invalidParams(message: string, data?: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, message, data);
}

/** Checks call arguments against the runner's declarations; malformed ones are invalid params. */
function checkArguments(tool: McpTool, args: unknown): Record<string, SuppliedInput> {
  if (args !== undefined && !isJsonObject(args)) {
    throw invalidParams(`${tool.name}: arguments must be a JSON object`);
  }
  const supplied = Object.fromEntries(
    Object.entries(args ?? {}).map(([k, value]) => [k, { value }]),
  );
  const unknown = Object.keys(supplied).filter((k) => tool.inputs[k] === undefined);
  if (unknown.length > 0) {
    // The advertised schema allows no additional properties, also for runners without inputs.
    throw invalidParams(`${tool.name}: unknown argument(s): ${unknown.join(", ")}`, { unknown });
  }
  let missing: string[];
  try {
    missing = resolveInputs(tool.inputs, supplied).missing.map((m) => m.id);
  } catch (error) {
    if (isRuntimeError(error) && error.code === "INPUT_INVALID") {
      throw invalidParams(`${tool.name}: ${error.message}`, { path: error.details.path });
    }
    throw error;
  }
  if (missing.length > 0) {
    throw invalidParams(`${tool.name}: missing required argument(s): ${missing.join(", ")}`, {
      missing,
    });
  }
  return supplied;
}

function quoted(dir: string): string {
  return `'${dir.replaceAll("'", "'\\''")}'`;
}

/** The `tools/call` result for an envelope. */
export function toolResult(
  tool: McpTool,
  envelope: SkillRunEnvelope,
  receiptDir: string | undefined,
): CallToolResult {
  const runx: Record<string, unknown> = { ...envelope };
  if (envelope.requests.length > 0) {
    runx.request_digests = Object.fromEntries(
      envelope.requests.map((r) => [r.id, hashCanonical(r)]),
    );
    const dirFlag = receiptDir !== undefined ? ` --receipt-dir ${quoted(receiptDir)}` : "";
    const text = `${tool.name} needs ${envelope.status === "needs_approval" ? "human approval" : "agent input"} at ${envelope.run_id}. Resolve ${envelope.requests.length} request(s), write answers.json, then run: runx resume ${envelope.run_id} answers.json${dirFlag}. Approvals cannot be resolved through MCP; a gate under a console approval policy is decided only in the console.`;
    return { content: [{ type: "text", text }], structuredContent: { runx }, isError: false };
  }
  const closed = envelope.status === "sealed" && envelope.closure?.disposition === "closed";
  if (closed) {
    const output = envelope.result;
    const text = JSON.stringify(output);
    return {
      content: [{ type: "text", text }],
      structuredContent: { runx, output },
      isError: false,
    };
  }
  if (envelope.closure?.disposition === "deferred") {
    return {
      content: [
        {
          type: "text",
          text: `${tool.name} is deferred at ${envelope.run_id}. Inspect receipt ${envelope.receipt_id ?? "n/a"} and reconcile provider state before retrying.`,
        },
      ],
      structuredContent: { runx },
      isError: false,
    };
  }
  const ended = envelope.closure?.disposition ?? "invalid";
  return {
    content: [
      {
        type: "text",
        text: `${tool.name} ended with ${ended}. Inspect receipt ${envelope.receipt_id ?? "n/a"}.`,
      },
    ],
    structuredContent: { runx },
    isError: true,
  };
}

/** Builds an MCP server (one per connection) whose tools run through `runtime`. */
export function buildMcpServer(
  runtime: Runtime,
  tools: readonly McpTool[],
  options: { version: string; receiptDir?: string; signal?: AbortSignal },
): Server {
  const server = new Server(
    { name: "runx-cli", version: options.version },
    { capabilities: { tools: {} } },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as { type: "object"; [key: string]: unknown },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (tool === undefined) {
      throw new McpError(ErrorCode.MethodNotFound, `tool not found: ${request.params.name}`);
    }
    const inputs = checkArguments(tool, request.params.arguments);
    let envelope: SkillRunEnvelope;
    try {
      envelope = await runtime.runSkill(
        {
          ref: tool.packageDir,
          runner: tool.runner,
          inputs,
          secretEnv: [],
          packageDigest: tool.packageDigest,
          executionClosureDigest: tool.closureDigest,
          origin: { via: "mcp" },
        },
        options.signal !== undefined ? { signal: options.signal } : {},
      );
    } catch (error) {
      // A refusal after the package resolved sealed a `blocked` receipt: name it, the way
      // the CLI's failure envelope carries `receipt_id` (upstream words it the same way).
      const receipt = isRuntimeError(error) ? error.details.receipt_id : undefined;
      const message = isRuntimeError(error)
        ? `${error.code}: ${error.located}${typeof receipt === "string" ? `; refusal receipt: ${receipt}` : ""}`
        : error instanceof Error
          ? error.message
          : String(error);
      return { content: [{ type: "text", text: message }], isError: true };
    }
    return toolResult(tool, envelope, options.receiptDir);
  });
  return server;
}

/** Serves over stdio until stdin closes or `signal` aborts. */
export async function serveStdio(
  runtime: Runtime,
  tools: readonly McpTool[],
  options: { version: string; receiptDir?: string; signal: AbortSignal },
): Promise<void> {
  const server = buildMcpServer(runtime, tools, options);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    options.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
}

/** True for loopback hosts (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  if (host === "localhost") return true;
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare) === 4) return bare.startsWith("127.");
  if (isIP(bare) === 6) return bare === "::1";
  return false;
}

/** Options of the streamable HTTP transport. */
export interface HttpServeOptions {
  version: string;
  receiptDir?: string;
  signal: AbortSignal;
  host: string;
  port: number;
  allowNonLoopback: boolean;
  /** The bearer token clients must present; generated when absent. */
  token?: string;
  log: (line: string) => void;
}

const MAX_BODY_BYTES = 4 * 1024 * 1024;

function reply(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("request body exceeds 4 MiB"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new Error("request body is not valid JSON"));
      }
    });
    req.on("error", reject);
  });
}

/**
 * Serves streamable HTTP at `/mcp` (stateless: one MCP server per request) until `signal`
 * aborts. Every request needs `Authorization: Bearer <token>`.
 */
export async function serveHttp(
  runtime: Runtime,
  tools: readonly McpTool[],
  options: HttpServeOptions,
): Promise<void> {
  if (!isLoopbackHost(options.host) && !options.allowNonLoopback) {
    throw new RuntimeError(
      "USAGE",
      `refusing to listen on non-loopback host ${options.host}; pass --allow-non-loopback to expose skills to the network`,
    );
  }
  const token = options.token ?? randomBytes(24).toString("base64url");
  const expected = Buffer.from(`Bearer ${token}`);
  const authorized = (req: IncomingMessage): boolean => {
    const given = Buffer.from(req.headers.authorization ?? "");
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/mcp") return reply(res, 404, "not found; the MCP endpoint is /mcp");
    if (!authorized(req)) return reply(res, 401, "missing or wrong bearer token");
    if (req.method !== "POST") return reply(res, 405, "this stateless server accepts POST only");
    let body: unknown;
    try {
      body = await readBody(req);
    } catch (error) {
      return reply(res, 400, error instanceof Error ? error.message : String(error));
    }
    const server = buildMcpServer(runtime, tools, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const address = http.address();
  const port = typeof address === "object" && address !== null ? address.port : options.port;
  const hostPart = options.host.includes(":") ? `[${options.host}]` : options.host;
  if (!isLoopbackHost(options.host)) {
    options.log(`runx MCP HTTP warning: listening on non-loopback host ${options.host}`);
  }
  options.log(`runx MCP HTTP listening on http://${hostPart}:${port}/mcp`);
  options.log(`runx MCP HTTP bearer token: ${token}`);
  options.log(`runx MCP HTTP requires: Authorization: Bearer ${token}`);
  await new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    else options.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await new Promise<void>((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
