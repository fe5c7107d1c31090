/**
 * The HTTP tools' `auth` binding: bearer and OAuth 1.0a HMAC-SHA1 from delivered secrets,
 * only to hosts inside the resolved credential's audience, never echoed.
 */
import { describe, expect, it } from "vitest";
import { createTaintSet } from "../../redaction.js";
import { scriptedTransport } from "../../testing/http-server.js";
import { httpTools } from "./http-tools.js";
import type { Resolver } from "./net-guard.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";
import { oauth1Header } from "./auth.js";

const resolver: Resolver = (hostname) =>
  hostname === "api.example" || hostname === "other.example"
    ? Promise.resolve([{ address: "93.184.216.34", family: 4 }])
    : Promise.reject(new Error("ENOTFOUND"));
const read = httpTools({ resolver }).find((t) => t.name === "http.read") as NativeTool;

const TOKEN = "tok-3f9a1c77e2";
const OAUTH = JSON.stringify({
  consumer_key: "ck-1",
  consumer_secret: "cs-2",
  access_token: "at-3",
  access_secret: "as-4",
});

function setup(credentials: ToolContext["credentials"]) {
  // The server echoes what it was sent, as a hostile or careless API might.
  const transport = scriptedTransport((req) => ({
    status: 200,
    headers: { "content-type": "application/json" },
    body: new TextEncoder().encode(JSON.stringify({ saw: req.headers.authorization ?? null })),
  }));
  const taint = createTaintSet();
  for (const value of Object.values(credentials?.secrets ?? {})) taint.add(value);
  const ctx = makeToolContext({
    workspaceRoot: "/nonexistent-workspace",
    http: transport,
    scopes: ["net:http"],
    taint,
    ...(credentials !== undefined ? { credentials } : {}),
  });
  return { transport, ctx };
}

const input = (auth: JsonRecord, hosts = ["api.example"]): JsonRecord => ({
  requests: [{ id: "a", url: "https://api.example/me?x=1" }],
  allowed_hosts: hosts,
  auth,
});
const summaryOf = (result: ToolResult): string =>
  result.status === "failure" ? result.summary : "";

describe("http.* auth", () => {
  it("sends a bearer token from the delivered secret and never echoes it", async () => {
    const { transport, ctx } = setup({
      secrets: { API_TOKEN: TOKEN },
      audienceHosts: ["api.example"],
    });
    const result = await read.execute(input({ type: "bearer", secret_env: "API_TOKEN" }), ctx);
    const data = successData(result);
    expect(transport.sent[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(data.decision).toBe("completed");
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  it("signs each request with OAuth 1.0a HMAC-SHA1 from the delivered JSON material", async () => {
    const { transport, ctx } = setup({
      secrets: { X_OAUTH: OAUTH },
      audienceHosts: ["api.example"],
    });
    successData(await read.execute(input({ type: "oauth1", secret_env: "X_OAUTH" }), ctx));
    const header = transport.sent[0]?.headers.authorization ?? "";
    expect(header).toMatch(/^OAuth oauth_consumer_key="ck-1", oauth_nonce="[0-9a-f]{32}", /);
    expect(header).toContain('oauth_signature_method="HMAC-SHA1"');
    expect(header).toContain(`oauth_timestamp="${Math.floor(ctx.now().getTime() / 1000)}"`);
    expect(header).toContain('oauth_token="at-3", oauth_version="1.0"');
    expect(header).not.toContain("cs-2");
    expect(header).not.toContain("as-4");
  });

  it("computes the OAuth 1.0 reference signature", () => {
    // The worked example of the OAuth 1.0 specification (photos.example.net).
    const header = oauth1Header(
      "GET",
      "http://photos.example.net/photos?file=vacation.jpg&size=original",
      {
        consumer_key: "dpf43f3p2l4k3l03",
        consumer_secret: "kd94hf93k423kf44",
        access_token: "nnch734d00sl2jdk",
        access_secret: "pfkkdhi9sl3r4s00",
      },
      { nonce: "kllo9940pd9333jh", timestamp: "1191242096" },
    );
    expect(header).toContain('oauth_signature="tR3%2BTy81lMeYAr%2FFid0kMTYa%2FWM%3D"');
  });

  it("refuses auth without a resolved credential audience, before sending", async () => {
    const { transport, ctx } = setup({ secrets: { API_TOKEN: TOKEN }, audienceHosts: [] });
    const result = await read.execute(input({ type: "bearer", secret_env: "API_TOKEN" }), ctx);
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(summaryOf(result)).toContain("resolved credential audience binding");
    expect(transport.sent).toHaveLength(0);
  });

  it("refuses an allowed host outside the credential's audience", async () => {
    const { transport, ctx } = setup({
      secrets: { API_TOKEN: TOKEN },
      audienceHosts: ["api.example"],
    });
    const result = await read.execute(
      input({ type: "bearer", secret_env: "API_TOKEN" }, ["api.example", "other.example"]),
      ctx,
    );
    expect(summaryOf(result)).toContain('"other.example" is outside the resolved credential');
    expect(transport.sent).toHaveLength(0);
  });

  it("refuses a secret the run did not deliver, naming only the variable", async () => {
    const { transport, ctx } = setup({
      secrets: { API_TOKEN: TOKEN },
      audienceHosts: ["api.example"],
    });
    const result = await read.execute(input({ type: "bearer", secret_env: "OTHER" }), ctx);
    expect(summaryOf(result)).toContain("delivered secret OTHER is missing");
    expect(transport.sent).toHaveLength(0);
  });

  it("refuses OAuth1 material that is not complete JSON, without echoing it", async () => {
    const { ctx } = setup({
      secrets: {
        X_OAUTH:
          '{"consumer_key":"ck-1","consumer_secret":"","access_token":"a","access_secret":"b"}',
      },
      audienceHosts: ["api.example"],
    });
    const result = await read.execute(input({ type: "oauth1", secret_env: "X_OAUTH" }), ctx);
    expect(summaryOf(result)).toContain("delivered secret X_OAUTH has incomplete OAuth1 material");
    expect(summaryOf(result)).not.toContain("ck-1");
  });

  it("refuses an unknown auth type", async () => {
    const { ctx } = setup(undefined);
    const result = await read.execute(input({ type: "basic", secret_env: "T" }), ctx);
    expect(failureCode(result)).toBe("INPUT_INVALID");
    expect(summaryOf(result)).toContain("must be bearer or oauth1");
  });
});
