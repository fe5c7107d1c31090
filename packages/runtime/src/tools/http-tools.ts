/**
 * `http.read` (GET batch), `http.query` (semantically read-only JSON POST batch) and
 * `http.execute` (mutation batch). Each takes 1–50 typed request records and exact
 * `allowed_hosts`; every request is admitted (scheme, credentials, host, public address)
 * and pinned. Only `http.read` follows redirects: re-sending a POST to a new location is a
 * second request, which a mutation must never make. `http.execute` is single-attempt and
 * keyed: without `idempotency_key` nothing is sent; with it, the same key and batch replay
 * the recorded outcome from `ctx.effects`, and the same key with another batch is refused.
 * Every batch answers a `runx.http.execution.v1` packet: decision `completed`, or `stopped`
 * when a response was throttled (429) or, under `stop_on_error`, did not succeed. A request
 * naming `requires_success_of` is skipped (`performed: false`) unless each named request
 * earlier in the batch succeeded. A batch whose output passes 8 MiB fails (LIMIT_EXCEEDED).
 */
import { validateToolsHttpExecuteInput } from "../generated/validate-tools-http-execute.input.js";
import { validateToolsHttpQueryInput } from "../generated/validate-tools-http-query.input.js";
import { validateToolsHttpReadInput } from "../generated/validate-tools-http-read.input.js";
import { RuntimeError } from "../errors.js";
import { compareCodePoints, hashCanonical } from "../receipts/canonical.js";
import executeInputSchema from "../../schemas/tools/http-execute.input.schema.json" with { type: "json" };
import executeOutputSchema from "../../schemas/tools/http-execute.output.schema.json" with { type: "json" };
import queryInputSchema from "../../schemas/tools/http-query.input.schema.json" with { type: "json" };
import queryOutputSchema from "../../schemas/tools/http-query.output.schema.json" with { type: "json" };
import readInputSchema from "../../schemas/tools/http-read.input.schema.json" with { type: "json" };
import readOutputSchema from "../../schemas/tools/http-read.output.schema.json" with { type: "json" };
import { inputValidator, validatedExecute } from "./ajv-input.js";
import {
  DEFAULT_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  MAX_RESPONSE_BYTES,
  MAX_TIMEOUT_MS,
  bounded,
  failureOf,
  performExchange,
  projectBody,
  redactHeaders,
  requestDigest,
} from "./http-exchange.js";
import type { ExchangeSpec, NetToolOptions } from "./http-exchange.js";
import type { Json, JsonRecord, NativeTool, ToolContext, ToolResult } from "./types.js";
import { webFetchTool } from "./web-fetch.js";
import { withNamedOutput } from "./packet.js";

type HttpToolName = "http.read" | "http.query" | "http.execute";

