/**
 * Runs one HTTP batch: requests in order, each prepared against the responses recorded so far
 * (so it can use their values), skipped when a `requires_success_of` dependency did not
 * succeed, paginated when it asks to be. Redirects are never followed (a 3xx is the
 * response, as upstream's transport has no redirect policy). The batch stops on HTTP 429,
 * and on any non-2xx under `stop_on_error`. Output past 8 MiB fails (LIMIT_EXCEEDED).
 */
import { RuntimeError } from "../../errors.js";
import { failureOf, performExchange, projectBody, redactHeaders } from "./http-exchange.js";
import type { NetToolOptions } from "./http-exchange.js";
import type { Json, JsonRecord, ToolContext } from "../types.js";
import {
  HTTP_RESPONSE_BYTES,
  HTTP_TIMEOUT_MS,
  admittedHosts,
  methodOf,
  prepareRequest,
  urlWithQuery,
} from "./prepare.js";
import type { Pagination, PreparedRequest } from "./prepare.js";
import { admitAuthenticatedHosts, authorizationFor, requestAuth } from "./auth.js";
import type { RequestAuth } from "./auth.js";
import { invalid, isRecord, valueAtPath } from "./resolve.js";

/** Cap on a batch's whole output (its response records as JSON), as upstream bounds it. */
export const MAX_BATCH_OUTPUT_BYTES = HTTP_RESPONSE_BYTES;

export type HttpToolName = "http.read" | "http.query" | "http.execute";

/** What a batch did: its packet, the error that ended it (if any). */
export interface BatchRun {
  output: JsonRecord;
  error?: unknown;
}

function limitExceeded(what: string, at: string): RuntimeError {
  return new RuntimeError("LIMIT_EXCEEDED", `${what} exceeded ${MAX_BATCH_OUTPUT_BYTES} bytes`, {
    path: at,
    limit: MAX_BATCH_OUTPUT_BYTES,
  });
}

/** Checks what can be checked before anything is sent: count, objects, methods, ids. */
function admitRecords(
  tool: HttpToolName,
  methods: readonly string[],
  input: JsonRecord,
): JsonRecord[] {
  const records = Array.isArray(input.requests) ? input.requests : [];
  if (records.length > 50) throw invalid("must contain no more than 50 records", "requests");
  const ids = new Set<string>();
  return records.map((record, index) => {
    if (!isRecord(record)) throw invalid("must be an object", `requests.${index}`);
    methodOf(record, methods, tool, `requests.${index}`);
    const id = typeof record.id === "string" ? record.id.trim() : "";
    if (id !== "" && ids.has(id))
      throw invalid(`duplicate request id ${JSON.stringify(id)}`, `requests.${index}.id`);
    ids.add(id);
    return record;
  });
}

/** The first `requires_success_of` id that did not succeed, if any. */
function unmetDependency(
  record: JsonRecord,
  prior: ReadonlyMap<string, JsonRecord>,
  index: number,
): string | undefined {
  const wanted = record.requires_success_of;
  if (wanted === undefined) return undefined;
  if (!Array.isArray(wanted))
    throw invalid("must be an array of request ids", `requests.${index}.requires_success_of`);
  for (const [at, dependency] of wanted.entries()) {
    const id = typeof dependency === "string" ? dependency.trim() : "";
    if (id === "")
      throw invalid(
        "must be a non-empty request id",
        `requests.${index}.requires_success_of.${at}`,
      );
    if (prior.get(id)?.ok !== true) return id;
  }
  return undefined;
}

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

async function send(
  tool: HttpToolName,
  request: PreparedRequest,
  query: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
  hosts: ReadonlySet<string>,
  auth: RequestAuth,
): Promise<JsonRecord> {
  const url = urlWithQuery(request, query);
  const authorization = authorizationFor(auth, request.method, url, ctx);
  const result = await performExchange(
    ctx,
    {
      method: request.method,
      url,
      headers:
        authorization === undefined ? request.headers : { ...request.headers, authorization },
      body: request.body,
      maxResponseBytes: request.maxResponseBytes,
      timeoutMs: HTTP_TIMEOUT_MS,
      followRedirects: false,
      hostAllowed: (hostname) => hosts.has(hostname.toLowerCase()),
      access: tool === "http.execute" ? "mutate" : tool === "http.query" ? "query" : "read",
    },
    options,
  );
  const body = projectBody(result.response, ctx.taint, true);
  return {
    id: request.id,
    performed: true,
    status: result.response.status,
    ok: result.response.status >= 200 && result.response.status < 300,
    json: body.json ?? null,
    body: body.json === undefined ? body.text : "",
    body_digest: body.sha256,
    body_bytes: body.bytes,
    // A response over its cap fails the call instead of being clipped (upstream's limited send).
    truncated: false,
    headers: redactHeaders(result.response.headers, ctx.taint),
  };
}

