/**
 * Runs before every page: a visitor without a session cookie is sent to sign in (and back
 * afterwards), and every page learns its own path (server components use it to build the
 * same redirect when the API says the session expired).
 */
import { NextResponse } from "next/server";
import type { NextRequest } from "next/server";

const PUBLIC = ["/login", "/bootstrap"];

/** The API's base URL, read at request time (next.config rewrites are fixed at build time). */
function apiBase(): string {
  return (process.env.RUNX_API_URL ?? "http://127.0.0.1:4100").replace(/\/+$/, "");
}

export function proxy(request: NextRequest): NextResponse {
  const { pathname, search } = request.nextUrl;
  if (pathname.startsWith("/trpc/")) {
    // Same-origin API for the browser: cookies, Origin and CSRF header pass through.
    return NextResponse.rewrite(new URL(`${pathname}${search}`, `${apiBase()}/`));
  }
  const path = `${pathname}${search}`;
  const isPublic = PUBLIC.some((p) => pathname === p || pathname.startsWith(`${p}/`));
  if (!isPublic && request.cookies.get("runx_session") === undefined) {
    const url = request.nextUrl.clone();
    url.pathname = "/login";
    url.search = `?next=${encodeURIComponent(path)}`;
    return NextResponse.redirect(url);
  }
  const headers = new Headers(request.headers);
  headers.set("x-runx-path", path);
  return NextResponse.next({ request: { headers } });
}

export const config = {
  matcher: ["/((?!_next/|favicon\\.ico|icon\\.svg).*)"],
};
