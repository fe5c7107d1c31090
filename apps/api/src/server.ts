/**
 * The HTTP layer: tRPC's standalone adapter behind the request guards, in this order — the
 * request caps (URL length, body size while it streams, UTF-8 JSON: ./limits.ts), the Origin
 * check, authentication from a Bearer token (throttled per client address:
 * ./client-address.ts) or the session cookie
 * (whose server-side session must be live), double-submit CSRF on every mutation (POST), and
 * SSE for subscriptions (tRPC v11 default).
 *
 * A session cookie that no longer opens a session (signed with another key: an API restarted
 * without RUNX_API_SESSION_SECRET, or another install on the same host; its session signed
 * out, expired or revoked; or a CSRF cookie that is not the session's) is expired on the
 * answer, and the call goes on as anonymous: a page asks the person to sign in again instead
 * of failing. Signing in and creating the first admin use no session, so no cookie a browser
 * kept from before can stand in their way. Every refusal made here is a tRPC error body, so
 * the console's client reads its message like any other error.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { getHTTPStatusCodeFromError } from "@trpc/server/http";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import type { Operator, Runtime } from "@runx/runtime";
import { consoleInput, isRuntimeError, RuntimeError, roleAtLeast } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import {
  REQUEST_TIMEOUT_MS,
  bodyLimit,
  checkUrl,
  drainThenClose,
  namesOnly,
  readBody,
} from "./limits.js";
import type { Refusal } from "./limits.js";
import { clientAddress, trustedProxies } from "./client-address.js";
import { appRouter } from "./router.js";
import {
  CSRF_COOKIE,
  CSRF_HEADER,
  SESSION_COOKIE,
  parseCookies,
  sessionCookies,
} from "./session.js";
import type { SessionKeys } from "./session.js";
import { authThrottle } from "./throttle.js";
import type { AuthThrottle } from "./throttle.js";
import { toTrpcError } from "./errors.js";
import { SESSION_ENDED } from "./trpc.js";
import type { ApiContext, RunExecutor } from "./trpc.js";

/** What the server needs. */
export interface ApiServerOptions {
  runtime: Runtime;
  sessions: SessionKeys;
  executor: RunExecutor;
  events: ApiEvents;
  /** Origins allowed to call mutations with cookies (the console's origin). */
  allowedOrigins: readonly string[];
  /** Mark cookies Secure (behind HTTPS). */
  secureCookies: boolean;
  /** Throttling of credential guessing (default: in-process, logging to `log`). */
  throttle?: AuthThrottle;
  /** The API's log (one line per call; throttling blocks are logged here). */
  log?: (line: string) => void;
  /** Peers whose X-Forwarded-For names the client (default: none, the socket peer is). */
  trustedProxies?: readonly string[];
}

/**
 * A refusal answered before tRPC, in tRPC's error body: `error.code` is the JSON-RPC number
 * (tRPC's client refuses any other body as "Unable to transform response from server"),
 * `error.data.code` the name. A name tRPC has no number for (URI_TOO_LONG) goes as BAD_REQUEST's.
 */
function refuse(
  res: ServerResponse,
  status: number,
  code: string,
  message: string,
  extra: { runtimeCode?: string; retryAfterSeconds?: number; close?: boolean } = {},
): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  if (extra.retryAfterSeconds !== undefined) {
    res.setHeader("retry-after", String(extra.retryAfterSeconds));
  }
  // The rest of an unread body is read and dropped, up to a bound, and then the connection is
  // cut. Not `Connection: close`: Node would reset the socket as soon as the answer is out,
  // and a client still sending would get the reset before it reads the answer.
  if (extra.close === true) drainThenClose(res.req);
  const number =
    code in TRPC_ERROR_CODES_BY_KEY
      ? TRPC_ERROR_CODES_BY_KEY[code as TRPC_ERROR_CODE_KEY]
      : TRPC_ERROR_CODES_BY_KEY.BAD_REQUEST;
  res.end(
    JSON.stringify({
      error: {
        message,
        code: number,
        data: { code, httpStatus: status, runtimeCode: extra.runtimeCode ?? null, path: null },
      },
    }),
  );
}

const refuseCap = (res: ServerResponse, r: Refusal) =>
  refuse(res, r.status, r.code, r.message, { close: true });

/** Who a request comes from. */
interface Caller {
  operator: Operator | null;
  via: "token" | "session" | null;
  sessionId: string | null;
  csrf: string | null;
  /** It came with a session cookie that opens no session (see the top of this file). */
  sessionEnded: boolean;
}

