/**
 * The browser's API client: same-origin `/trpc` (the console proxies it to the API).
 * Every request carries `x-csrf-token` from the readable `runx_csrf` cookie (the API
 * checks it on every mutation); subscriptions use SSE.
 */
import { createTRPCClient, httpLink, httpSubscriptionLink, splitLink } from "@trpc/client";
import { errorInfo } from "./api-problem";
import type { AppRouter } from "./api-types";

export { errorInfo } from "./api-problem";
export type { ApiProblem } from "./api-problem";

/** Reads one cookie of this origin. */
export function readCookie(name: string): string | null {
  if (typeof document === "undefined") return null;
  for (const part of document.cookie.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) return decodeURIComponent(rest.join("="));
  }
  return null;
}

function csrfHeaders(): Record<string, string> {
  const token = readCookie("runx_csrf");
  return token !== null ? { "x-csrf-token": token } : {};
}

let client: ReturnType<typeof createTRPCClient<AppRouter>> | null = null;

/** The shared browser client. */
export function browserApi(): ReturnType<typeof createTRPCClient<AppRouter>> {
  client ??= createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === "subscription",
        true: httpSubscriptionLink({ url: "/trpc" }),
        false: httpLink({ url: "/trpc", headers: csrfHeaders }),
      }),
    ],
  });
  return client;
}

/** The plain one-line message of an error from the API (or the network); codes left out. */
export function errorMessage(error: unknown): string {
  return errorInfo(error).message;
}
