/**
 * The HTTP layer: tRPC's standalone adapter behind the request guards — authentication from
 * the session cookie or a Bearer token, Origin check and double-submit CSRF on every
 * mutation (POST), and SSE for subscriptions (tRPC v11 default).
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import type { Operator, Runtime } from "@runx/runtime";
import { isRuntimeError } from "@runx/runtime";
import type { ApiEvents } from "./events.js";
import { appRouter } from "./router.js";
import {
  CSRF_COOKIE,
  CSRF_HEADER,
  SESSION_COOKIE,
  parseCookies,
  sessionCookies,
} from "./session.js";
import type { SessionKeys } from "./session.js";
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
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(
    JSON.stringify({ error: { message, code: status === 401 ? "UNAUTHORIZED" : "FORBIDDEN" } }),
  );
}

/** Resolves the caller: Bearer token first, else the session cookie. */
async function authenticate(
  req: IncomingMessage,
  opts: ApiServerOptions,
): Promise<{ operator: Operator | null; via: "token" | "session" | null; csrf: string | null }> {
  const auth = req.headers.authorization;
  if (auth !== undefined && auth.startsWith("Bearer ")) {
    try {
      return {
        operator: opts.runtime.console.operators.authenticateToken(auth.slice(7).trim()),
        via: "token",
        csrf: null,
      };
    } catch (error) {
      if (isRuntimeError(error)) return { operator: null, via: null, csrf: null };
      throw error;
    }
  }
  const jwt = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (jwt === undefined) return { operator: null, via: null, csrf: null };
  const claims = await opts.sessions.verify(jwt);
  if (claims === null) return { operator: null, via: null, csrf: null };
  try {
    return {
      operator: opts.runtime.console.operators.current(claims.operatorId),
      via: "session",
      csrf: claims.csrf,
    };
  } catch {
    return { operator: null, via: null, csrf: null };
  }
}

/** Builds (but does not start) the API server. */
export function createApiServer(opts: ApiServerOptions): Server {
  const identities = new WeakMap<IncomingMessage, Operator | null>();
  const trpc = createHTTPHandler({
    router: appRouter,
    basePath: "/trpc/",
    createContext({ req, res }): ApiContext {
      return {
        runtime: opts.runtime,
        sessions: opts.sessions,
        executor: opts.executor,
        events: opts.events,
        operator: identities.get(req) ?? null,
        setSession(session) {
          res.setHeader("set-cookie", sessionCookies(session, opts.secureCookies));
        },
      };
    },
  });
  return createServer((req, res) => {
    void (async () => {
      if (!(req.url ?? "").startsWith("/trpc/")) return refuse(res, 404, "not found");
      const who = await authenticate(req, opts);
      if (req.method === "POST") {
        // Every mutation: a cross-site Origin is refused outright; a cookie-authenticated
        // call must echo the session's CSRF token (Bearer calls carry no ambient authority).
        const origin = req.headers.origin;
        if (origin !== undefined && !opts.allowedOrigins.includes(origin)) {
          return refuse(res, 403, "cross-site request refused (Origin not allowed)");
        }
        const cookies = parseCookies(req.headers.cookie);
        if (who.via !== "token" && cookies[SESSION_COOKIE] !== undefined) {
          const header = req.headers[CSRF_HEADER];
          if (who.csrf === null || header !== who.csrf || cookies[CSRF_COOKIE] !== who.csrf) {
            return refuse(res, 403, "missing or wrong CSRF token");
          }
        }
      }
      identities.set(req, who.operator);
      trpc(req, res);
    })().catch(() => refuse(res, 500, "internal error"));
  });
}
