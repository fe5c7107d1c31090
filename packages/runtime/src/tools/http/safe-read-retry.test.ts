/**
 * Safe-read retries of the live transport against a real loopback server: GETs and declared
 * queries are repeated on 429/502/503/504 (three attempts at most, honouring Retry-After),
 * mutations never are.
 */
import { afterEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { startTestServer } from "../../testing/http-server.js";
import type { TestHandler, TestServer } from "../../testing/http-server.js";
import { createHttpTransport } from "./http-transport.js";
import type { PinnedHttpRequest } from "./http-transport.js";
import type { HttpResponse } from "../types.js";
import { retryDelayMs } from "./safe-read-retry.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: TestHandler): Promise<TestServer> {
  server = await startTestServer(handler);
  return server;
}

/** Answers `statuses` in turn (the last one from then on), with optional headers. */
function sequence(statuses: number[], headers: Record<string, string> = {}): TestHandler {
  let n = 0;
  return (_req, res) => {
    const status = statuses[Math.min(n++, statuses.length - 1)] ?? 200;
    res.writeHead(status, headers).end(`attempt ${n}`);
  };
}

const signal = new AbortController().signal;
function request(url: string, extra: Partial<PinnedHttpRequest> = {}): PinnedHttpRequest {
  return {
    method: "GET",
    url,
    headers: {},
    maxResponseBytes: 1024,
    timeoutMs: 5_000,
    pinned: { address: "127.0.0.1", family: 4 },
    ...extra,
  };
}
const text = (r: HttpResponse): string => Buffer.from(r.body).toString();

describe("safe-read retries", () => {
  it("retries a GET that answered 503 and returns the first success", async () => {
    const srv = await serve(sequence([503, 502, 200]));
    const response = await createHttpTransport().request(request(`${srv.origin}/r`), signal);
    expect(response.status).toBe(200);
    expect(text(response)).toBe("attempt 3");
    expect(srv.received).toHaveLength(3);
  });

  it("stops after three attempts and returns the last answer", async () => {
    const srv = await serve(sequence([429]));
    const response = await createHttpTransport().request(request(`${srv.origin}/r`), signal);
    expect(response.status).toBe(429);
    expect(srv.received).toHaveLength(3);
  });

  it("retries a declared read-only query POST, but never a mutation", async () => {
    const query = await serve(sequence([504, 200]));
    const answered = await createHttpTransport().request(
      request(`${query.origin}/q`, { method: "POST", access: "query" }),
      signal,
    );
    expect(answered.status).toBe(200);
    expect(query.received.map((r) => r.method)).toEqual(["POST", "POST"]);
    await query.close();

    const mutate = await serve(sequence([503, 200]));
    const once = await createHttpTransport().request(
      request(`${mutate.origin}/m`, { method: "POST", access: "mutate" }),
      signal,
    );
    expect(once.status).toBe(503);
    expect(mutate.received).toHaveLength(1);
  });

  it("does not retry other failures", async () => {
    const srv = await serve(sequence([500, 200]));
    const response = await createHttpTransport().request(request(`${srv.origin}/r`), signal);
    expect(response.status).toBe(500);
    expect(srv.received).toHaveLength(1);
  });

  it("fails with HTTP_TIMEOUT when Retry-After outlasts the time budget", async () => {
    const srv = await serve(sequence([503], { "retry-after": "1" }));
    let code = "(succeeded)";
    try {
      await createHttpTransport().request(request(`${srv.origin}/r`, { timeoutMs: 400 }), signal);
    } catch (error) {
      code = isRuntimeError(error) ? error.code : "(not a RuntimeError)";
    }
    expect(code).toBe("HTTP_TIMEOUT");
    expect(srv.received).toHaveLength(1);
  });

  it("waits Retry-After seconds or date, else 100 ms per attempt, at most 2 s", () => {
    const reply = (headers: Record<string, string>): HttpResponse => ({
      status: 503,
      headers,
      body: new Uint8Array(),
      url: "https://api.example/",
    });
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryDelayMs(reply({}), 1, now)).toBe(100);
    expect(retryDelayMs(reply({}), 2, now)).toBe(200);
    expect(retryDelayMs(reply({ "retry-after": "1" }), 1, now)).toBe(1000);
    expect(retryDelayMs(reply({ "retry-after": "30" }), 1, now)).toBe(2000);
    expect(retryDelayMs(reply({ "retry-after": "Thu, 01 Jan 2026 00:00:01 GMT" }), 1, now)).toBe(
      1000,
    );
  });
});
