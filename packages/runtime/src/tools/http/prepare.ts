/**
 * Turns one request record of an HTTP batch into the request to send, as upstream runx's
 * native HTTP tools do: a required `id`, a method the tool admits (case-insensitive, default
 * GET), an HTTPS URL without credentials whose host is one of the exact `allowed_hosts`, no
 * caller-supplied `authorization` header (credentials go through `auth`), values filled from
 * earlier responses (./resolve.ts), an optional per-request `max_response_bytes` (at most
 * 8 MiB) and optional cursor `pagination`. Pure; throws RuntimeError naming the field.
 */
import { RuntimeError } from "../../errors.js";
import { compareCodePoints } from "../../receipts/canonical.js";
import type { Json, JsonRecord } from "../types.js";
import { invalid, isRecord, resolveUrlTemplate, resolveValue, scalarText } from "./resolve.js";
import type { PriorResponses } from "./resolve.js";

/** Default and maximum response cap of one request (upstream's standard 8 MiB bound). */
export const HTTP_RESPONSE_BYTES = 8 * 1024 * 1024;
/** Upstream's fixed per-request time budget. */
export const HTTP_TIMEOUT_MS = 30_000;

/** Cursor pagination of one GET request. */
export interface Pagination {
  cursorParam: string;
  cursorPath: string;
  itemsPath: string;
  maxPages: number;
  maxItems: number;
}

/** One request ready to send (the query is appended per page). */
export interface PreparedRequest {
  id: string;
  method: string;
  /** The filled URL, without the `query` parameters. */
  url: string;
  query: JsonRecord;
  headers: Record<string, string>;
  body?: Uint8Array;
  pagination?: Pagination;
  maxResponseBytes: number;
  idempotencyKey?: string;
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
const KNOWN_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);

