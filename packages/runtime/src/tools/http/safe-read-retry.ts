/**
 * Safe-read retries of the live transport, as upstream's transport retries: a GET, or a
 * request its tool declares a read-only query (`http.query`), that answers 429, 502, 503
 * or 504 is sent again, at most three attempts in all. The wait is the response's
 * `Retry-After` (seconds or an HTTP date) or 100 ms times the attempts made so far, never more
 * than 2 s; attempts and waits share the request's one time budget. Mutations are never
 * retried here: sending one twice is not safe. The harness's fixture lanes replace the
 * transport, so replays answer once, exactly as recorded.
 */
import { RuntimeError } from "../../errors.js";
import type { HttpRequest, HttpResponse } from "../types.js";

/** Attempts of one safe read, the first included. */
export const MAX_SAFE_READ_ATTEMPTS = 3;
const RETRYABLE = new Set([429, 502, 503, 504]);
const DEFAULT_DELAY_MS = 100;
const MAX_DELAY_MS = 2_000;

/** True when the request may be repeated: a GET or a declared read-only query. */
export function isSafeRead(req: Pick<HttpRequest, "method" | "access">): boolean {
  return req.method.toUpperCase() === "GET" || req.access === "query";
}

/** The wait before attempt `completed + 1`, from `Retry-After` or the linear default. */
export function retryDelayMs(response: HttpResponse, completed: number, now: number): number {
  const header = response.headers["retry-after"]?.trim();
  let wait = DEFAULT_DELAY_MS * completed;
  if (header !== undefined && header !== "") {
    if (/^\d+$/.test(header)) wait = Number(header) * 1000;
    else {
      const at = Date.parse(header);
      if (!Number.isNaN(at)) wait = Math.max(0, at - now);
    }
  }
  return Math.min(wait, MAX_DELAY_MS);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(new RuntimeError("INTERRUPTED", "request interrupted", { reason: "aborted" }));
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Sends `req` through `send`, repeating a safe read that answered a retryable status. Each
 * attempt gets what is left of `req.timeoutMs`; a wait that would outlast it fails the
 * exchange with HTTP_TIMEOUT, as the one deadline would.
 */
export async function sendWithSafeReadRetries(
  req: HttpRequest,
  signal: AbortSignal,
  send: (req: HttpRequest, signal: AbortSignal) => Promise<HttpResponse>,
  clock: () => number = Date.now,
): Promise<HttpResponse> {
  const deadline = clock() + req.timeoutMs;
  const retryable = isSafeRead(req);
  for (let attempt = 1; ; attempt++) {
    const remaining = Math.max(1, deadline - clock());
    const response = await send({ ...req, timeoutMs: remaining }, signal);
    if (!retryable || !RETRYABLE.has(response.status) || attempt >= MAX_SAFE_READ_ATTEMPTS) {
      return response;
    }
    const wait = retryDelayMs(response, attempt, clock());
    if (clock() + wait >= deadline) {
      throw new RuntimeError(
        "HTTP_TIMEOUT",
        `no complete response within ${req.timeoutMs} ms (retrying a ${response.status})`,
        { timeout_ms: req.timeoutMs },
      );
    }
    await sleep(wait, signal);
  }
}
