/**
 * The server components' API client: tRPC over HTTP to RUNX_API_URL, forwarding the
 * request's cookie header so the API sees the signed-in operator. Queries only; mutations
 * come from the browser (they need the CSRF header).
 */
import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { errorInfo } from "./api-problem";
import type { ApiProblem } from "./api-problem";
import type { AppRouter } from "./api-types";
import { PATH_BASE, loginHref } from "./redirect";

export type ServerApi = ReturnType<typeof createTRPCClient<AppRouter>>;

/** The API's base URL (no trailing slash). */
export function apiBaseUrl(): string {
  return (process.env.RUNX_API_URL ?? "http://127.0.0.1:4100").replace(/\/+$/, "");
}

/** A client for this request (cookies forwarded). */
export async function serverApi(): Promise<ServerApi> {
  const h = await headers();
  const cookie = h.get("cookie");
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${apiBaseUrl()}/trpc`,
        headers: () => (cookie !== null ? { cookie } : {}),
      }),
    ],
  });
}

/** The path (with query) of the page being rendered, as the proxy recorded it. */
export async function currentPath(): Promise<string> {
  const h = await headers();
  return h.get("x-runx-path") ?? "/runs";
}

/** The HTTP status a tRPC client error carries, if any. */
export function errorStatus(error: unknown): number | null {
  if (error instanceof TRPCClientError) {
    const data = (error as TRPCClientError<AppRouter>).data;
    return typeof data?.httpStatus === "number" ? data.httpStatus : null;
  }
  return null;
}

/**
 * A loaded value, or the API's one-line reason it could not be loaded (`problem` adds the
 * codes for the page's details disclosure: components/ApiError.tsx).
 */
export type Loaded<T> = { ok: true; value: T } | { ok: false; error: string; problem: ApiProblem };

/**
 * Runs `fn` with this request's client. A 401 sends the visitor to sign in (coming back
 * here afterwards), a 404 renders the not-found page; any other failure comes back as a
 * message the page shows (production builds hide thrown server errors).
 */
export async function load<T>(fn: (api: ServerApi) => Promise<T>): Promise<Loaded<T>> {
  const api = await serverApi();
  let failure: unknown;
  try {
    return { ok: true, value: await fn(api) };
  } catch (error) {
    failure = error;
  }
  const status = errorStatus(failure);
  if (status === 401) redirect(loginHref(await currentPath(), PATH_BASE));
  if (status === 404) notFound();
  const message = failure instanceof Error ? failure.message : String(failure);
  const problem = errorInfo(failure);
  return {
    ok: false,
    error: status === null ? `The API is unreachable: ${message}` : message,
    problem,
  };
}
