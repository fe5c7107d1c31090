/**
 * The harness's HTTP fixture lanes: an `HttpTransport` that answers from
 * `caller.http_exchanges` and `caller.http_responses` and never opens a socket, plus a
 * resolver that never queries DNS. Only the transport is replaced: the tools still admit
 * every URL (scheme, credentials, allowed hosts, address class), prepare the request, cap
 * the response, handle redirects (only `web.fetch` follows them; `http.*` refuses them), digest
 * and redact exactly as on a live run. There is no
 * live fallback: a request no lane answers fails with FIXTURE_UNMATCHED naming the request,
 * and is logged so the harness can fail a case whose mutation went unmatched.
 *
 * Matching: exchanges first, in order, on the exact method, canonical URL and body identity
 * (`none` = no body, `{json}` = one structurally equal JSON value); each exchange answers one
 * request. Then the exact-URL response lane, which answers GET reads and semantically
 * read-only POST queries (never a mutation) as often as they are asked.
 */
import { RuntimeError } from "../../errors.js";
import { canonicalJson } from "../../receipts/canonical.js";
import type { Json } from "../types.js";
import type { ResolvedAddress, Resolver } from "./net-guard.js";
import type { HttpRequest, HttpResponse, HttpTransport } from "../types.js";

/** One canned response (body already encoded). */
export interface FixtureHttpResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** One ordered exchange: the exact request it answers and its response. */
export interface FixtureHttpExchange {
  request: { method: string; url: string; body: { kind: "none" } | { kind: "json"; value: Json } };
  response: FixtureHttpResponse;
}

/** The HTTP lanes of one harness case. URLs are canonical (`new URL(url).href`). */
export interface FixtureHttpLanes {
  responses: ReadonlyMap<string, FixtureHttpResponse>;
  exchanges: readonly FixtureHttpExchange[];
}

/** A request no lane answered. */
export interface UnmatchedHttpRequest {
  method: string;
  url: string;
  access: "read" | "query" | "mutate";
}

/** The fixture transport plus what it saw. */
export interface FixtureHttpTransport extends HttpTransport {
  /** Requests no lane answered, in order. */
  readonly unmatched: readonly UnmatchedHttpRequest[];
  /** Requests handed to this transport (answered or not). */
  readonly requestCount: number;
}

/**
 * The address every host name resolves to under the fixture lanes. It only has to pass
 * admission as publicly routable; nothing ever connects to it (the fixture transport opens
 * no socket). 192.88.99.0/24 is the retired 6to4 relay anycast block (RFC 7526).
 */
export const FIXTURE_RESOLVED_ADDRESS: ResolvedAddress = { address: "192.88.99.1", family: 4 };

/** A resolver that answers every name without a DNS query. */
export const fixtureResolver: Resolver = () => Promise.resolve([{ ...FIXTURE_RESOLVED_ADDRESS }]);

function bodyMatches(expected: FixtureHttpExchange["request"]["body"], body?: Uint8Array): boolean {
  if (expected.kind === "none") return body === undefined || body.byteLength === 0;
  if (body === undefined) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    return false;
  }
  try {
    return canonicalJson(parsed) === canonicalJson(expected.value);
  } catch {
    return false;
  }
}

function respond(req: HttpRequest, response: FixtureHttpResponse): HttpResponse {
  if (response.body.byteLength > req.maxResponseBytes) {
    throw new RuntimeError(
      "HTTP_RESPONSE_TOO_LARGE",
      `response exceeds ${req.maxResponseBytes} bytes`,
      { max_response_bytes: req.maxResponseBytes },
    );
  }
  return {
    status: response.status,
    headers: { ...response.headers },
    body: new Uint8Array(response.body),
    url: req.url,
  };
}

/** Creates the transport of one harness case's HTTP lanes. */
export function createFixtureHttpTransport(lanes: FixtureHttpLanes): FixtureHttpTransport {
  const consumed = new Set<number>();
  const unmatched: UnmatchedHttpRequest[] = [];
  let requestCount = 0;
  return {
    get unmatched() {
      return unmatched;
    },
    get requestCount() {
      return requestCount;
    },
    request(req: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
      requestCount += 1;
      if (signal.aborted) {
        return Promise.reject(
          new RuntimeError("INTERRUPTED", "request interrupted", { reason: "aborted" }),
        );
      }
      const access = req.access ?? "read";
      try {
        const index = lanes.exchanges.findIndex(
          (exchange, i) =>
            !consumed.has(i) &&
            exchange.request.method === req.method &&
            exchange.request.url === req.url &&
            bodyMatches(exchange.request.body, req.body),
        );
        const exchange = lanes.exchanges[index];
        if (exchange !== undefined) {
          consumed.add(index);
          return Promise.resolve(respond(req, exchange.response));
        }
        const legacy = lanes.responses.get(req.url);
        const legacyMethod = req.method === "GET" || (req.method === "POST" && access === "query");
        if (legacy !== undefined && legacyMethod && access !== "mutate") {
          return Promise.resolve(respond(req, legacy));
        }
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      unmatched.push({ method: req.method, url: req.url, access });
      const lane =
        access === "mutate" || !["GET", "POST"].includes(req.method)
          ? "caller.http_exchanges"
          : "caller.http_exchanges or caller.http_responses";
      return Promise.reject(
        new RuntimeError(
          "FIXTURE_UNMATCHED",
          `no fixture response for ${req.method} ${req.url} (${lane}); the harness never falls back to the network`,
          { method: req.method, url: req.url, access },
        ),
      );
    },
  };
}
