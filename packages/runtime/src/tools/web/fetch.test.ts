import { afterEach, describe, expect, it } from "vitest";
import { validateToolsWebFetchOutput } from "../../generated/validate-tools-web-fetch.output.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { REDACTION_MARKER, createTaintSet } from "../../redaction.js";
import { startTestServer } from "../../testing/http-server.js";
import type { TestHandler, TestServer } from "../../testing/http-server.js";
import { createHttpTransport } from "../http/http-transport.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type { ToolContext } from "../types.js";
import { webFetchTool } from "./fetch.js";
import { decodeEntities, extractLinks, extractMetadata, htmlToText } from "./extract.js";

const PAGE = `<!doctype html><html lang="en"><head><title>HTTP &amp; Semantics</title>
<meta content="Fixture RFC evidence" name="description">
<link rel="canonical" href="/rfc9110"><style>body{color:red}</style>
<script>var hidden = "do not show";</script></head>
<body><h1>Intro</h1><p>First&nbsp;paragraph with <b>bold</b> text.</p>
<a href="/a">Link A</a> <a href='https://other.example/b#frag'>B</a>
<a href="mailto:x@y.z">mail</a><a href="/a">dup</a></body></html>`;

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(handler: TestHandler): Promise<TestServer> {
  server = await startTestServer(handler);
  return server;
}

const fetchTool = webFetchTool();
const ctx = (overrides: Partial<ToolContext> = {}): ToolContext =>
  makeToolContext({
    workspaceRoot: "/nonexistent-workspace",
    http: createHttpTransport(),
    allowPrivateNetwork: true,
    ...overrides,
  });

