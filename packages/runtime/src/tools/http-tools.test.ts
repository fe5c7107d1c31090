import { afterEach, describe, expect, it } from "vitest";
import { validateToolsHttpExecuteOutput } from "../generated/validate-tools-http-execute.output.js";
import { validateToolsHttpReadOutput } from "../generated/validate-tools-http-read.output.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { REDACTION_MARKER, createTaintSet } from "../redaction.js";
import { MAX_REDIRECTS } from "./http-exchange.js";
import { scriptedTransport, startTestServer } from "./http-test-server.js";
import type { TestHandler, TestServer } from "./http-test-server.js";
import { MAX_BATCH_OUTPUT_BYTES, httpTools } from "./http-tools.js";
import { createHttpTransport } from "./http-transport.js";
import type { Resolver } from "./net-guard.js";
import { failureCode, makeToolContext, successData } from "./test-context.js";
import type { HttpResponse, Json, JsonRecord, NativeTool, ToolContext } from "./types.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: TestHandler): Promise<TestServer> {
  server = await startTestServer(handler);
  return server;
}

const resolver: Resolver = (hostname) => {
  const table: Record<string, string> = {
    "public.example": "93.184.216.34",
    "also-public.example": "93.184.216.35",
    "internal.example": "10.0.0.7",
  };
  const address = table[hostname];
  return address === undefined
    ? Promise.reject(new Error("ENOTFOUND"))
    : Promise.resolve([{ address, family: 4 }]);
};

