/**
 * The governed exchange shared by http.* and web.fetch: admit the URL, send through
 * `ctx.http` pinned to the admitted address, follow redirects manually (GET only, at most
 * five hops, each hop re-admitted and credentials dropped across origins), then project the
 * response for output with secrets removed. Digests commit to what is stored: the response
 * body is taint-redacted before it is hashed, and request digests never include raw
 * credential header values.
 */
import { performance } from "node:perf_hooks";
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { REDACTION_MARKER } from "../../redaction.js";
import type { TaintSet } from "../../redaction.js";
import { hashCanonical, sha256Prefixed } from "../../receipts/canonical.js";
import type { PinnedHttpRequest } from "./http-transport.js";
import { admitUrl } from "./net-guard.js";
import type { Resolver } from "./net-guard.js";
import type { HttpResponse, Json, JsonRecord, ToolContext, ToolResult } from "../types.js";

/** Redirects followed before the exchange fails. */
export const MAX_REDIRECTS = 5;
/** Default and maximum response caps (bytes). */
export const DEFAULT_RESPONSE_BYTES = 1024 * 1024;
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
/** Default and maximum time budgets (ms), covering every redirect hop. */
export const DEFAULT_TIMEOUT_MS = 30_000;
export const MAX_TIMEOUT_MS = 120_000;

/** Options shared by the network tools. */
export interface NetToolOptions {
  /** Name resolution used by admission (tests inject one; default: the system resolver). */
  resolver?: Resolver;
}

/** Header names whose values are credentials regardless of the taint set. */
const SENSITIVE_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "set-cookie2",
  "x-api-key",
  "x-auth-token",
]);
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** One exchange to perform. */
export interface ExchangeSpec {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: Uint8Array;
  maxResponseBytes: number;
  timeoutMs: number;
  followRedirects: boolean;
  hostAllowed: (hostname: string, host: string) => boolean;
  /** What the tool declares the request to be (see `HttpRequest.access`); default `read`. */
  access?: "read" | "query" | "mutate";
  /** Called right before each hop is handed to the transport (an effect may follow). */
  onSend?: () => void;
}

/** One redirect hop that was followed. */
export interface RedirectHop {
  status: number;
  from: string;
  to: string;
}

/** What came back, and from where. */
export interface ExchangeResult {
  response: HttpResponse;
  finalUrl: string;
  redirects: number;
  /** The followed hops in order (`redirects` of them). */
  hops: RedirectHop[];
}

/** Performs one governed exchange; throws RuntimeError (NETWORK_DENIED, HTTP_*, INTERRUPTED). */
export async function performExchange(
  ctx: ToolContext,
  spec: ExchangeSpec,
  options: NetToolOptions,
): Promise<ExchangeResult> {
  const deadline = performance.now() + spec.timeoutMs;
  let url = spec.url;
  let headers = { ...spec.headers };
  const hops: RedirectHop[] = [];
  for (let redirects = 0; ; redirects++) {
    const admitted = await admitUrl(url, {
      allowPrivateNetwork: ctx.allowPrivateNetwork,
      resolver: ctx.resolver ?? options.resolver,
      hostAllowed: spec.hostAllowed,
    });
    const remaining = Math.ceil(deadline - performance.now());
    if (remaining <= 0) {
      throw new RuntimeError("HTTP_TIMEOUT", `no complete response within ${spec.timeoutMs} ms`, {
        timeout_ms: spec.timeoutMs,
      });
    }
    const request: PinnedHttpRequest = {
      method: spec.method,
      url: admitted.url.href,
      headers,
      body: spec.body,
      maxResponseBytes: spec.maxResponseBytes,
      timeoutMs: remaining,
      pinned: admitted.pinned,
      access: spec.access ?? "read",
    };
    spec.onSend?.();
    const response = await ctx.http.request(request, ctx.signal);
    const location = headerValue(response.headers, "location");
    if (
      !spec.followRedirects ||
      !REDIRECT_STATUSES.has(response.status) ||
      location === undefined
    ) {
      return { response, finalUrl: admitted.url.href, redirects, hops };
    }
    if (redirects >= MAX_REDIRECTS) {
      throw new RuntimeError("HTTP_FAILED", `more than ${MAX_REDIRECTS} redirects`, {
        reason: "redirect_limit",
      });
    }
    let next: URL;
    try {
      next = new URL(location, admitted.url);
    } catch {
      throw new RuntimeError("HTTP_FAILED", "redirect location is not a valid URL", {
        reason: "redirect_location",
      });
    }
    if (next.origin !== admitted.url.origin) headers = withoutSensitiveHeaders(headers);
    hops.push({ status: response.status, from: admitted.url.href, to: next.href });
    url = next.href;
  }
}

