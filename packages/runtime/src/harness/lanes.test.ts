import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import { parseHttpLanes, parseProviderLane, parseSeedReceipts } from "./lanes.js";

function messageOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isRuntimeError(error) && error.code === "HARNESS_INVALID") return error.message;
    throw error;
  }
  return "(accepted)";
}

const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

describe("HTTP lanes", () => {
  it("canonicalizes URLs and encodes string and JSON bodies", () => {
    const lanes = parseHttpLanes({
      http_responses: {
        "HTTPS://Example.TEST/a b": {
          status: 200,
          headers: { "Content-Type": "text/plain" },
          body: "ok",
        },
      },
      http_exchanges: [
        {
          request: { method: "POST", url: "https://api.test/x", body: { json: null } },
          response: { status: 201, body: { id: 7, a: [1] } },
        },
        { request: { method: "DELETE", url: "https://api.test/x", body: "none" }, response: {} },
      ],
    });
    const legacy = lanes?.responses.get("https://example.test/a%20b");
    expect(legacy?.headers).toEqual({ "content-type": "text/plain" });
    expect(text(legacy?.body ?? new Uint8Array())).toBe("ok");
    const [post, del] = lanes?.exchanges ?? [];
    expect(post?.request).toEqual({
      method: "POST",
      url: "https://api.test/x",
      body: { kind: "json", value: null },
    });
    expect(text(post?.response.body ?? new Uint8Array())).toBe('{"a":[1],"id":7}');
    expect(post?.response.headers).toEqual({ "content-type": "application/json" });
    expect(del?.request.body).toEqual({ kind: "none" });
    expect(del?.response.status).toBe(200);
    expect(parseHttpLanes({})).toBeUndefined();
  });

  it.each<[string, JsonObject, string]>([
    [
      "a fragment",
      { http_responses: { "https://a.test/x#y": {} } },
      "caller.http_responses.https://a.test/x#y: a fixture URL may not carry a fragment",
    ],
    [
      "credentials",
      {
        http_exchanges: [{ request: { method: "GET", url: "https://u:p@a.test/" }, response: {} }],
      },
      "caller.http_exchanges[0].request.url: a fixture URL may not carry credentials",
    ],
    [
      "a non-http URL",
      { http_responses: { "ftp://a.test/": {} } },
      "must be an absolute http(s) URL",
    ],
    [
      "a bad method",
      { http_exchanges: [{ request: { method: "HEAD", url: "https://a.test/" }, response: {} }] },
      "caller.http_exchanges[0].request.method: must be one of GET, POST, PUT, PATCH, DELETE",
    ],
    [
      "a bad body form",
      {
        http_exchanges: [
          { request: { method: "POST", url: "https://a.test/", body: { a: 1 } }, response: {} },
        ],
      },
      'caller.http_exchanges[0].request.body: must be "none" or {json: <value>}',
    ],
    [
      "a bad status",
      { http_responses: { "https://a.test/": { status: 99 } } },
      "caller.http_responses.https://a.test/.status: must be an integer from 100 to 599",
    ],
    [
      "a duplicate URL",
      { http_responses: { "https://a.test/": {}, "HTTPS://A.TEST/": {} } },
      "caller.http_responses.HTTPS://A.TEST/: duplicates another entry for https://a.test/",
    ],
    [
      "too many URLs",
      {
        http_responses: Object.fromEntries(
          Array.from({ length: 33 }, (_, i) => [`https://a.test/${i}`, {}]),
        ),
      },
      "caller.http_responses: at most 32 URLs",
    ],
    [
      "a long URL",
      { http_responses: { [`https://a.test/${"x".repeat(2048)}`]: {} } },
      "URL is longer than 2048 characters",
    ],
    [
      "a large body",
      { http_responses: { "https://a.test/": { body: "x".repeat(1024 * 1024 + 1) } } },
      "body is larger than 1048576 bytes",
    ],
    [
      "too many headers",
      {
        http_responses: {
          "https://a.test/": {
            headers: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`h${i}`, "v"])),
          },
        },
      },
      "at most 64 headers",
    ],
  ])("refuses %s, naming the field", (_what, caller, message) => {
    expect(messageOf(() => parseHttpLanes(caller))).toContain(message);
  });
});

describe("provider response lane", () => {
  const grants = [{ grant_id: "g", provider: "slack", scopes: ["messages.search"] }];
  const op = { grant_id: "g", operation: "messages.search", target: "slack://m", access: "read" };

  it("parses grants and operations", () => {
    const lane = parseProviderLane({
      provider_responses: { principal_id: "p", grants, operations: [{ ...op, result: { a: 1 } }] },
    });
    expect(lane).toEqual({
      principal_id: "p",
      grants,
      operations: [{ ...op, result: { a: 1 } }],
    });
  });

  it.each<[string, JsonObject, string]>([
    [
      "no grants",
      { principal_id: "p", grants: [], operations: [op] },
      "caller.provider_responses.grants: must list 1 to 16 grants",
    ],
    [
      "an unknown grant",
      { principal_id: "p", grants, operations: [{ ...op, grant_id: "h" }] },
      "caller.provider_responses.operations[0].grant_id: no declared grant h",
    ],
    [
      "a bad access",
      { principal_id: "p", grants, operations: [{ ...op, access: "write" }] },
      "caller.provider_responses.operations[0].access: must be read or mutate",
    ],
    [
      "a missing principal",
      { grants, operations: [op] },
      "caller.provider_responses.principal_id: must be a non-empty string",
    ],
    [
      "a duplicate grant",
      { principal_id: "p", grants: [...grants, ...grants], operations: [op] },
      "caller.provider_responses.grants[1].grant_id: duplicate grant id g",
    ],
  ])("refuses %s, naming the field", (_what, lane, message) => {
    expect(messageOf(() => parseProviderLane({ provider_responses: lane }))).toBe(message);
  });
});

describe("setup.receipts", () => {
  it("accepts normalized package-relative .json paths", () => {
    expect(parseSeedReceipts({ receipts: ["fixtures/store/a.json"] })).toEqual([
      "fixtures/store/a.json",
    ]);
  });

  it.each(["../a.json", "/abs.json", "a/./b.json", "a//b.json", "a\\b.json", "a.txt"])(
    "refuses %s",
    (path) => {
      expect(messageOf(() => parseSeedReceipts({ receipts: [path] }))).toMatch(
        /^setup\.receipts\[0\]: /,
      );
    },
  );

  it("refuses more than 32 seeds and unknown setup fields", () => {
    const many = Array.from({ length: 33 }, (_, i) => `r${i}.json`);
    expect(messageOf(() => parseSeedReceipts({ receipts: many }))).toBe(
      "setup.receipts: at most 32 receipts",
    );
    expect(messageOf(() => parseSeedReceipts({ files: [] }))).toBe(
      "setup.files: unknown setup field",
    );
  });
});