/** The exact host names of `allowed_hosts` (lowercased, trailing dot dropped). */
export function admittedHosts(values: unknown): Set<string> {
  const hosts = new Set<string>();
  for (const [i, value] of (Array.isArray(values) ? values : []).entries()) {
    const host = typeof value === "string" ? value.trim() : "";
    if (host === "") throw invalid("must be a non-empty host name", `allowed_hosts.${i}`);
    if (/[/:*?#@]/.test(host))
      throw invalid(
        `allowed host ${JSON.stringify(host)} must be an exact hostname`,
        `allowed_hosts.${i}`,
      );
    hosts.add(host.replace(/\.$/, "").toLowerCase());
  }
  if (hosts.size === 0) throw invalid("must not be empty", "allowed_hosts");
  return hosts;
}

/** The method of a record, uppercased; refused when unknown or not admitted by the tool. */
export function methodOf(
  record: JsonRecord,
  admitted: readonly string[],
  tool: string,
  at: string,
): string {
  const raw = record.method === undefined ? "GET" : record.method;
  const method = typeof raw === "string" ? raw.toUpperCase() : "";
  if (!KNOWN_METHODS.has(method))
    throw invalid(`unsupported HTTP method ${JSON.stringify(raw)}`, `${at}.method`);
  if (!admitted.includes(method))
    throw invalid(`method ${method} is not admitted by ${tool}`, `${at}.method`);
  return method;
}

function objectField(
  record: JsonRecord,
  field: string,
  prior: PriorResponses,
  at: string,
): JsonRecord {
  const raw = record[field];
  if (raw === undefined) return {};
  const resolved = resolveValue(raw, prior, `${at}.${field}`);
  if (!isRecord(resolved)) throw invalid("must be an object", `${at}.${field}`);
  return resolved;
}

function positive(value: unknown, fallback: number, at: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw invalid("must be a positive integer", at);
  return value;
}

function paginationOf(raw: Json | undefined, at: string): Pagination | undefined {
  if (raw === undefined) return undefined;
  if (!isRecord(raw)) throw invalid("must be an object", at);
  const text = (field: string, dotPath: boolean): string => {
    const value = typeof raw[field] === "string" ? raw[field].trim() : "";
    if (value === "") throw invalid("must be a non-empty string", `${at}.${field}`);
    if (dotPath && value.split(".").some((segment) => !/^[A-Za-z0-9_-]+$/.test(segment)))
      throw invalid(
        "must be a dot path of letters, digits, underscores or hyphens",
        `${at}.${field}`,
      );
    return value;
  };
  return {
    cursorParam: text("cursor_param", false),
    cursorPath: text("cursor_path", true),
    itemsPath: text("items_path", true),
    maxPages: Math.min(positive(raw.max_pages, 10, `${at}.max_pages`), 20),
    maxItems: Math.min(positive(raw.max_items, 200, `${at}.max_items`), 10_000),
  };
}

/** Prepares request `index` of a batch against the responses recorded so far. */
export function prepareRequest(
  record: JsonRecord,
  index: number,
  context: {
    tool: string;
    methods: readonly string[];
    hosts: ReadonlySet<string>;
    prior: PriorResponses;
  },
): PreparedRequest {
  const at = `requests.${index}`;
  const id = typeof record.id === "string" ? record.id.trim() : "";
  if (id === "") throw invalid("must be a non-empty string", `${at}.id`);
  const method = methodOf(record, context.methods, context.tool, at);
  const path = objectField(record, "path", context.prior, at);
  const template = typeof record.url === "string" ? record.url.trim() : "";
  if (template === "") throw invalid("must be a non-empty string", `${at}.url`);
  let url: URL;
  try {
    url = new URL(resolveUrlTemplate(template, context.prior, path, at));
  } catch (error) {
    if (error instanceof RuntimeError) throw error;
    throw invalid(`request ${JSON.stringify(id)} has an invalid URL`, `${at}.url`);
  }
  if (url.protocol !== "https:")
    throw new RuntimeError("NETWORK_DENIED", `request ${JSON.stringify(id)} must use HTTPS`, {
      path: `${at}.url`,
      reason: "scheme",
    });
  if (url.username !== "" || url.password !== "")
    throw new RuntimeError(
      "NETWORK_DENIED",
      `request ${JSON.stringify(id)} URL must not contain credentials`,
      {
        path: `${at}.url`,
        reason: "credentials",
      },
    );
  const host = url.hostname
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
  if (!context.hosts.has(host))
    throw new RuntimeError(
      "NETWORK_DENIED",
      `request ${JSON.stringify(id)} host ${JSON.stringify(host)} is outside allowed_hosts`,
      { path: `${at}.url`, reason: "host_not_allowed", host },
    );
  const query = objectField(record, "query", context.prior, at);
  for (const [name, value] of Object.entries(query))
    if (value !== null && scalarText(value) === undefined)
      throw invalid("must be a scalar value", `${at}.query.${name}`);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(isRecord(record.headers) ? record.headers : {})) {
    const lower = name.toLowerCase();
    if (lower === "authorization")
      throw invalid(
        "request headers must not supply authorization; use the auth binding",
        `${at}.headers.${name}`,
      );
    if (!TOKEN.test(name) || RUNTIME_OWNED_HEADERS.has(lower))
      throw invalid(`header ${name} cannot be set by a request`, `${at}.headers.${name}`);
    if (typeof value !== "string" || /[\r\n\0]/.test(value))
      throw invalid("header values must be single-line strings", `${at}.headers.${name}`);
    headers[lower] = value;
  }
  const prepared: PreparedRequest = {
    id,
    method,
    url: url.href,
    query,
    headers,
    maxResponseBytes: positive(
      record.max_response_bytes,
      HTTP_RESPONSE_BYTES,
      `${at}.max_response_bytes`,
    ),
  };
  if (prepared.maxResponseBytes > HTTP_RESPONSE_BYTES)
    throw invalid(
      `max_response_bytes must not exceed ${HTTP_RESPONSE_BYTES}`,
      `${at}.max_response_bytes`,
    );
  // An explicit body (even null) is sent as JSON, on any method, as upstream does.
  if (Object.prototype.hasOwnProperty.call(record, "body")) {
    const body = resolveValue(record.body ?? null, context.prior, `${at}.body`);
    prepared.body = new TextEncoder().encode(JSON.stringify(body));
    headers["content-type"] ??= "application/json";
  }
  const pagination = paginationOf(record.pagination, `${at}.pagination`);
  if (pagination !== undefined) {
    if (method !== "GET" || prepared.body !== undefined)
      throw invalid(
        `request ${JSON.stringify(id)} pagination requires a bodyless GET`,
        `${at}.pagination`,
      );
    prepared.pagination = pagination;
  }
  if (record.idempotency_key !== undefined) {
    const key = typeof record.idempotency_key === "string" ? record.idempotency_key.trim() : "";
    // eslint-disable-next-line no-control-regex
    if (key === "" || key.length > 255 || /[\u0000-\u001f\u007f]/.test(key))
      throw invalid(
        "must be a non-empty string of at most 255 characters",
        `${at}.idempotency_key`,
      );
    prepared.idempotencyKey = key;
  }
  return prepared;
}

/** The URL of one send: the prepared URL plus `query` in code-point order of names. */
export function urlWithQuery(prepared: PreparedRequest, query: JsonRecord): string {
  const url = new URL(prepared.url);
  for (const name of Object.keys(query).sort(compareCodePoints)) {
    const value = scalarText(query[name]);
    if (value !== undefined) url.searchParams.append(name, value);
  }
  return url.href;
}
