import { afterEach, describe, expect, it } from "vitest";
import { validateToolsHttpExecuteOutput } from "../../generated/validate-tools-http-execute.output.js";
import { validateToolsHttpReadOutput } from "../../generated/validate-tools-http-read.output.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { createTaintSet, REDACTION_MARKER } from "../../redaction.js";
import { createFixtureHttpTransport, fixtureResolver } from "./fixture-http.js";
import type { FixtureHttpExchange, FixtureHttpResponse } from "./fixture-http.js";
import { startTestServer } from "../../testing/http-server.js";
import type { TestServer } from "../../testing/http-server.js";
import { httpTools } from "./http-tools.js";
import type { Resolver } from "./net-guard.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A resolver that must never be asked: fixture lanes bring their own. */
const forbiddenResolver: Resolver = (hostname) =>
  Promise.reject(new Error(`the system resolver was asked for ${hostname}`));
const tools = httpTools({ resolver: forbiddenResolver });
function tool(name: string): NativeTool {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no tool ${name}`);
  return found;
}

const text = (body: string, headers: Record<string, string> = {}): FixtureHttpResponse => ({
  status: 200,
  headers: { "content-type": "text/plain", ...headers },
  body: new TextEncoder().encode(body),
});

function lanes(
  responses: Record<string, FixtureHttpResponse>,
  exchanges: FixtureHttpExchange[] = [],
): ReturnType<typeof createFixtureHttpTransport> {
  return createFixtureHttpTransport({ responses: new Map(Object.entries(responses)), exchanges });
}

function context(
  transport: ReturnType<typeof createFixtureHttpTransport>,
  overrides: Partial<ToolContext> = {},
): ToolContext {
  return makeToolContext({
    workspaceRoot: "/nonexistent-workspace",
    http: transport,
    resolver: fixtureResolver,
    scopes: ["net:http"],
    ...overrides,
  });
}

function failureSummary(result: ToolResult): string {
  return result.status === "failure" ? result.summary : `(${result.status})`;
}

describe("fixture HTTP lanes", () => {
  it("answer http.read from http_responses with admission, digests and query order intact", async () => {
    const url =
      "https://geocoding.fixture.invalid/v1/search?count=5&format=json&language=en&name=Shanghai";
    const body = '{"results":[{"name":"Shanghai"}]}';
    const transport = lanes({ [url]: text(body, { "content-type": "application/json" }) });
    const input = {
      requests: [
        {
          id: "locate",
          url: "https://geocoding.fixture.invalid/v1/search",
          query: { name: "Shanghai", count: "5", language: "en", format: "json" },
        },
      ],
      allowed_hosts: ["geocoding.fixture.invalid"],
    };
    const output = successData(await tool("http.read").execute(input, context(transport)));
    expect(validateToolsHttpReadOutput(output)).toBe(true);
    const [response] = output.responses as JsonRecord[];
    expect(response).toMatchObject({
      id: "locate",
      performed: true,
      status: 200,
      json: { results: [{ name: "Shanghai" }] },
      body_digest: sha256Prefixed(body),
    });
    expect(transport.unmatched).toEqual([]);
  });

  it("still refuse a host outside allowed_hosts before the transport is asked", async () => {
    const url = "https://fixture.runx.invalid/a";
    const transport = lanes({ [url]: text("ok") });
    const input = { requests: [{ id: "a", url }], allowed_hosts: ["other.invalid"] };
    const result = await tool("http.read").execute(input, context(transport));
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(transport.requestCount).toBe(0);
  });

  it("still redact delivered secrets out of fixture bodies and headers", async () => {
    const url = "https://fixture.runx.invalid/secret";
    const transport = lanes({ [url]: text("token=s3cr3t-value", { "x-echo": "s3cr3t-value" }) });
    const input = { requests: [{ id: "secret", url }], allowed_hosts: ["fixture.runx.invalid"] };
    const ctx = context(transport, { taint: createTaintSet(["s3cr3t-value"]) });
    const output = successData(await tool("http.read").execute(input, ctx));
    const [response] = output.responses as JsonRecord[];
    expect(JSON.stringify(output)).not.toContain("s3cr3t-value");
    expect(response?.headers).toMatchObject({ "x-echo": REDACTION_MARKER });
  });

  it("still cap the response size", async () => {
    const url = "https://fixture.runx.invalid/big";
    const transport = lanes({ [url]: text("x".repeat(64)) });
    const input = {
      requests: [{ id: "big", url, max_response_bytes: 16 }],
      allowed_hosts: ["fixture.runx.invalid"],
    };
    const result = await tool("http.read").execute(input, context(transport));
    expect(failureCode(result)).toBe("HTTP_RESPONSE_TOO_LARGE");
  });

  it("fail an unmatched read with the request named, never falling back", async () => {
    const transport = lanes({ "https://fixture.runx.invalid/a": text("a") });
    const input = {
      requests: [{ id: "b", url: "https://fixture.runx.invalid/b?x=1" }],
      allowed_hosts: ["fixture.runx.invalid"],
    };
    const result = await tool("http.read").execute(input, context(transport));
    expect(failureCode(result)).toBe("FIXTURE_UNMATCHED");
    expect(failureSummary(result)).toContain("GET https://fixture.runx.invalid/b?x=1");
    expect(transport.unmatched).toEqual([
      { method: "GET", url: "https://fixture.runx.invalid/b?x=1", access: "read" },
    ]);
  });

  it("answer a mutation only from an exact exchange (method, URL, JSON body), once", async () => {
    const url = "https://api.fixture.invalid/items";
    const exchange: FixtureHttpExchange = {
      request: { method: "POST", url, body: { kind: "json", value: { a: 1, b: [true] } } },
      response: {
        status: 201,
        headers: { "content-type": "application/json" },
        body: new TextEncoder().encode('{"id":7}'),
      },
    };
    // The legacy URL lane never answers a mutation, even for the same URL.
    const transport = lanes({ [url]: text("legacy") }, [exchange]);
    const execute = (id: string, body: JsonRecord): Promise<ToolResult> =>
      tool("http.execute").execute(
        {
          requests: [{ id, method: "POST", url, body }],
          allowed_hosts: ["api.fixture.invalid"],
        },
        context(transport),
      );

    const wrongBody = await execute("k-1", { a: 2, b: [true] });
    expect(failureCode(wrongBody)).toBe("FIXTURE_UNMATCHED");
    expect(failureSummary(wrongBody)).toContain(`POST ${url}`);

    const output = successData(await execute("k-2", { b: [true], a: 1 }));
    expect(validateToolsHttpExecuteOutput(output)).toBe(true);
    expect((output.responses as JsonRecord[])[0]).toMatchObject({ status: 201, json: { id: 7 } });

    // The exchange is used up: the same request again is unmatched.
    expect(failureCode(await execute("k-3", { a: 1, b: [true] }))).toBe("FIXTURE_UNMATCHED");
    expect(transport.unmatched.map((r) => r.access)).toEqual(["mutate", "mutate"]);
  });

  it("match body none only against a request without a body", async () => {
    const url = "https://api.fixture.invalid/ping";
    const transport = lanes({}, [
      { request: { method: "DELETE", url, body: { kind: "none" } }, response: text("gone") },
    ]);
    const ctx = context(transport);
    const withBody = await tool("http.execute").execute(
      {
        requests: [{ id: "d-1", method: "DELETE", url, body: null }],
        allowed_hosts: ["api.fixture.invalid"],
      },
      ctx,
    );
    expect(failureCode(withBody)).toBe("FIXTURE_UNMATCHED");
    const bare = await tool("http.execute").execute(
      {
        requests: [{ id: "d-2", method: "DELETE", url }],
        allowed_hosts: ["api.fixture.invalid"],
      },
      ctx,
    );
    expect(successData(bare)).toMatchObject({ decision: "completed", request_count: 1 });
    expect((successData(bare).responses as JsonRecord[])[0]).toMatchObject({ ok: true });
  });

  it("open no socket, matched or not (the loopback server counts connections)", async () => {
    server = await startTestServer((_req, res) => res.end("live"));
    const live = server;
    // http.* only speak HTTPS; the fixture transport never connects, so the plain-HTTP
    // loopback server only counts whether anything tried to.
    const origin = `https://127.0.0.1:${live.port}`;
    const matched = `${origin}/fixture`;
    const transport = lanes({ [matched]: text("from fixture") }, [
      {
        request: { method: "POST", url: `${origin}/write`, body: { kind: "none" } },
        response: text("written"),
      },
    ]);
    const ctx = context(transport, { allowPrivateNetwork: true });
    const hosts = ["127.0.0.1"];

    const read = await tool("http.read").execute(
      { requests: [{ id: "m", url: matched }], allowed_hosts: hosts },
      ctx,
    );
    expect((successData(read).responses as JsonRecord[])[0]?.body).toBe("from fixture");
    const unmatchedRead = await tool("http.read").execute(
      { requests: [{ id: "e", url: `${origin}/elsewhere` }], allowed_hosts: hosts },
      ctx,
    );
    expect(failureCode(unmatchedRead)).toBe("FIXTURE_UNMATCHED");
    const unmatchedWrite = await tool("http.execute").execute(
      {
        requests: [{ id: "w", method: "PUT", url: `${origin}/write`, body: { a: 1 } }],
        allowed_hosts: hosts,
      },
      ctx,
    );
    expect(failureCode(unmatchedWrite)).toBe("FIXTURE_UNMATCHED");
    // Give any stray connection attempt time to land before counting.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(live.connections).toBe(0);
    expect(live.received).toEqual([]);
    expect(transport.requestCount).toBe(3);
  });

  it("resolve names without DNS, while admission still refuses non-public literals", async () => {
    const transport = lanes({ "https://10.0.0.7/x": text("private") });
    const result = await tool("http.read").execute(
      { requests: [{ id: "x", url: "https://10.0.0.7/x" }], allowed_hosts: ["10.0.0.7"] },
      context(transport),
    );
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(transport.requestCount).toBe(0);
    expect(await fixtureResolver("anything.invalid")).toHaveLength(1);
  });

  it("stop on an aborted signal", async () => {
    const url = "https://fixture.runx.invalid/a";
    const transport = lanes({ [url]: text("a") });
    const controller = new AbortController();
    controller.abort();
    const result = await tool("http.read").execute(
      { requests: [{ id: "a", url }], allowed_hosts: ["fixture.runx.invalid"] },
      context(transport, { signal: controller.signal }),
    );
    expect(failureCode(result)).toBe("INTERRUPTED");
  });
});
