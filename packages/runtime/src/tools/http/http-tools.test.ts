/**
 * The HTTP batch tools against upstream runx's contract, through a scripted transport (the
 * exchange still admits every URL: scheme, host, address class) and HTTPS URLs.
 */
import { describe, expect, it } from "vitest";
import { validateToolsHttpExecuteOutput } from "../../generated/validate-tools-http-execute.output.js";
import { validateToolsHttpReadOutput } from "../../generated/validate-tools-http-read.output.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { REDACTION_MARKER, createTaintSet } from "../../redaction.js";
import { scriptedTransport } from "../../testing/http-server.js";
import type { ScriptedTransport } from "../../testing/http-server.js";
import { MAX_BATCH_OUTPUT_BYTES, httpTools } from "./http-tools.js";
import type { Resolver } from "./net-guard.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type {
  HttpRequest,
  HttpResponse,
  Json,
  JsonRecord,
  NativeTool,
  ToolContext,
} from "../types.js";

const resolver: Resolver = (hostname) => {
  const table: Record<string, string> = {
    "api.example": "93.184.216.34",
    "other.example": "93.184.216.35",
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

type Reply = Omit<HttpResponse, "url">;
const json = (value: Json, status = 200, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: new TextEncoder().encode(JSON.stringify(value)),
});

function harness(script: (req: HttpRequest, n: number) => Reply): {
  transport: ScriptedTransport;
  ctx: (overrides?: Partial<ToolContext>) => ToolContext;
} {
  const transport = scriptedTransport(script);
  return {
    transport,
    ctx: (overrides = {}) =>
      makeToolContext({
        workspaceRoot: "/nonexistent-workspace",
        http: transport,
        scopes: ["net:http"],
        ...overrides,
      }),
  };
}

const batch = (requests: Json[], extra: JsonRecord = {}): JsonRecord => ({
  requests,
  allowed_hosts: ["api.example"],
  ...extra,
});
const responses = (output: JsonRecord): JsonRecord[] => output.responses as JsonRecord[];

describe("http.* input shape", () => {
  it("accepts exactly requests, allowed_hosts, auth and stop_on_error", () => {
    const read = tool("http.read");
    expect(
      read.validateInput(
        batch([{ id: "a", url: "https://api.example/" }], { auth: null, stop_on_error: false }),
      ),
    ).toEqual({ ok: true });
    const extras: JsonRecord[] = [
      { idempotency_key: "k" },
      { max_response_bytes: 10 },
      { timeout_ms: 10 },
    ];
    for (const extra of extras) {
      expect(
        tool("http.execute").validateInput(
          batch([{ id: "a", url: "https://api.example/" }], extra),
        ),
      ).toMatchObject({ ok: false });
    }
    // Every request needs an id.
    expect(read.validateInput(batch([{ url: "https://api.example/" }]))).toMatchObject({
      ok: false,
    });
  });

  it("runs http.execute without a batch idempotency key, sending each request once", async () => {
    const { transport, ctx } = harness(() => json({ created: true }, 201));
    const input = batch([
      {
        id: "create",
        method: "post",
        url: "https://api.example/items",
        body: { a: 1 },
        idempotency_key: "item-1",
      },
    ]);
    const output = successData(await tool("http.execute").execute(input, ctx()));
    expect(validateToolsHttpExecuteOutput(output)).toBe(true);
    expect(output).toMatchObject({ decision: "completed", request_count: 1 });
    expect(transport.sent).toHaveLength(1);
    expect(transport.sent[0]).toMatchObject({ method: "POST", access: "mutate" });
    expect(new TextDecoder().decode(transport.sent[0]?.body)).toBe('{"a":1}');
  });

  it("refuses a method the tool does not admit and a bad per-request idempotency key", async () => {
    const { transport, ctx } = harness(() => json({}));
    const get = await tool("http.query").execute(
      batch([{ id: "q", url: "https://api.example/q" }]),
      ctx(),
    );
    expect(failureCode(get)).toBe("INPUT_INVALID");
    const badKey = await tool("http.execute").execute(
      batch([{ id: "x", method: "DELETE", url: "https://api.example/x", idempotency_key: " " }]),
      ctx(),
    );
    expect(failureCode(badKey)).toBe("INPUT_INVALID");
    expect(transport.sent).toHaveLength(0);
  });

  it("refuses an auth binding when the run delivered no credential, and accepts auth: null", async () => {
    const { transport, ctx } = harness(() => json({}));
    const refused = await tool("http.read").execute(
      batch([{ id: "a", url: "https://api.example/" }], {
        auth: { type: "bearer", secret_env: "T" },
      }),
      ctx(),
    );
    expect(failureCode(refused)).toBe("INPUT_INVALID");
    expect(transport.sent).toHaveLength(0);
    const plain = await tool("http.read").execute(
      batch([{ id: "a", url: "https://api.example/" }], { auth: null }),
      ctx(),
    );
    expect(successData(plain)).toMatchObject({ decision: "completed" });
  });
});

describe("http.* admission", () => {
  it("requires HTTPS and never sends a plain-HTTP request", async () => {
    const { transport, ctx } = harness(() => json({}));
    const result = await tool("http.read").execute(
      batch([{ id: "a", url: "http://api.example/" }]),
      ctx(),
    );
    expect(failureCode(result)).toBe("NETWORK_DENIED");
    expect(result.status === "failure" && result.summary).toContain("must use HTTPS");
    expect(transport.sent).toHaveLength(0);
  });

  it("refuses a caller-supplied authorization header in any case", async () => {
    const { transport, ctx } = harness(() => json({}));
    const result = await tool("http.read").execute(
      batch([{ id: "a", url: "https://api.example/", headers: { Authorization: "Bearer x" } }]),
      ctx(),
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(result.status === "failure" && result.summary).toContain("use the auth binding");
    expect(transport.sent).toHaveLength(0);
  });

  it("admits exact hosts only and still refuses non-public addresses", async () => {
    const { transport, ctx } = harness(() => json({}));
    const outside = await tool("http.read").execute(
      batch([{ id: "a", url: "https://other.example/" }]),
      ctx(),
    );
    expect(failureCode(outside)).toBe("NETWORK_DENIED");
    for (const host of ["*.example", "api.example:443"]) {
      const pattern = await tool("http.read").execute(
        { requests: [{ id: "a", url: "https://api.example/" }], allowed_hosts: [host] },
        ctx(),
      );
      expect(failureCode(pattern)).toBe("INPUT_INVALID");
    }
    const internal = await tool("http.read").execute(
      {
        requests: [{ id: "a", url: "https://internal.example/" }],
        allowed_hosts: ["internal.example"],
      },
      ctx(),
    );
    expect(failureCode(internal)).toBe("NETWORK_DENIED");
    expect(transport.sent).toHaveLength(0);
  });

  it("never follows a redirect: the 3xx is the response", async () => {
    const { transport, ctx } = harness(() => ({
      status: 302,
      headers: { location: "https://api.example/next" },
      body: new Uint8Array(),
    }));
    const output = successData(
      await tool("http.read").execute(
        batch([
          { id: "a", url: "https://api.example/" },
          { id: "b", url: "https://api.example/b" },
        ]),
        ctx(),
      ),
    );
    expect(responses(output)).toHaveLength(1);
    expect(responses(output)[0]).toMatchObject({ status: 302, ok: false });
    expect(output).toMatchObject({ decision: "stopped", stopped: true });
    expect(transport.sent.map((r) => r.url)).toEqual(["https://api.example/"]);
  });

  it("hands each request its max_response_bytes (default and maximum 8 MiB) to the transport", async () => {
    const { transport, ctx } = harness(() => json({}));
    await tool("http.read").execute(
      batch([
        { id: "a", url: "https://api.example/a", max_response_bytes: 16 },
        { id: "b", url: "https://api.example/b" },
      ]),
      ctx(),
    );
    expect(transport.sent.map((r) => r.maxResponseBytes)).toEqual([16, 8 * 1024 * 1024]);
    const tooHigh = tool("http.read").validateInput(
      batch([{ id: "a", url: "https://api.example/", max_response_bytes: 8 * 1024 * 1024 + 1 }]),
    );
    expect(tooHigh).toMatchObject({ ok: false });
  });

  it(`fails when the batch output passes ${MAX_BATCH_OUTPUT_BYTES} bytes`, async () => {
    const big = {
      status: 200,
      headers: {},
      body: new TextEncoder().encode("y".repeat(5 * 1024 * 1024)),
    };
    const { ctx } = harness(() => big);
    const result = await tool("http.read").execute(
      batch([
        { id: "a", url: "https://api.example/a" },
        { id: "b", url: "https://api.example/b" },
      ]),
      ctx(),
    );
    expect(failureCode(result)).toBe("LIMIT_EXCEEDED");
  });
});

describe("http.* request values", () => {
  it("fills path placeholders (all used), orders query names and leaves null values out", async () => {
    const { transport, ctx } = harness(() => json({}));
    await tool("http.read").execute(
      batch([
        {
          id: "a",
          url: "https://api.example/grid/{office}/{xy}",
          path: { office: "LWX/primary", xy: "97,71" },
          query: { z: 1, a: "b c", n: null },
        },
      ]),
      ctx(),
    );
    expect(transport.sent[0]?.url).toBe("https://api.example/grid/LWX%2Fprimary/97%2C71?a=b+c&z=1");
    const unused = await tool("http.read").execute(
      batch([{ id: "a", url: "https://api.example/x", path: { account: "1" } }]),
      ctx(),
    );
    expect(failureCode(unused)).toBe("INPUT_INVALID");
    expect(unused.status === "failure" && unused.summary).toContain(
      "not present in the request URL",
    );
  });

  it("fills values from earlier responses in the URL, path, query and body", async () => {
    const { transport, ctx } = harness((_req, n) =>
      n === 0 ? json({ data: { id: "u 1", n: 7 } }) : json({ ok: true }),
    );
    const output = successData(
      await tool("http.execute").execute(
        batch([
          { id: "first", method: "GET", url: "https://api.example/me" },
          {
            id: "second",
            method: "POST",
            url: "https://api.example/users/{$response:first.json.data.id}/{kind}",
            path: { kind: { $response: "first.json.data.n" } },
            query: { status: { $response: "first.status" } },
            body: { items: [{ $response: "first.json.data" }] },
          },
        ]),
        ctx(),
      ),
    );
    expect(output).toMatchObject({ decision: "completed", request_count: 2 });
    expect(transport.sent[1]?.url).toBe("https://api.example/users/u%201/7?status=200");
    expect(new TextDecoder().decode(transport.sent[1]?.body)).toBe(
      '{"items":[{"id":"u 1","n":7}]}',
    );
  });

  it("fails on a reference to an unavailable response, after the requests before it", async () => {
    const { transport, ctx } = harness(() => json({ data: {} }));
    const result = await tool("http.read").execute(
      batch([
        { id: "first", url: "https://api.example/me" },
        {
          id: "second",
          url: "https://api.example/u",
          query: { id: { $response: "first.json.data.id" } },
        },
      ]),
      ctx(),
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(result.status === "failure" && result.summary).toContain(
      'unavailable response "first.json.data.id"',
    );
    expect(transport.sent).toHaveLength(1);
  });
});

describe("http.read pagination", () => {
  it("follows the cursor until it runs out, counting pages and items", async () => {
    const pages = [
      json({ items: [1, 2], next: "c2" }),
      json({ items: [3], next: "c3" }),
      json({ items: [4], next: "" }),
    ];
    const { transport, ctx } = harness((_req, n) => pages[n] as Reply);
    const input = batch([
      {
        id: "list",
        url: "https://api.example/list",
        query: { limit: 2 },
        pagination: { cursor_param: "cursor", cursor_path: "next", items_path: "items" },
      },
    ]);
    const output = successData(await tool("http.read").execute(input, ctx()));
    expect(validateToolsHttpReadOutput(output)).toBe(true);
    expect(output.request_count).toBe(3);
    const [list] = responses(output);
    expect(list).toMatchObject({
      page_count: 3,
      item_count: 4,
      next_cursor: null,
      json: { items: [4], next: "" },
    });
    expect((list?.pages as JsonRecord[]).map((page) => page.json)).toHaveLength(3);
    expect(transport.sent.map((r) => r.url)).toEqual([
      "https://api.example/list?limit=2",
      "https://api.example/list?cursor=c2&limit=2",
      "https://api.example/list?cursor=c3&limit=2",
    ]);
  });

  it("stops at max_pages and reports the cursor it did not follow", async () => {
    const { transport, ctx } = harness((_req, n) => json({ items: [n], next: `c${n + 1}` }));
    const output = successData(
      await tool("http.read").execute(
        batch([
          {
            id: "list",
            url: "https://api.example/list",
            pagination: {
              cursor_param: "cursor",
              cursor_path: "next",
              items_path: "items",
              max_pages: 2,
            },
          },
        ]),
        ctx(),
      ),
    );
    expect(responses(output)[0]).toMatchObject({ page_count: 2, item_count: 2, next_cursor: "c2" });
    expect(transport.sent).toHaveLength(2);
  });

  it("refuses pagination on anything but a bodyless GET", async () => {
    const { transport, ctx } = harness(() => json({}));
    const result = await tool("http.execute").execute(
      batch([
        {
          id: "p",
          method: "POST",
          url: "https://api.example/p",
          body: {},
          pagination: { cursor_param: "c", cursor_path: "n", items_path: "i" },
        },
      ]),
      ctx(),
    );
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(transport.sent).toHaveLength(0);
  });
});

describe("http.* stop rules", () => {
  it("stops on 429 without stop_on_error and on non-2xx with it", async () => {
    const throttled = harness(() => json({}, 429));
    const out429 = successData(
      await tool("http.read").execute(
        batch(
          [
            { id: "a", url: "https://api.example/a" },
            { id: "b", url: "https://api.example/b" },
          ],
          { stop_on_error: false },
        ),
        throttled.ctx(),
      ),
    );
    expect(out429).toMatchObject({ decision: "stopped", request_count: 1 });
    const failing = harness(() => json({}, 500));
    const out500 = successData(
      await tool("http.read").execute(
        batch([
          { id: "a", url: "https://api.example/a" },
          { id: "b", url: "https://api.example/b" },
        ]),
        failing.ctx(),
      ),
    );
    expect(out500).toMatchObject({ decision: "stopped", request_count: 1 });
  });

  it("skips a request whose dependency did not succeed, and redacts tainted headers", async () => {
    const { transport, ctx } = harness((_req, n) =>
      n === 0 ? json({}, 404, { "x-echo": "s3cr3t", "set-cookie": "a=b" }) : json({}),
    );
    const output = successData(
      await tool("http.read").execute(
        batch(
          [
            { id: "a", url: "https://api.example/a" },
            { id: "b", url: "https://api.example/b", requires_success_of: ["a"] },
            { id: "c", url: "https://api.example/c" },
          ],
          { stop_on_error: false },
        ),
        ctx({ taint: createTaintSet(["s3cr3t"]) }),
      ),
    );
    const [a, b] = responses(output);
    expect(a?.headers).toEqual({ "content-type": "application/json", "x-echo": REDACTION_MARKER });
    expect(b).toMatchObject({
      id: "b",
      performed: false,
      skip_reason: 'dependency "a" did not succeed',
    });
    expect(output.request_count).toBe(2);
    expect(transport.sent.map((r) => r.url)).toEqual([
      "https://api.example/a",
      "https://api.example/c",
    ]);
    expect(a?.body_digest).toBe(sha256Prefixed("{}"));
  });
});
