import { afterEach, describe, expect, it } from "vitest";
import { validateToolsWebFetchOutput } from "../generated/validate-tools-web-fetch.output.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import { startTestServer } from "./http-test-server.js";
import type { TestHandler, TestServer } from "./http-test-server.js";
import { createHttpTransport } from "./http-transport.js";
import { failureCode, makeToolContext, successData } from "./test-context.js";
import type { ToolContext } from "./types.js";
import { webFetchTool } from "./web-fetch.js";
import { decodeEntities, extractLinks, extractMetadata, htmlToText } from "./web-extract.js";

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
      schema: "runx.fetch.v1",
      status: 200,
      content_type: "text/html; charset=utf-8",
      body_sha256: sha256Prefixed(PAGE),
      extract: "text",
    });
    expect(output.text).toContain("First paragraph with bold text.");
    expect(output.text).not.toContain("do not show");
    expect(output.text).not.toContain("color:red");
  });

  it("extracts metadata resolved against the final URL", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/html").end(PAGE));
    const output = successData(
      await fetchTool.execute({ url: `${srv.origin}/doc`, extract: "metadata" }, ctx()),
    );
    expect(output.metadata).toEqual({
      title: "HTTP & Semantics",
      description: "Fixture RFC evidence",
      canonical: `${srv.origin}/rfc9110`,
      lang: "en",
    });
  });

  it("extracts distinct http links only", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/html").end(PAGE));
    const output = successData(
      await fetchTool.execute({ url: `${srv.origin}/doc`, extract: "links" }, ctx()),
    );
    expect(output.links).toEqual([
      { url: `${srv.origin}/a`, text: "Link A" },
      { url: "https://other.example/b", text: "B" },
    ]);
  });

  it("returns plain text bodies as they are", async () => {
    const srv = await serve((_req, res) => res.setHeader("content-type", "text/plain").end("a\nb"));
    const output = successData(await fetchTool.execute({ url: srv.origin }, ctx()));
    expect(output.text).toBe("a\nb");
  });

  it("refuses hosts outside the allowlist and loopback without the private-network grant", async () => {
    const srv = await serve((_req, res) => res.end("x"));
    const narrowed = { url: srv.origin, allowlist: ["*.example.com"] };
    expect(failureCode(await fetchTool.execute(narrowed, ctx()))).toBe("NETWORK_DENIED");
    const closed = ctx({ allowPrivateNetwork: false });
    expect(failureCode(await fetchTool.execute({ url: srv.origin }, closed))).toBe(
      "NETWORK_DENIED",
    );
    expect(srv.received).toHaveLength(0);
  });

  it("fails when the page is larger than max_bytes", async () => {
    const srv = await serve((_req, res) => res.end("p".repeat(2000)));
    const result = await fetchTool.execute({ url: srv.origin, max_bytes: 100 }, ctx());
    expect(failureCode(result)).toBe("HTTP_RESPONSE_TOO_LARGE");
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
