import { afterEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { startTestServer } from "../../testing/http-server.js";
import type { TestHandler, TestServer } from "../../testing/http-server.js";
import { createHttpTransport } from "./http-transport.js";
import type { PinnedHttpRequest } from "./http-transport.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: TestHandler): Promise<TestServer> {
  server = await startTestServer(handler);
  return server;
}

const loopback = { address: "127.0.0.1", family: 4 } as const;

function request(url: string, extra: Partial<PinnedHttpRequest> = {}): PinnedHttpRequest {
  return {
    method: "GET",
    url,
    headers: {},
    maxResponseBytes: 1024 * 1024,
    timeoutMs: 5_000,
    pinned: loopback,
    ...extra,
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "(succeeded)";
  } catch (error) {
    return isRuntimeError(error) ? error.code : "(not a RuntimeError)";
  }
}

const signal = new AbortController().signal;

describe("createHttpTransport", () => {
  it("returns status, lowercase headers and the exact body bytes", async () => {
    const srv = await serve((_req, res) => {
      res.setHeader("X-Thing", ["a", "b"]);
      res.end("hello");
    });
    const response = await createHttpTransport().request(request(`${srv.origin}/x`), signal);
    expect(response.status).toBe(200);
    expect(response.headers["x-thing"]).toBe("a, b");
    expect(Buffer.from(response.body).toString()).toBe("hello");
    expect(response.url).toBe(`${srv.origin}/x`);
  });

  it("returns a redirect to the caller instead of following it", async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(302, { location: "/elsewhere" }).end();
    });
    const response = await createHttpTransport().request(request(`${srv.origin}/`), signal);
    expect(response.status).toBe(302);
    expect(response.headers.location).toBe("/elsewhere");
    expect(srv.received).toHaveLength(1);
  });

  it("connects to the pinned address while Host still names the requested host", async () => {
    const srv = await serve((_req, res) => res.end("pinned"));
    const url = `http://pinned.example:${srv.port}/p?q=1`;
    const response = await createHttpTransport().request(request(url), signal);
    expect(Buffer.from(response.body).toString()).toBe("pinned");
    expect(srv.received[0]?.headers.host).toBe(`pinned.example:${srv.port}`);
    expect(srv.received[0]?.url).toBe("/p?q=1");
  });

  it("sends the body with its content length", async () => {
    const srv = await serve((req, res) => res.end(req.body.toUpperCase()));
    const body = new TextEncoder().encode('{"a":1}');
    const response = await createHttpTransport().request(
      request(`${srv.origin}/`, { method: "POST", body }),
      signal,
    );
    expect(Buffer.from(response.body).toString()).toBe('{"A":1}');
    expect(srv.received[0]?.headers["content-length"]).toBe("7");
  });

  it("refuses a response whose declared length exceeds the cap", async () => {
    const srv = await serve((_req, res) => res.end("x".repeat(5000)));
    const code = await codeOf(
      createHttpTransport().request(request(srv.origin, { maxResponseBytes: 1000 }), signal),
    );
    expect(code).toBe("HTTP_RESPONSE_TOO_LARGE");
  });

  it("aborts a streamed response once it grows past the cap", async () => {
    const srv = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      for (let i = 0; i < 20; i++) res.write("y".repeat(1000));
      res.end();
    });
    const code = await codeOf(
      createHttpTransport().request(request(srv.origin, { maxResponseBytes: 4000 }), signal),
    );
    expect(code).toBe("HTTP_RESPONSE_TOO_LARGE");
  });

  it("fails with HTTP_TIMEOUT when the server does not answer in time", async () => {
    const srv = await serve(() => {
      // never respond
    });
    const code = await codeOf(
      createHttpTransport().request(request(srv.origin, { timeoutMs: 150 }), signal),
    );
    expect(code).toBe("HTTP_TIMEOUT");
  });

  it("stops with INTERRUPTED when the caller aborts", async () => {
    const srv = await serve(() => {
      // never respond
    });
    const controller = new AbortController();
    const pending = createHttpTransport().request(request(srv.origin), controller.signal);
    controller.abort();
    expect(await codeOf(pending)).toBe("INTERRUPTED");
  });

  it("admits an unpinned request itself and refuses loopback by default", async () => {
    const srv = await serve((_req, res) => res.end("no"));
    const unpinned = request(srv.origin, { pinned: undefined });
    expect(await codeOf(createHttpTransport().request(unpinned, signal))).toBe("NETWORK_DENIED");
    expect(srv.received).toHaveLength(0);
    const open = createHttpTransport({ allowPrivateNetwork: true });
    expect((await open.request(unpinned, signal)).status).toBe(200);
  });

  it("reports a refused connection as HTTP_FAILED", async () => {
    const srv = await serve((_req, res) => res.end());
    const port = srv.port;
    await srv.close();
    server = undefined;
    const code = await codeOf(
      createHttpTransport().request(request(`http://127.0.0.1:${port}/`), signal),
    );
    expect(code).toBe("HTTP_FAILED");
  });
});