const tools = httpTools({ resolver });
function tool(name: string): NativeTool {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

function context(overrides: Partial<ToolContext> = {}): ToolContext {
  return makeToolContext({
    workspaceRoot: "/nonexistent-workspace",
    http: createHttpTransport(),
    scopes: ["net:http"],
    ...overrides,
  });
}
const openContext = (overrides: Partial<ToolContext> = {}): ToolContext =>
  context({ allowPrivateNetwork: true, ...overrides });

function read(srv: TestServer, requests: Json[], extra: JsonRecord = {}): JsonRecord {
  return { requests, allowed_hosts: ["127.0.0.1"], ...extra };
}

const responses = (output: JsonRecord): JsonRecord[] => output.responses as JsonRecord[];

describe("http.read", () => {
  it("refuses loopback by default and never sends", async () => {
    const srv = await serve((_req, res) => res.end("hi"));
    const result = await tool("http.read").execute(
      read(srv, [{ url: `${srv.origin}/` }]),
      context(),
    );
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(srv.received).toHaveLength(0);
  });

  it("reaches loopback when the runner allows the private network", async () => {
    const srv = await serve((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end('{"ok":true,"n":3}');
    });
    const input = read(srv, [{ id: "one", url: `${srv.origin}/data` }]);
    expect(tool("http.read").validateInput(input)).toEqual({ ok: true });
    const output = successData(await tool("http.read").execute(input, openContext()));
    expect(validateToolsHttpReadOutput(output)).toBe(true);
    const [first] = responses(output);
    expect(output).toMatchObject({
      schema: "runx.http.execution.v1",
      decision: "completed",
      request_count: 1,
      stopped: false,
    });
    expect(first).toMatchObject({
      id: "one",
      performed: true,
      status: 200,
      ok: true,
      json: { ok: true, n: 3 },
      body: "",
      body_bytes: 17,
      body_digest: sha256Prefixed('{"ok":true,"n":3}'),
      truncated: false,
    });
    expect(first?.headers).toMatchObject({ "content-type": "application/json" });
  });

  it("refuses host names that resolve to loopback", async () => {
    const srv = await serve((_req, res) => res.end("hi"));
    const viaSystem = httpTools().find((candidate) => candidate.name === "http.read") as NativeTool;
    const local = {
      requests: [{ url: `http://localhost:${srv.port}/` }],
      allowed_hosts: ["localhost"],
    };
    expect(failureCode(await viaSystem.execute(local, context()))).toBe("NETWORK_DENIED");
    const rebinding: Resolver = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    const viaRebind = httpTools({ resolver: rebinding }).find((t) => t.name === "http.read");
    const named = {
      requests: [{ url: `http://rebind.example:${srv.port}/` }],
      allowed_hosts: ["rebind.example"],
    };
    expect(failureCode(await (viaRebind as NativeTool).execute(named, context()))).toBe(
      "NETWORK_DENIED",
    );
    expect(srv.received).toHaveLength(0);
  });

  it("refuses hosts outside allowed_hosts", async () => {
    const srv = await serve((_req, res) => res.end("hi"));
    const input = { requests: [{ url: `${srv.origin}/` }], allowed_hosts: ["example.com"] };
    expect(failureCode(await tool("http.read").execute(input, openContext()))).toBe(
      "NETWORK_DENIED",
    );
    expect(srv.received).toHaveLength(0);
  });

  it("fails when the response is larger than max_response_bytes", async () => {
    const srv = await serve((_req, res) => res.end("z".repeat(5000)));
    const input = read(srv, [{ url: srv.origin }], { max_response_bytes: 1000 });
    expect(failureCode(await tool("http.read").execute(input, openContext()))).toBe(
      "HTTP_RESPONSE_TOO_LARGE",
    );
  });

  it(`fails when the batch output passes ${MAX_BATCH_OUTPUT_BYTES} bytes`, async () => {
    const big = "y".repeat(3 * 1024 * 1024);
    const srv = await serve((_req, res) => res.end(big));
    const requests = [1, 2, 3].map((n) => ({ id: `r${n}`, url: `${srv.origin}/${n}` }));
    const input = read(srv, requests, { max_response_bytes: 4 * 1024 * 1024 });
    const result = await tool("http.read").execute(input, openContext());
    expect(failureCode(result)).toBe("LIMIT_EXCEEDED");
    expect(srv.received).toHaveLength(3);
    const two = read(srv, requests.slice(0, 2), { max_response_bytes: 4 * 1024 * 1024 });
    expect(successData(await tool("http.read").execute(two, openContext()))).toMatchObject({
      decision: "completed",
      request_count: 2,
    });
  });

  it("fails when the server does not answer within timeout_ms", async () => {
    const srv = await serve(() => {
      // never respond
    });
    const input = read(srv, [{ url: srv.origin }], { timeout_ms: 150 });
    expect(failureCode(await tool("http.read").execute(input, openContext()))).toBe("HTTP_TIMEOUT");
  });

  it("fills path placeholders and query parameters (names in code-point order)", async () => {
    const srv = await serve((req, res) => res.end(req.url));
    const input = read(srv, [
      {
        url: `${srv.origin}/points/{lat},{lon}`,
        path: { lat: "39.7", lon: "-104 9" },
        query: { units: "si", tag: ["a", "b"] },
        headers: { accept: "text/plain" },
      },
    ]);
    const output = successData(await tool("http.read").execute(input, openContext()));
    expect(responses(output)[0]?.body).toBe("/points/39.7,-104%209?tag=a&tag=b&units=si");
    expect(srv.received[0]?.headers.accept).toBe("text/plain");
  });

  it("follows a redirect and reports the final URL", async () => {
    const srv = await serve((req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: "/end" }).end();
      else res.end("arrived");
    });
    const output = successData(
      await tool("http.read").execute(read(srv, [{ url: `${srv.origin}/start` }]), openContext()),
    );
    expect(responses(output)[0]).toMatchObject({ status: 200, body: "arrived", json: null });
    expect(srv.received.map((r) => r.url)).toEqual(["/start", "/end"]);
  });

  it("re-admits every redirect hop and refuses one that lands on a private address", async () => {
    const transport = scriptedTransport(() => ({
      status: 302,
      headers: { location: "http://internal.example/admin" },
      body: new Uint8Array(),
    }));
    const input = {
      requests: [{ url: "http://public.example/" }],
      allowed_hosts: ["public.example", "internal.example"],
    };
    const result = await tool("http.read").execute(input, context({ http: transport }));
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(transport.sent.map((r) => r.url)).toEqual(["http://public.example/"]);
  });

  it("refuses a redirect to a host outside allowed_hosts", async () => {
    const transport = scriptedTransport(() => ({
      status: 301,
      headers: { location: "https://also-public.example/" },
      body: new Uint8Array(),
    }));
    const input = {
      requests: [{ url: "http://public.example/" }],
      allowed_hosts: ["public.example"],
    };
    const result = await tool("http.read").execute(input, context({ http: transport }));
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(transport.sent).toHaveLength(1);
  });

  it("drops credential headers when a redirect changes origin", async () => {
    const transport = scriptedTransport((_req, index): Omit<HttpResponse, "url"> =>
      index === 0
        ? {
            status: 307,
            headers: { location: "https://also-public.example/" },
            body: new Uint8Array(),
          }
        : { status: 200, headers: {}, body: new TextEncoder().encode("ok") },
    );
    const input = {
      requests: [{ url: "https://public.example/", headers: { authorization: "Bearer abc" } }],
      allowed_hosts: ["public.example", "also-public.example"],
    };
    successData(await tool("http.read").execute(input, context({ http: transport })));
    expect(transport.sent[0]?.headers.authorization).toBe("Bearer abc");
    expect(transport.sent[1]?.headers.authorization).toBeUndefined();
  });

  it(`fails after ${MAX_REDIRECTS} redirects`, async () => {
    const transport = scriptedTransport((_req, index) => ({
      status: 302,
      headers: { location: `/hop-${index}` },
      body: new Uint8Array(),
    }));
    const input = {
      requests: [{ url: "https://public.example/" }],
      allowed_hosts: ["public.example"],
    };
    const result = await tool("http.read").execute(input, context({ http: transport }));
    expect(failureCode(result)).toBe("HTTP_FAILED");
    expect(transport.sent).toHaveLength(MAX_REDIRECTS + 1);
  });

  it("leaves credential headers out and redacts tainted values", async () => {
    const secret = "sk-live-0123456789";
    const srv = await serve((_req, res) => {
      res.setHeader("set-cookie", "session=abc123");
      res.setHeader("authorization", "Bearer whatever");
      res.setHeader("x-echo", `token ${secret}`);
      res.setHeader("x-session-token", "abc");
      res.setHeader("x-plain", "visible");
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ key: secret, note: "fine" }));
    });
    const ctx = openContext({ taint: createTaintSet([secret]) });
    const input = read(srv, [{ url: `${srv.origin}/?api_key=${secret}` }]);
    const output = successData(await tool("http.read").execute(input, ctx));
    const [first] = responses(output);
    const headers = first?.headers as JsonRecord;
    expect(headers["set-cookie"]).toBeUndefined();
    expect(headers.authorization).toBeUndefined();
    expect(headers["x-session-token"]).toBeUndefined();
    expect(headers["x-echo"]).toBe(REDACTION_MARKER);
    expect(headers["x-plain"]).toBe("visible");
    expect(first?.json).toEqual({ key: REDACTION_MARKER, note: "fine" });
    expect(JSON.stringify(output)).not.toContain(secret);
  });

  it("decides stopped after a non-2xx response when stop_on_error holds", async () => {
    const srv = await serve((req, res) => {
      res.statusCode = req.url === "/bad" ? 500 : 200;
      res.end("x");
    });
    const requests = [{ url: `${srv.origin}/bad` }, { url: `${srv.origin}/good` }];
    const stopped = successData(
      await tool("http.read").execute(read(srv, requests), openContext()),
    );
    expect(validateToolsHttpReadOutput(stopped)).toBe(true);
    expect(stopped).toMatchObject({ decision: "stopped", stopped: true, request_count: 1 });
    expect(responses(stopped).map((r) => r.status)).toEqual([500]);
    const all = successData(
      await tool("http.read").execute(read(srv, requests, { stop_on_error: false }), openContext()),
    );
    expect(all).toMatchObject({ decision: "completed", stopped: false, request_count: 2 });
    expect(responses(all).map((r) => [r.status, r.ok])).toEqual([
      [500, false],
      [200, true],
    ]);
  });

  it("decides stopped when the last request fails under stop_on_error", async () => {
    const srv = await serve((_req, res) => res.writeHead(404).end("missing"));
    const output = successData(
      await tool("http.read").execute(read(srv, [{ url: srv.origin }]), openContext()),
    );
    expect(output).toMatchObject({ decision: "stopped", stopped: true, request_count: 1 });
  });

  it("decides stopped on HTTP 429 even without stop_on_error", async () => {
    const srv = await serve((req, res) => {
      res.statusCode = req.url === "/slow-down" ? 429 : 200;
      res.end("x");
    });
    const requests = [
      { url: `${srv.origin}/ok` },
      { url: `${srv.origin}/slow-down` },
      { url: `${srv.origin}/never` },
    ];
    const output = successData(
      await tool("http.read").execute(read(srv, requests, { stop_on_error: false }), openContext()),
    );
    expect(output).toMatchObject({ decision: "stopped", stopped: true, request_count: 2 });
    expect(responses(output).map((r) => r.status)).toEqual([200, 429]);
    expect(srv.received.map((r) => r.url)).toEqual(["/ok", "/slow-down"]);
  });

  it("skips a request whose requires_success_of dependency did not succeed", async () => {
    const srv = await serve((req, res) => {
      res.statusCode = req.url === "/bad" ? 500 : 200;
      res.end('{"n":1}');
    });
    const requests: Json[] = [
      { id: "first", url: `${srv.origin}/bad` },
      { id: "second", url: `${srv.origin}/after-first`, requires_success_of: ["first"] },
      { id: "third", url: `${srv.origin}/free` },
      { id: "fourth", url: `${srv.origin}/after-third`, requires_success_of: ["third"] },
    ];
    const input = read(srv, requests, { stop_on_error: false });
    expect(tool("http.read").validateInput(input)).toEqual({ ok: true });
    const output = successData(await tool("http.read").execute(input, openContext()));
    expect(validateToolsHttpReadOutput(output)).toBe(true);
    expect(output).toMatchObject({ decision: "completed", stopped: false, request_count: 3 });
    expect(responses(output)[1]).toEqual({
      id: "second",
      performed: false,
      status: 0,
      ok: false,
      json: null,
      body: "",
      body_digest: "",
      body_bytes: 0,
      truncated: false,
      headers: {},
      skip_reason: 'dependency "first" did not succeed',
    });
    expect(responses(output)[3]).toMatchObject({ id: "fourth", performed: true, ok: true });
    expect(srv.received.map((r) => r.url)).toEqual(["/bad", "/free", "/after-third"]);
  });

  it("stops at a skipped request under stop_on_error", async () => {
    const srv = await serve((_req, res) => res.end("x"));
    const requests: Json[] = [
      { id: "a", url: `${srv.origin}/a`, requires_success_of: ["missing"] },
      { id: "b", url: `${srv.origin}/b` },
    ];
    const output = successData(await tool("http.read").execute(read(srv, requests), openContext()));
    expect(output).toMatchObject({ decision: "stopped", stopped: true, request_count: 0 });
    expect(responses(output)).toHaveLength(1);
    expect(responses(output)[0]).toMatchObject({
      performed: false,
      skip_reason: 'dependency "missing" did not succeed',
    });
    expect(srv.received).toHaveLength(0);
  });

  it("rejects unsupported inputs before sending anything", async () => {
    const srv = await serve((_req, res) => res.end());
    const withAuth = read(srv, [{ url: srv.origin }], { auth: { type: "bearer" } });
    expect(failureCode(await tool("http.read").execute(withAuth, openContext()))).toBe(
      "INPUT_INVALID",
    );
    const hostHeader = read(srv, [{ url: srv.origin, headers: { host: "evil" } }]);
    expect(failureCode(await tool("http.read").execute(hostHeader, openContext()))).toBe(
      "INPUT_INVALID",
    );
    const tooMany = read(
      srv,
      Array.from({ length: 51 }, () => ({ url: srv.origin })),
    );
    expect(tool("http.read").validateInput(tooMany)).toMatchObject({ ok: false, path: "requests" });
    const blankDependency = read(srv, [{ url: srv.origin, requires_success_of: [""] }]);
    expect(tool("http.read").validateInput(blankDependency)).toMatchObject({
      ok: false,
      path: "requests.0.requires_success_of.0",
    });
    expect(
      tool("http.read").validateInput({ ...read(srv, [{ url: srv.origin }]), extra: 1 }),
    ).toEqual({ ok: false, path: "extra", message: "is not a field this accepts" });
    expect(srv.received).toHaveLength(0);
  });
});

