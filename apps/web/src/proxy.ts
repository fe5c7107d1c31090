/**
 * Runs before every page and every `/trpc` call:
 * - a request body passes only with a known length up to MAX_TRPC_BODY_BYTES: Next buffers
 *   what a request sends (up to `experimental.proxyClientMaxBodySize`, next.config.ts) and
 *   forwards only that much, so a larger body is answered 413 here, and one without a
 *   length 411, instead of reaching the API cut short;
 * - `/trpc/*` is rewritten to the API (same-origin for the browser: cookies, Origin and the
 *   CSRF header pass through). The API throttles sign-in per client address and believes
 *   X-Forwarded-For from loopback (apps/api/src/client-address.ts): Next (16.4) sets it to
 *   the browser's socket address when a request has none and forwards one a request has
 *   unchanged, appending nothing; this file cannot see the socket address (NextRequest has
 *   no `ip`). So a reverse proxy in front must append it, and nothing may reach the console
 *   around that proxy;
 * - a visitor without a session cookie is sent to sign in (and back afterwards, to a path
 *   checked by lib/redirect.ts);
 * - every page gets a fresh script nonce and the Content Security Policy naming it
 *   (lib/security-headers.ts), and learns its own path (server components use it to build
 *   the same sign-in redirect when the API says the session expired).
 */
import { NextResponse } from "next/server";
import type { NextRequest } from "next/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { PATH_BASE, loginHref } from "@/lib/redirect";
import { MAX_TRPC_BODY_BYTES, contentSecurityPolicy, newNonce } from "@/lib/security-headers";

const PUBLIC = ["/login", "/bootstrap"];

/** The API's base URL, read at request time (next.config rewrites are fixed at build time). */
function apiBase(): string {
  return (process.env.RUNX_API_URL ?? "http://127.0.0.1:4100").replace(/\/+$/, "");
}

/**
 * A tRPC error body, like the API's own refusals (apps/api/src/server.ts): `error.code` is the
 * JSON-RPC number tRPC's client needs to read it, `error.data.code` the name.
 */
function refuse(
  status: number,
  code: "BAD_REQUEST" | "PAYLOAD_TOO_LARGE" | "LENGTH_REQUIRED",
  message: string,
): NextResponse {
  const number =
    code === "LENGTH_REQUIRED"
      ? TRPC_ERROR_CODES_BY_KEY.BAD_REQUEST
      : TRPC_ERROR_CODES_BY_KEY[code];
  return NextResponse.json(
    { error: { message, code: number, data: { code, httpStatus: status, runtimeCode: null } } },
    { status },
  );
}

/** 413 / 411 for a body the proxy will not forward, else null. */
function bodyRefusal(request: NextRequest): NextResponse | null {
  if (request.method === "GET" || request.method === "HEAD") return null;
  const length = request.headers.get("content-length");
  if (length === null) {
    if (request.headers.get("transfer-encoding") === null) return null; // no body
    return refuse(411, "LENGTH_REQUIRED", "a request body needs a Content-Length");
  }
  const bytes = Number(length);
  if (!Number.isSafeInteger(bytes) || bytes < 0) {
    return refuse(400, "BAD_REQUEST", "invalid Content-Length");
  }
  if (bytes > MAX_TRPC_BODY_BYTES) {
    return refuse(
      413,
      "PAYLOAD_TOO_LARGE",
      `request body too large: ${bytes} bytes (the console forwards at most ${MAX_TRPC_BODY_BYTES})`,
    );
  }
  return null;
}

export function proxy(request: NextRequest): NextResponse {
  const { pathname, search } = request.nextUrl;
  // Pages take no bodies (the console has no server actions or POST routes), so the cap
  // holds for every path, not only the API's.
  const refused = bodyRefusal(request);
  if (refused !== null) return refused;
  if (pathname.startsWith("/trpc/")) {
    return NextResponse.rewrite(new URL(`${pathname}${search}`, `${apiBase()}/`));
  }
  const path = `${pathname}${search}`;
  const isPublic = PUBLIC.some((p) => pathname === p || pathname.startsWith(`${p}/`));
  const nonce = newNonce();
  const csp = contentSecurityPolicy(nonce, process.env.NODE_ENV === "development");
  let response: NextResponse;
  if (!isPublic && request.cookies.get("runx_session") === undefined) {
    const url = request.nextUrl.clone();
    const target = new URL(loginHref(path, PATH_BASE), PATH_BASE);
    url.pathname = target.pathname;
    url.search = target.search;
    response = NextResponse.redirect(url);
  } else {
    const headers = new Headers(request.headers);
    headers.set("x-runx-path", path);
    // Next takes the nonce for the scripts it renders from the request's CSP header.
    headers.set("content-security-policy", csp);
    response = NextResponse.next({ request: { headers } });
  }
  response.headers.set("content-security-policy", csp);
  return response;
}

export const config = {
  matcher: ["/((?!_next/|favicon\\.ico|icon\\.svg).*)"],
};