/** Case-insensitive header lookup. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() === wanted) return value;
  return undefined;
}

function withoutSensitiveHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => !SENSITIVE_HEADERS.has(name.toLowerCase())),
  );
}

/**
 * Whether a response header name carries credential material; such headers are left out of
 * outputs entirely (names are compared lowercased).
 */
export function sensitiveHeaderName(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    SENSITIVE_HEADERS.has(lower) ||
    lower.includes("token") ||
    lower.includes("secret") ||
    lower.includes("api-key")
  );
}

/**
 * Response headers for output: credential headers dropped, names lowercased, tainted values
 * replaced by the redaction marker.
 */
export function redactHeaders(
  headers: Record<string, string>,
  taint: TaintSet,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(headers)) {
    if (sensitiveHeaderName(rawName)) continue;
    const name = taint.redactText(rawName.toLowerCase());
    Object.defineProperty(out, name, {
      value: taint.taints(value) ? REDACTION_MARKER : value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/** The digest of a request as sent, without raw credential header values. */
export function requestDigest(
  spec: Pick<ExchangeSpec, "method" | "url" | "headers" | "body">,
  taint: TaintSet,
): string {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.headers)) {
    const lower = name.toLowerCase();
    headers[lower] = SENSITIVE_HEADERS.has(lower) ? REDACTION_MARKER : taint.redactText(value);
  }
  return hashCanonical({
    method: spec.method,
    url: taint.redactText(spec.url),
    headers,
    body_sha256: spec.body === undefined ? null : sha256Prefixed(taint.redactBytes(spec.body)),
  });
}

/** The response body prepared for output: redacted text, parsed JSON when it is JSON. */
export interface BodyProjection {
  contentType: string | null;
  text: string;
  json: Json | undefined;
  bytes: number;
  sha256: string;
}

function decode(bytes: Uint8Array, contentType: string | null): string {
  const charset = /charset=["']?([\w.:-]+)/i.exec(contentType ?? "")?.[1] ?? "utf-8";
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return new TextDecoder("utf-8").decode(bytes);
  }
}

/**
 * Redacts the body first, then hashes what is stored, so the digest never commits a delivered
 * secret and matches the body a reader sees. With `anyJson` every body
 * that parses as JSON is JSON (the http.* batch tools); otherwise only bodies that declare or
 * look like a JSON document are parsed.
 */
export function projectBody(
  response: HttpResponse,
  taint: TaintSet,
  anyJson = false,
): BodyProjection {
  const contentType = headerValue(response.headers, "content-type") ?? null;
  const redacted = taint.redactBytes(response.body);
  const raw = decode(response.body, contentType);
  let json: Json | undefined;
  const looksJson = anyJson || /\bjson\b/i.test(contentType ?? "") || /^\s*[[{]/.test(raw);
  if (looksJson) {
    try {
      json = taint.redactJson(JSON.parse(raw)) as Json;
    } catch {
      json = undefined;
    }
  }
  return {
    contentType,
    text: taint.redactText(raw),
    json,
    bytes: response.body.byteLength,
    sha256: sha256Prefixed(redacted),
  };
}

/** Converts a thrown error into a tool failure with its code; unknown errors become INTERNAL. */
export function failureOf(error: unknown, taint: TaintSet, output?: JsonRecord): ToolResult {
  const code = isRuntimeError(error) ? error.code : "INTERNAL";
  const message = isRuntimeError(error) ? error.message : "unexpected error";
  const summary = taint.redactText(message);
  return output === undefined
    ? { status: "failure", code, summary }
    : { status: "failure", code, summary, output };
}

/** Bounds a caller-chosen limit to `[1, max]`, using `fallback` when absent. */
export function bounded(value: unknown, fallback: number, max: number): number {
  return typeof value === "number" && Number.isFinite(value)
    ? Math.min(Math.max(Math.floor(value), 1), max)
    : fallback;
}