describe("http.query", () => {
  it("posts JSON bodies with a stable request digest and does not follow redirects", async () => {
    const srv = await serve((req, res) => {
      if (req.url === "/moved") res.writeHead(307, { location: "/other" }).end();
      else res.end(req.body);
    });
    const input = read(srv, [
      { id: "q", url: `${srv.origin}/query`, body: { package: "left-pad" } },
      { id: "m", url: `${srv.origin}/moved`, body: null },
    ]);
    const first = successData(await tool("http.query").execute(input, openContext()));
    const second = successData(await tool("http.query").execute(input, openContext()));
    expect(responses(first)[0]?.json).toEqual({ package: "left-pad" });
    expect(srv.received[0]?.headers["content-type"]).toBe("application/json");
    expect(responses(first)[1]).toMatchObject({ status: 307, ok: false });
    expect(srv.received.map((r) => r.url)).toEqual(["/query", "/moved", "/query", "/moved"]);
    expect(first).toEqual(second);
  });
});

describe("http.execute", () => {
  const mutation = (srv: TestServer, body: Json, key?: string): JsonRecord => {
    const input: JsonRecord = {
      requests: [{ method: "POST", url: `${srv.origin}/items`, body }],
      allowed_hosts: ["127.0.0.1"],
    };
    if (key !== undefined) input.idempotency_key = key;
    return input;
  };

  it("refuses to run without an idempotency key and never sends", async () => {
    const srv = await serve((_req, res) => res.end("created"));
    const result = await tool("http.execute").execute(mutation(srv, { a: 1 }), openContext());
    expect(failureCode(result)).toBe("IDEMPOTENCY_KEY_REQUIRED");
    const blank = await tool("http.execute").execute(mutation(srv, { a: 1 }, "  "), openContext());
    expect(failureCode(blank)).toBe("IDEMPOTENCY_KEY_REQUIRED");
    expect(srv.received).toHaveLength(0);
  });

  it("sends once per key, replays the same batch and refuses a different one", async () => {
    const srv = await serve((_req, res) => res.writeHead(201).end('{"id":7}'));
    const ctx = openContext();
    const first = successData(
      await tool("http.execute").execute(mutation(srv, { a: 1 }, "k1"), ctx),
    );
    expect(validateToolsHttpExecuteOutput(first)).toBe(true);
    expect(first).toMatchObject({ decision: "completed", request_count: 1 });
    expect(responses(first)[0]).toMatchObject({ status: 201, ok: true, json: { id: 7 } });
    const replay = await tool("http.execute").execute(mutation(srv, { a: 1 }, "k1"), ctx);
    expect(replay.status === "success" && replay.summary).toContain("(replayed)");
    expect(successData(replay)).toEqual(first);
    expect(srv.received).toHaveLength(1);
    const conflict = await tool("http.execute").execute(mutation(srv, { a: 2 }, "k1"), ctx);
    expect(failureCode(conflict)).toBe("IDEMPOTENCY_CONFLICT");
    expect(srv.received).toHaveLength(1);
  });

  it("records a failed attempt and replays the failure instead of sending again", async () => {
    const srv = await serve(() => {
      // never respond
    });
    const ctx = openContext();
    const input = { ...mutation(srv, { a: 1 }, "slow"), timeout_ms: 150 };
    expect(failureCode(await tool("http.execute").execute(input, ctx))).toBe("HTTP_TIMEOUT");
    expect(failureCode(await tool("http.execute").execute(input, ctx))).toBe("HTTP_TIMEOUT");
    expect(srv.received).toHaveLength(1);
  });

  it("returns a redirect status instead of re-sending the mutation", async () => {
    const srv = await serve((_req, res) => res.writeHead(308, { location: "/v2/items" }).end());
    const output = successData(
      await tool("http.execute").execute(mutation(srv, { a: 1 }, "r1"), openContext()),
    );
    expect(output).toMatchObject({ decision: "stopped", stopped: true });
    expect(responses(output)[0]).toMatchObject({ status: 308, ok: false });
    expect(srv.received).toHaveLength(1);
  });

  it("rejects GET as a mutation method", () => {
    const input = {
      requests: [{ method: "GET", url: "https://public.example/" }],
      allowed_hosts: ["public.example"],
      idempotency_key: "g",
    };
    expect(tool("http.execute").validateInput(input)).toMatchObject({
      ok: false,
      path: "requests.0.method",
    });
  });
});