interface PreparedRequest {
  id: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

// The transport owns framing and encoding (it never decompresses, so bodies stay identity).
const RUNTIME_OWNED_HEADERS = new Set([
  "accept-encoding",
  "host",
  "content-length",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Cap on a batch's whole output (its response records as JSON), as upstream bounds it. */
export const MAX_BATCH_OUTPUT_BYTES = 8 * 1024 * 1024;

function invalid(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", message, { path });
}

const isRecord = (value: unknown): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Fills `{name}` placeholders, appends query parameters, checks headers, encodes the body. */
function prepareRequest(
  record: JsonRecord,
  index: number,
  methods: readonly string[],
): PreparedRequest {
  const at = `requests.${index}`;
  const id = typeof record.id === "string" ? record.id : `request-${index + 1}`;
  const method = typeof record.method === "string" ? record.method : (methods[0] ?? "GET");
  if (!methods.includes(method))
    throw invalid(`method ${method} is not allowed here`, `${at}.method`);
  const path = isRecord(record.path) ? record.path : {};
  const template = typeof record.url === "string" ? record.url : "";
  const filled = template.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    const value = path[name];
    if (value === undefined || value === null || typeof value === "object") {
      throw invalid(`no scalar value for placeholder {${name}}`, `${at}.path.${name}`);
    }
    return encodeURIComponent(String(value));
  });
  let url: URL;
  try {
    url = new URL(filled);
  } catch {
    throw invalid("is not a valid absolute URL", `${at}.url`);
  }
  if (isRecord(record.query)) {
    // Parameters are appended in code-point order of their names, so the URL (and its
    // request digest) does not depend on how the caller happened to order the mapping.
    const names = Object.keys(record.query).sort(compareCodePoints);
    for (const name of names) {
      const value = record.query[name] as Json;
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item === null || typeof item === "object") {
          throw invalid("query values must be scalars", `${at}.query.${name}`);
        }
        url.searchParams.append(name, String(item));
      }
    }
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(isRecord(record.headers) ? record.headers : {})) {
    const lower = name.toLowerCase();
    if (!TOKEN.test(name) || RUNTIME_OWNED_HEADERS.has(lower)) {
      throw invalid(`header ${name} cannot be set by a request`, `${at}.headers.${name}`);
    }
    if (typeof value !== "string" || /[\r\n\0]/.test(value)) {
      throw invalid("header values must be single-line strings", `${at}.headers.${name}`);
    }
    headers[lower] = value;
  }
  const prepared: PreparedRequest = { id, method, url: url.href, headers };
  if (Object.prototype.hasOwnProperty.call(record, "body")) {
    if (method === "GET") throw invalid("a GET request cannot carry a body", `${at}.body`);
    prepared.body = new TextEncoder().encode(JSON.stringify(record.body ?? null));
    headers["content-type"] ??= "application/json";
  }
  return prepared;
}

interface BatchPlan {
  tool: HttpToolName;
  prepared: PreparedRequest[];
  /** Per request, the ids it `requires_success_of`. */
  requires: string[][];
  digests: string[];
  batchDigest: string;
  allowedHosts: string[];
  stopOnError: boolean;
  maxResponseBytes: number;
  timeoutMs: number;
}