const ANONYMOUS: Caller = {
  operator: null,
  via: null,
  sessionId: null,
  csrf: null,
  sessionEnded: false,
};
const ENDED: Caller = { ...ANONYMOUS, sessionEnded: true };

/** Procedures that start a session: they ignore whatever session cookie the browser has. */
const SIGN_IN = new Set(["auth.login", "auth.bootstrap"]);

/**
 * Resolves the caller: Bearer token first (throttled per client address: RATE_LIMITED while
 * blocked, before the token is looked up), else the session cookie, whose session must be
 * live in the state store (not signed out, not revoked, its operator enabled).
 */
async function authenticate(
  req: IncomingMessage,
  opts: ApiServerOptions,
  throttle: AuthThrottle,
  address: string,
): Promise<Caller> {
  const auth = req.headers.authorization;
  if (auth !== undefined && auth.startsWith("Bearer ")) {
    throttle.check("api-token", address);
    try {
      return {
        operator: await opts.runtime.console.operators.authenticateToken(auth.slice(7).trim()),
        via: "token",
        sessionId: null,
        csrf: null,
        sessionEnded: false,
      };
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      if (error.code === "UNAUTHENTICATED") throttle.failed("api-token", address);
      return ANONYMOUS;
    }
  }
  const jwt = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (jwt === undefined) return ANONYMOUS;
  const claims = await opts.sessions.verify(jwt);
  if (claims === null) return ENDED;
  try {
    return {
      operator: await opts.runtime.console.operators.sessionOperator(
        claims.sessionId,
        claims.operatorId,
      ),
      via: "session",
      sessionId: claims.sessionId,
      csrf: claims.csrf,
      sessionEnded: false,
    };
  } catch (error) {
    if (isRuntimeError(error) && error.code === "UNAUTHENTICATED") return ENDED;
    throw error;
  }
}

/** Where the streamed evidence bundle of a run is served. */
const BUNDLE_PATH = "/bundle/";

function badRunRef(): RuntimeError {
  return new RuntimeError("INPUT_INVALID", "the run id in the path is not valid", {
    path: "runId",
  });
}