/** Follows `cursor_path` into `cursor_param` until no cursor, a failure, or a bound. */
async function paginate(
  send1: (query: JsonRecord) => Promise<JsonRecord>,
  request: PreparedRequest,
  pagination: Pagination,
  at: string,
): Promise<JsonRecord> {
  const query: JsonRecord = { ...request.query };
  const pages: JsonRecord[] = [];
  let bytes = 0;
  let items = 0;
  let cursor: string | undefined;
  for (let page = 0; page < pagination.maxPages; page++) {
    if (page > 0) {
      if (cursor === undefined) break;
      query[pagination.cursorParam] = cursor;
    }
    const response = await send1(query);
    bytes += Buffer.byteLength(JSON.stringify(response));
    if (bytes > MAX_BATCH_OUTPUT_BYTES) throw limitExceeded("paginated HTTP output", at);
    const found = valueAtPath(response.json, pagination.itemsPath);
    items += Array.isArray(found) ? found.length : 0;
    const next = valueAtPath(response.json, pagination.cursorPath);
    cursor = typeof next === "string" && next !== "" ? next : undefined;
    pages.push(response);
    if (
      response.ok !== true ||
      response.status === 429 ||
      cursor === undefined ||
      items >= pagination.maxItems
    )
      break;
  }
  const last = pages[pages.length - 1] as JsonRecord;
  return {
    ...last,
    page_count: pages.length,
    pages,
    item_count: items,
    next_cursor: cursor ?? null,
  };
}

/** Runs a batch; a thrown refusal before the first send is returned as `error` too. */
export async function runBatch(
  tool: HttpToolName,
  methods: readonly string[],
  input: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<BatchRun> {
  const responses: Json[] = [];
  const prior = new Map<string, JsonRecord>();
  let requestCount = 0;
  let outputBytes = 0;
  let stopped = false;
  let error: unknown;
  try {
    const auth = requestAuth(input.auth);
    const hosts = admittedHosts(input.allowed_hosts);
    admitAuthenticatedHosts(auth, hosts, ctx);
    const records = admitRecords(tool, methods, input);
    const stopOnError = input.stop_on_error !== false;
    for (const [index, record] of records.entries()) {
      if (stopped) break;
      const at = `requests.${index}`;
      const dependency = unmetDependency(record, prior, index);
      let response: JsonRecord;
      if (dependency !== undefined) {
        response = skippedResponse(
          typeof record.id === "string" ? record.id.trim() : "",
          dependency,
        );
      } else {
        const request = prepareRequest(record, index, { tool, methods, hosts, prior });
        const sendOnce = (query: JsonRecord): Promise<JsonRecord> =>
          send(tool, request, query, ctx, options, hosts, auth);
        response =
          request.pagination === undefined
            ? await sendOnce(request.query)
            : await paginate(sendOnce, request, request.pagination, at);
        requestCount += typeof response.page_count === "number" ? response.page_count : 1;
      }
      outputBytes += Buffer.byteLength(JSON.stringify(response));
      if (outputBytes > MAX_BATCH_OUTPUT_BYTES) throw limitExceeded("HTTP batch output", at);
      stopped = response.status === 429 || (stopOnError && response.ok !== true);
      prior.set(response.id as string, response);
      responses.push(response);
    }
  } catch (caught) {
    error = caught;
    stopped = true;
  }
  const output: JsonRecord = {
    schema: "runx.http.execution.v1",
    decision: stopped ? "stopped" : "completed",
    responses,
    request_count: requestCount,
    stopped,
  };
  if (error !== undefined) {
    const failed = failureOf(error, ctx.taint);
    if (failed.status === "failure")
      output.failure = { code: failed.code, summary: failed.summary };
  }
  return { output, error };
}