function planBatch(
  tool: HttpToolName,
  input: JsonRecord,
  methods: readonly string[],
  ctx: ToolContext,
): BatchPlan {
  if (input.auth !== undefined) {
    throw invalid(
      "auth bindings need credential delivery, which this runtime does not offer yet",
      "auth",
    );
  }
  const records = Array.isArray(input.requests) ? input.requests : [];
  if (records.length < 1 || records.length > 50)
    throw invalid("needs 1 to 50 requests", "requests");
  const prepared = records.map((record, index) =>
    prepareRequest(isRecord(record) ? record : {}, index, methods),
  );
  const requires = records.map((record, index) =>
    dependenciesOf(isRecord(record) ? record : {}, index),
  );
  const ids = new Set<string>();
  for (const [index, request] of prepared.entries()) {
    if (ids.has(request.id))
      throw invalid(`duplicate request id ${request.id}`, `requests.${index}.id`);
    ids.add(request.id);
  }
  const hosts = Array.isArray(input.allowed_hosts) ? input.allowed_hosts : [];
  const digests = prepared.map((request) => requestDigest(request, ctx.taint));
  return {
    tool,
    prepared,
    requires,
    digests,
    // Dependencies change what the batch does, so they are part of its identity when named.
    batchDigest: hashCanonical(
      requires.some((ids) => ids.length > 0) ? { requests: digests, requires } : digests,
    ),
    allowedHosts: hosts
      .filter((h): h is string => typeof h === "string")
      .map((h) => h.toLowerCase()),
    stopOnError: input.stop_on_error !== false,
    maxResponseBytes: bounded(input.max_response_bytes, DEFAULT_RESPONSE_BYTES, MAX_RESPONSE_BYTES),
    timeoutMs: bounded(input.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
  };
}

/** The request ids a request's `requires_success_of` names (checked before anything is sent). */
function dependenciesOf(record: JsonRecord, index: number): string[] {
  const wanted = record.requires_success_of;
  if (wanted === undefined) return [];
  if (!Array.isArray(wanted)) {
    throw invalid("must be an array of request ids", `requests.${index}.requires_success_of`);
  }
  return wanted.map((dependency, at) => {
    const id = typeof dependency === "string" ? dependency.trim() : "";
    if (id === "") {
      throw invalid(
        "must be a non-empty request id",
        `requests.${index}.requires_success_of.${at}`,
      );
    }
    return id;
  });
}

/** The response record of a request skipped because a dependency did not succeed. */
function skippedResponse(id: string, dependency: string): JsonRecord {
  return {
    id,
    performed: false,
    status: 0,
    ok: false,
    json: null,
    body: "",
    body_digest: "",
    body_bytes: 0,
    truncated: false,
    headers: {},
    skip_reason: `dependency ${JSON.stringify(dependency)} did not succeed`,
  };
}

async function runBatch(
  plan: BatchPlan,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<{ output: JsonRecord; error?: unknown; sent: number }> {
  const hostAllowed = (hostname: string, host: string): boolean =>
    plan.allowedHosts.includes(hostname.toLowerCase()) ||
    plan.allowedHosts.includes(host.toLowerCase());
  let sent = 0;
  const specs: ExchangeSpec[] = plan.prepared.map((request) => ({
    method: request.method,
    url: request.url,
    headers: request.headers,
    body: request.body,
    maxResponseBytes: plan.maxResponseBytes,
    timeoutMs: plan.timeoutMs,
    followRedirects: plan.tool === "http.read",
    hostAllowed,
    access: plan.tool === "http.execute" ? "mutate" : plan.tool === "http.query" ? "query" : "read",
    onSend: () => void sent++,
  }));
  const responses: Json[] = [];
  const succeeded = new Map<string, boolean>();
  let performed = 0;
  let outputBytes = 0;
  let stopped = false;
  let error: unknown;
  for (const [index, spec] of specs.entries()) {
    if (stopped) break;
    const request = plan.prepared[index] as PreparedRequest;
    // A dependency that did not run (or ran and failed) did not succeed.
    const dependency = (plan.requires[index] ?? []).find((id) => succeeded.get(id) !== true);
    let response: JsonRecord;
    if (dependency !== undefined) {
      response = skippedResponse(request.id, dependency);
    } else {
      try {
        const result = await performExchange(ctx, spec, options);
        const body = projectBody(result.response, ctx.taint, true);
        performed++;
        response = {
          id: request.id,
          performed: true,
          status: result.response.status,
          ok: result.response.status >= 200 && result.response.status < 300,
          json: body.json ?? null,
          body: body.json === undefined ? body.text : "",
          body_digest: body.sha256,
          body_bytes: body.bytes,
          // A response over the cap fails the call instead of being clipped.
          truncated: false,
          headers: redactHeaders(result.response.headers, ctx.taint),
        };
      } catch (caught) {
        error = caught;
        stopped = true;
        break;
      }
    }
    outputBytes += Buffer.byteLength(JSON.stringify(response));
    if (outputBytes > MAX_BATCH_OUTPUT_BYTES) {
      error = new RuntimeError(
        "LIMIT_EXCEEDED",
        `HTTP batch output exceeded ${MAX_BATCH_OUTPUT_BYTES} bytes`,
        { path: `requests.${index}`, limit: MAX_BATCH_OUTPUT_BYTES },
      );
      stopped = true;
      break;
    }
    // A throttled provider stops every batch; any other failure stops it on request.
    stopped = response.status === 429 || (plan.stopOnError && response.ok !== true);
    succeeded.set(request.id, response.ok === true);
    responses.push(response);
  }
  const output: JsonRecord = {
    schema: "runx.http.execution.v1",
    decision: stopped ? "stopped" : "completed",
    responses,
    request_count: performed,
    stopped,
  };
  if (error !== undefined) {
    const failed = failureOf(error, ctx.taint);
    if (failed.status === "failure")
      output.failure = { code: failed.code, summary: failed.summary };
  }
  return { output, error, sent };
}

function resultOf(output: JsonRecord, replayed = false): ToolResult {
  const failure = output.failure;
  if (isRecord(failure)) {
    return {
      status: "failure",
      code: typeof failure.code === "string" ? failure.code : "INTERNAL",
      summary: typeof failure.summary === "string" ? failure.summary : "",
      output,
    };
  }
  const responses = Array.isArray(output.responses) ? output.responses.length : 0;
  const decision = typeof output.decision === "string" ? output.decision : "completed";
  const summary = `${decision}: ${responses} response(s)${replayed ? " (replayed)" : ""}`;
  return { status: "success", output, summary };
}

async function executeBatch(
  tool: HttpToolName,
  methods: readonly string[],
  input: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<ToolResult> {
  let plan: BatchPlan;
  try {
    plan = planBatch(tool, input, methods, ctx);
  } catch (error) {
    return failureOf(error, ctx.taint);
  }
  if (tool !== "http.execute") return resultOf((await runBatch(plan, ctx, options)).output);

  const key = typeof input.idempotency_key === "string" ? input.idempotency_key.trim() : "";
  if (key === "") {
    return failureOf(
      new RuntimeError("IDEMPOTENCY_KEY_REQUIRED", "http.execute needs an idempotency_key"),
      ctx.taint,
    );
  }
  const ledgerKey = `http.execute:${key}`;
  try {
    const prior = await ctx.effects.lookup(ledgerKey);
    if (prior !== undefined) {
      if (prior.request_digest !== plan.batchDigest) {
        throw new RuntimeError(
          "IDEMPOTENCY_CONFLICT",
          "idempotency_key was already used for a different request batch",
        );
      }
      return resultOf(prior.output, true);
    }
    const run = await runBatch(plan, ctx, options);
    // Anything that reached the transport is an effect with a known or unknown outcome:
    // record it, so a retry with the same key replays instead of sending again.
    if (run.sent > 0) {
      await ctx.effects.record(ledgerKey, { request_digest: plan.batchDigest, output: run.output });
    }
    return resultOf(run.output);
  } catch (error) {
    return failureOf(error, ctx.taint);
  }
}

const TOOL_SPECS: ReadonlyArray<{
  name: HttpToolName;
  description: string;
  mutating: boolean;
  methods: readonly string[];
  // JSON imports of heterogeneous arrays type their gaps as `?: undefined`; narrowed below.
  inputSchema: object;
  outputSchema: object;
  validate: NativeTool["validateInput"];
}> = [
  {
    name: "http.read",
    description: "Execute a bounded allowlisted GET batch through the governed native transport.",
    mutating: false,
    methods: ["GET"],
    inputSchema: readInputSchema,
    outputSchema: readOutputSchema,
    validate: inputValidator(validateToolsHttpReadInput),
  },
  {
    name: "http.query",
    description: "Execute a bounded allowlisted semantically read-only JSON POST batch.",
    mutating: false,
    methods: ["POST"],
    inputSchema: queryInputSchema,
    outputSchema: queryOutputSchema,
    validate: inputValidator(validateToolsHttpQueryInput),
  },
  {
    name: "http.execute",
    description:
      "Execute a bounded allowlisted HTTP mutation batch once, keyed by idempotency_key.",
    mutating: true,
    methods: ["POST", "PUT", "PATCH", "DELETE"],
    inputSchema: executeInputSchema,
    outputSchema: executeOutputSchema,
    validate: inputValidator(validateToolsHttpExecuteInput),
  },
];

/** The named output of every HTTP batch tool. */
const HTTP_EXECUTION = { name: "http_execution", packet: "runx.http.execution.v1" };

/** The HTTP and web tools: http.read, http.query, http.execute, web.fetch. */
export function httpTools(options: NetToolOptions = {}): NativeTool[] {
  const batchTools = TOOL_SPECS.map((spec): NativeTool =>
    withNamedOutput(
      {
        name: spec.name,
        description: spec.description,
        mutating: spec.mutating,
        scopes: ["net:http"],
        inputSchema: spec.inputSchema as JsonRecord,
        outputSchema: spec.outputSchema as JsonRecord,
        validateInput: spec.validate,
        execute: validatedExecute(spec.name, spec.validate, (input, ctx) =>
          executeBatch(spec.name, spec.methods, input, ctx, options),
        ),
      },
      HTTP_EXECUTION,
    ),
  );
  return [...batchTools, webFetchTool(options)];
}