describe("web.fetch", () => {
  it("returns the readable text of a page with its content type and digest", async () => {
    const srv = await serve((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end(PAGE);
    });
    const input = { url: `${srv.origin}/doc` };
    expect(fetchTool.validateInput(input)).toEqual({ ok: true });
    const output = successData(await fetchTool.execute(input, ctx()));
    expect(validateToolsWebFetchOutput(output)).toBe(true);
    expect(output).toMatchObject({
      decision: "ready",
      final_url: `${srv.origin}/doc`,
      status: 200,
      content_digest: sha256Prefixed(PAGE),
      extract_mode: "text",
      provenance: { redirects: [], bytes: Buffer.byteLength(PAGE), truncated: false },
      policy: {
        allowlist_decision: "allowed",
        attempted_host: "127.0.0.1",
        allowlist_checked: ["*"],
      },
      blockers: [],
    });
    expect((output.provenance as { fetched_at: string }).fetched_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(output.extracted).toContain("First paragraph with bold text.");
    expect(output.extracted).not.toContain("do not show");
    expect(output.extracted).not.toContain("color:red");
  });

  it("extracts metadata resolved against the final URL", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/html").end(PAGE));
    const output = successData(
      await fetchTool.execute({ url: `${srv.origin}/doc`, extract: "metadata" }, ctx()),
    );
    expect(validateToolsWebFetchOutput(output)).toBe(true);
    expect(output.extract_mode).toBe("metadata");
    expect(output.extracted).toEqual({
      content_type: "text/html",
      title: "HTTP & Semantics",
      description: "Fixture RFC evidence",
      canonical: `${srv.origin}/rfc9110`,
      declared_language: "en",
    });
  });

  it("extracts distinct http links only", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/html").end(PAGE));
    const output = successData(
      await fetchTool.execute({ url: `${srv.origin}/doc`, extract: "links" }, ctx()),
    );
    expect(validateToolsWebFetchOutput(output)).toBe(true);
    expect(output.extracted).toEqual([`${srv.origin}/a`, "https://other.example/b"]);
  });

  it("returns plain text bodies as they are", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/plain").end("a\nb"));
    const output = successData(await fetchTool.execute({ url: srv.origin }, ctx()));
    expect(output.extracted).toBe("a\nb");
  });

  it("decides policy_denied for hosts off the allowlist or not public, sending nothing", async () => {
    const srv = await serve((_req, res) => res.end("x"));
    const narrowed = { url: srv.origin, allowlist: ["*.Example.com"], extract: "links" };
    const denied = successData(await fetchTool.execute(narrowed, ctx()));
    expect(validateToolsWebFetchOutput(denied)).toBe(true);
    expect(denied).toMatchObject({
      decision: "policy_denied",
      final_url: "",
      status: 0,
      content_digest: "",
      extract_mode: "links",
      extracted: [],
      provenance: { fetched_at: "", redirects: [], bytes: 0, truncated: false },
      policy: {
        allowlist_decision: "denied",
        attempted_host: "127.0.0.1",
        allowlist_checked: ["*.example.com"],
      },
    });
    expect(denied.blockers).toHaveLength(1);
    const closed = ctx({ allowPrivateNetwork: false });
    const loopback = successData(await fetchTool.execute({ url: srv.origin }, closed));
    expect(loopback).toMatchObject({ decision: "policy_denied", extracted: "" });
    expect(srv.received).toHaveLength(0);
  });

  it("records redirect hops and decides policy_denied at a hop off the allowlist", async () => {
    const srv = await serve((req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: "/end" }).end();
      else if (req.url === "/away") res.writeHead(302, { location: "http://localhost/" }).end();
      else res.setHeader("content-type", "text/plain").end("arrived");
    });
    const followed = successData(await fetchTool.execute({ url: `${srv.origin}/start` }, ctx()));
    expect(followed).toMatchObject({
      decision: "ready",
      final_url: `${srv.origin}/end`,
      extracted: "arrived",
      provenance: {
        redirects: [{ status: 302, from: `${srv.origin}/start`, to: `${srv.origin}/end` }],
      },
    });
    const away = successData(
      await fetchTool.execute({ url: `${srv.origin}/away`, allowlist: ["127.0.0.1"] }, ctx()),
    );
    expect(away).toMatchObject({
      decision: "policy_denied",
      policy: { allowlist_decision: "denied", attempted_host: "localhost" },
    });
  });

  it("decides provider_error for a non-2xx page, keeping what it returned", async () => {
    const srv = await serve((_req, res) =>
      res.writeHead(503, { "content-type": "text/plain" }).end("busy"),
    );
    const output = successData(await fetchTool.execute({ url: srv.origin }, ctx()));
    expect(validateToolsWebFetchOutput(output)).toBe(true);
    expect(output).toMatchObject({
      decision: "provider_error",
      status: 503,
      extracted: "busy",
      policy: { allowlist_decision: "allowed" },
      blockers: ["provider returned HTTP 503"],
    });
  });

  it("decides provider_error when the page is larger than max_bytes, returning none of it", async () => {
    const srv = await serve((_req, res) => res.end("p".repeat(2000)));
    const output = successData(await fetchTool.execute({ url: srv.origin, max_bytes: 100 }, ctx()));
    expect(output).toMatchObject({ decision: "provider_error", status: 0, extracted: "" });
    expect(JSON.stringify(output)).not.toContain("ppp");
  });

  it("decides needs_agent for a URL admission cannot parse", async () => {
    const output = successData(await fetchTool.execute({ url: "http://" }, ctx()));
    expect(validateToolsWebFetchOutput(output)).toBe(true);
    expect(output).toMatchObject({
      decision: "needs_agent",
      status: 0,
      policy: { allowlist_decision: "denied", allowlist_checked: ["*"] },
      blockers: ["is not a valid absolute URL"],
    });
  });

  it("redacts delivered secrets from the extract, the redirect chain and the digest", async () => {
    const secret = "sk-web-0123456789";
    const page = `<p>key ${secret}</p>`;
    const srv = await serve((req, res) => {
      if (req.url === "/start") res.writeHead(302, { location: `/k/${secret}` }).end();
      else res.setHeader("content-type", "text/html").end(page);
    });
    const output = successData(
      await fetchTool.execute(
        { url: `${srv.origin}/start` },
        ctx({ taint: createTaintSet([secret]) }),
      ),
    );
    expect(JSON.stringify(output)).not.toContain(secret);
    expect(output.extracted).toBe(`key ${REDACTION_MARKER}`);
    expect(output.content_digest).not.toBe(sha256Prefixed(page));
  });

  it("keeps cancellation a failure", async () => {
    const srv = await serve(() => {
      // never respond
    });
    const controller = new AbortController();
    const pending = fetchTool.execute({ url: srv.origin }, ctx({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 50);
    expect(failureCode(await pending)).toBe("INTERRUPTED");
  });

  it("rejects a max_bytes above 8 MiB and non-http URLs at validation", () => {
    expect(
      fetchTool.validateInput({ url: "https://a.example/", max_bytes: 9 * 1024 * 1024 }),
    ).toMatchObject({ ok: false, path: "max_bytes" });
    expect(fetchTool.validateInput({ url: "file:///etc/passwd" })).toMatchObject({
      ok: false,
      path: "url",
    });
  });
});

describe("web extraction", () => {
  it("decodes named and numeric character references", () => {
    expect(decodeEntities("&lt;a&gt; &#65;&#x42; &amp;amp; &bogus;")).toBe("<a> AB &amp; &bogus;");
  });

  it("turns block boundaries into lines and drops hidden content", () => {
    const text = htmlToText("<div>one</div><!-- c --><noscript>n</noscript><p>two   three</p>");
    expect(text).toBe("one\ntwo three");
  });

  it("reports null metadata fields when a page has none", () => {
    expect(extractMetadata("<p>x</p>", "https://a.example/")).toEqual({
      title: null,
      description: null,
      canonical: null,
      lang: null,
    });
  });

  it("ignores javascript links and links inside scripts", () => {
    const html = `<a href="javascript:alert(1)">x</a><script>"<a href='/s'>s</a>"</script><a href="/ok">ok</a>`;
    expect(extractLinks(html, "https://a.example/dir/")).toEqual([
      { url: "https://a.example/ok", text: "ok" },
    ]);
  });
});
