/**
 * The live HTTP transport (node:http / node:https). One request per call, no connection
 * pooling, no automatic redirects (a 3xx is returned to the tool, which re-admits the next
 * hop), and hard limits: the exchange is aborted when `timeoutMs` elapses or the response
 * grows past `maxResponseBytes`. The connection goes to the address admission checked
 * (`pinned`), with Host and TLS SNI still naming the host, so DNS cannot be rebound between
 * the check and the connect. A request that arrives without a pin is admitted here first.
 * A safe read that answers 429/502/503/504 is retried (http/safe-read-retry.ts).
 */
import type { LookupAddress, LookupOptions } from "node:dns";
import { request as httpRequest } from "node:http";
import type { IncomingMessage, RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { RuntimeError, isRuntimeError } from "../../errors.js";
import { sendWithSafeReadRetries } from "./safe-read-retry.js";
import { admitUrl } from "./net-guard.js";
import type { ResolvedAddress, Resolver } from "./net-guard.js";
import type { HttpRequest, HttpResponse, HttpTransport } from "../types.js";

/** An HTTP request that already passed admission, with the address to connect to. */
export interface PinnedHttpRequest extends HttpRequest {
  pinned?: ResolvedAddress;
}

/** Options of the live transport (used only for requests that arrive without a pin). */
export interface HttpTransportOptions {
  allowPrivateNetwork?: boolean;
  resolver?: Resolver;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** A `lookup` that answers every query with the pinned address. */
function pinnedLookup(pinned: ResolvedAddress): RequestOptions["lookup"] {
  return (_hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    if (options.all === true) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
}

/** Joins repeated response headers into one lowercase-named record. */
function collectHeaders(raw: readonly string[]): Record<string, string> {
  // A null prototype keeps a hostile `__proto__` header an ordinary entry.
  const headers = Object.create(null) as Record<string, string>;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? "").toLowerCase();
    const value = raw[i + 1] ?? "";
    headers[name] = Object.prototype.hasOwnProperty.call(headers, name)
      ? `${headers[name]}, ${value}`
      : value;
  }
  return headers;
}

function transportError(error: unknown): RuntimeError {
  if (isRuntimeError(error)) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code ?? "unknown";
  return new RuntimeError("HTTP_FAILED", `request failed (${code})`, { reason: "transport", code });
}

function send(
  req: HttpRequest,
  pinned: ResolvedAddress,
  signal: AbortSignal,
): Promise<HttpResponse> {
  const url = new URL(req.url);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const secure = url.protocol === "https:";
  const headers: Record<string, string> = { ...req.headers };
  if (req.body !== undefined) headers["content-length"] = String(req.body.byteLength);
  const options: RequestOptions & { servername?: string } = {
    method: req.method,
    host: hostname,
    port: url.port === "" ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers,
    agent: false,
    lookup: pinnedLookup(pinned),
  };
  if (secure && isIP(hostname) === 0) options.servername = hostname;

  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: RuntimeError | undefined, response?: HttpResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      if (error !== undefined) {
        outgoing.destroy();
        reject(error);
      } else if (response !== undefined) resolve(response);
    };
    const onAbort = (): void =>
      finish(new RuntimeError("INTERRUPTED", "request interrupted", { reason: "aborted" }));
    const timer = setTimeout(
      () =>
        finish(
          new RuntimeError("HTTP_TIMEOUT", `no complete response within ${req.timeoutMs} ms`, {
            timeout_ms: req.timeoutMs,
          }),
        ),
      req.timeoutMs,
    );
    const tooLarge = (): RuntimeError =>
      new RuntimeError(
        "HTTP_RESPONSE_TOO_LARGE",
        `response exceeds ${req.maxResponseBytes} bytes`,
        { max_response_bytes: req.maxResponseBytes },
      );

    const onResponse = (res: IncomingMessage): void => {
      const declared = Number(res.headers["content-length"] ?? Number.NaN);
      if (Number.isFinite(declared) && declared > req.maxResponseBytes) {
        finish(tooLarge());
        return;
      }
      const chunks: Buffer[] = [];
      let total = 0;
      res.on("data", (chunk: Buffer) => {
        total += chunk.byteLength;
        if (total > req.maxResponseBytes) finish(tooLarge());
        else chunks.push(chunk);
      });
      res.on("error", (error) => finish(transportError(error)));
      res.on("end", () =>
        finish(undefined, {
          status: res.statusCode ?? 0,
          headers: collectHeaders(res.rawHeaders),
          body: new Uint8Array(Buffer.concat(chunks, total)),
          url: req.url,
        }),
      );
    };

    const outgoing = (secure ? httpsRequest : httpRequest)(options, onResponse);
    outgoing.on("error", (error) => finish(transportError(error)));
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    outgoing.end(req.body === undefined ? undefined : Buffer.from(req.body));
  });
}

/** Creates the live transport: pinned connections, hard time and size limits, no redirects. */
export function createHttpTransport(options: HttpTransportOptions = {}): HttpTransport {
  return {
    async request(req: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
      let pinned = (req as PinnedHttpRequest).pinned;
      if (pinned === undefined) {
        const admitted = await admitUrl(req.url, {
          allowPrivateNetwork: options.allowPrivateNetwork ?? false,
          resolver: options.resolver,
        });
        pinned = admitted.pinned;
      }
      const address = pinned;
      return sendWithSafeReadRetries(req, signal, (attempt, abort) =>
        send(attempt, address, abort),
      );
    },
  };
}