/** Builds (but does not start) the API server. */
export function createApiServer(opts: ApiServerOptions): Server {
  const log = opts.log ?? (() => undefined);
  const throttle = opts.throttle ?? authThrottle(log);
  const identities = new WeakMap<IncomingMessage, Caller>();
  const isTrusted = trustedProxies(opts.trustedProxies ?? []);
  const addressOf = (req: IncomingMessage) =>
    clientAddress(req.socket.remoteAddress, req.headers["x-forwarded-for"], isTrusted);
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/trpc/",
    createContext({ req, res }): ApiContext {
      const who = identities.get(req) ?? ANONYMOUS;
      return {
        runtime: opts.runtime,
        sessions: opts.sessions,
        executor: opts.executor,
        events: opts.events,
        operator: who.operator,
        sessionId: who.sessionId,
        sessionEnded: who.sessionEnded,
        clientAddress: addressOf(req),
        throttle,
        setSession(session) {
          res.setHeader("set-cookie", sessionCookies(session, opts.secureCookies));
        },
      };
    },
    responseMeta({ data }) {
      // A throttled call says when to try again.
      for (const item of data) {
        const after = "error" in item ? item.error.data?.retryAfterSeconds : undefined;
        if (typeof after === "number") return { headers: { "retry-after": String(after) } };
      }
      return {};
    },
  });
  /**
   * `GET /bundle/<run-id>`: the run's evidence bundle written as the runtime produces it
   * (console/evidence-bundle.ts), so neither the API nor the console holds a large run's
   * bundle whole. Viewers and above; the same errors as `receipts.bundle`.
   */
  const streamBundle = async (res: ServerResponse, url: string, who: Caller): Promise<void> => {
    if (who.operator === null) {
      return refuse(res, 401, "UNAUTHORIZED", who.sessionEnded ? SESSION_ENDED : "sign in first");
    }
    if (!roleAtLeast(who.operator.role, "viewer")) {
      return refuse(res, 403, "FORBIDDEN", "the evidence bundle needs the viewer role");
    }
    let pieces: AsyncGenerator<string>;
    let first: IteratorResult<string>;
    try {
      const raw = url.slice(BUNDLE_PATH.length).split("?")[0] ?? "";
      const { runId } = consoleInput("run-ref", { runId: decodeURIComponent(raw) });
      pieces = opts.runtime.console.evidence.bundleText(runId);
      // The first piece comes after the run's graph is walked: an unknown run is refused
      // before any of the answer is sent.
      first = await pieces.next();
    } catch (error) {
      const trpcError = toTrpcError(error instanceof URIError ? badRunRef() : error);
      const cause = trpcError.cause;
      return refuse(res, getHTTPStatusCodeFromError(trpcError), trpcError.code, trpcError.message, {
        ...(isRuntimeError(cause) ? { runtimeCode: cause.code } : {}),
      });
    }
    res.statusCode = 200;
    res.setHeader("content-type", "application/json; charset=utf-8");
    res.setHeader("cache-control", "no-store");
    for (let next = first; next.done !== true; next = await pieces.next()) {
      // Backpressure: a slow download holds the walk, not the bundle in memory.
      if (!res.write(next.value)) await new Promise((resolve) => res.once("drain", resolve));
      if (res.destroyed) return void (await pieces.return(undefined));
    }
    res.end();
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    // JSON only, on every answer (refusals included): never sniffed as another type, never
    // rendered, never framed (the console sends its own page policy, apps/web/src/proxy.ts).
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("content-security-policy", "default-src 'none'; frame-ancestors 'none'");
    res.setHeader("x-frame-options", "DENY");
    void (async () => {
      const url = req.url ?? "";
      const bundle = url.startsWith(BUNDLE_PATH);
      if (!url.startsWith("/trpc/") && !bundle) return refuse(res, 404, "NOT_FOUND", "not found");
      if (bundle && req.method !== "GET") {
        return refuse(res, 405, "METHOD_NOT_SUPPORTED", "use GET for the evidence bundle", {
          close: true,
        });
      }
      if (req.method !== "GET" && req.method !== "HEAD" && req.method !== "POST") {
        // tRPC reads a body for any other method, past the caps below.
        return refuse(res, 405, "METHOD_NOT_SUPPORTED", "use GET for queries, POST for mutations", {
          close: true,
        });
      }
      const badUrl = checkUrl(url);
      if (badUrl !== null) return refuseCap(res, badUrl);
      if (req.method === "POST") {
        // Every mutation: a cross-site Origin is refused outright, before its body is read.
        const origin = req.headers.origin;
        if (origin !== undefined && !opts.allowedOrigins.includes(origin)) {
          return refuse(res, 403, "FORBIDDEN", "cross-site request refused (Origin not allowed)", {
            close: true,
          });
        }
        const body = await readBody(req, bodyLimit(url));
        if ("refused" in body) return refuseCap(res, body.refused);
        (req as IncomingMessage & { body?: string }).body = body.text;
      }
      let who: Caller = ANONYMOUS;
      try {
        if (!namesOnly(url, SIGN_IN)) who = await authenticate(req, opts, throttle, addressOf(req));
      } catch (error) {
        if (isRuntimeError(error) && error.code === "RATE_LIMITED") {
          return refuse(res, 429, "TOO_MANY_REQUESTS", error.message, {
            runtimeCode: error.code,
            retryAfterSeconds: error.details.retryAfterSeconds as number,
          });
        }
        throw error;
      }
      if (req.method === "POST") {
        // A call authenticated by a live session cookie must echo the session's CSRF token.
        // Bearer calls carry no ambient authority, and neither does a cookie whose session
        // has ended or does not verify: such a call is anonymous (401 on anything that needs
        // an operator), like one without cookies.
        const cookies = parseCookies(req.headers.cookie);
        if (who.via === "session") {
          if (who.csrf === null || cookies[CSRF_COOKIE] !== who.csrf) {
            // The browser's CSRF cookie is not this session's (left from another session or
            // install): the pair can never pass again, so the session ends in this browser.
            who = ENDED;
          } else if (req.headers[CSRF_HEADER] !== who.csrf) {
            return refuse(
              res,
              403,
              "FORBIDDEN",
              "the request did not carry this session's CSRF token; reload the page and try again",
            );
          }
        }
      }
      if (who.sessionEnded) res.setHeader("set-cookie", sessionCookies(null, opts.secureCookies));
      if (bundle) return streamBundle(res, url, who);
      identities.set(req, who);
      trpc(req, res);
    })().catch(() => {
      if (!res.headersSent) refuse(res, 500, "INTERNAL_SERVER_ERROR", "internal error");
      else res.end();
    });
  };
  const server = createServer(handle);
  // `Expect: 100-continue`: a declared body over the cap is refused before the client sends it.
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    if (Number(req.headers["content-length"] ?? "0") > bodyLimit(req.url ?? "")) {
      return refuse(res, 413, "PAYLOAD_TOO_LARGE", "the request body is too large", {
        close: true,
      });
    }
    res.writeContinue();
    handle(req, res);
  });
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  return server;
}
