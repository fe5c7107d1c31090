/**
 * `web.fetch`: GET one public http(s) page through the governed exchange (admission,
 * pinning, at most five re-admitted redirects, byte and time caps) and return its text,
 * metadata or links. `allowlist` narrows the hosts the fetch and its redirects may reach;
 * `["*"]` means any publicly routable host. A response over `max_bytes` fails the fetch.
 */
import { validateToolsWebFetchInput } from "../generated/validate-tools-web-fetch.input.js";
import inputSchema from "../../schemas/tools/web-fetch.input.schema.json" with { type: "json" };
import outputSchema from "../../schemas/tools/web-fetch.output.schema.json" with { type: "json" };
import { inputValidator, validatedExecute } from "./ajv-input.js";
import {
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  bounded,
  failureOf,
  performExchange,
  projectBody,
  redactHeaders,
  requestDigest,
} from "./http-exchange.js";
import type { ExchangeSpec, NetToolOptions } from "./http-exchange.js";
import { matchesHostPattern } from "./net-guard.js";
import type { JsonRecord, NativeTool, ToolContext, ToolResult } from "./types.js";
import { extractLinks, extractMetadata, htmlToText } from "./web-extract.js";
import { withNamedOutput } from "./packet.js";

/** Default and maximum `max_bytes` of web.fetch (spec §3.4). */
export const WEB_FETCH_DEFAULT_BYTES = 1_000_000;
export const WEB_FETCH_MAX_BYTES = 8 * 1024 * 1024;

const ACCEPT =
  "text/html, application/xhtml+xml, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1";

type Extract = "text" | "metadata" | "links";

const isHtml = (contentType: string | null, text: string): boolean =>
  /html/i.test(contentType ?? "") || (contentType === null && /^\s*<(!doctype|html)/i.test(text));
const isTextual = (contentType: string | null): boolean =>
  contentType === null ||
  /^(text\/|application\/(json|xml|[\w.+-]+\+(json|xml)))/i.test(contentType);

async function fetchPage(
  input: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<ToolResult> {
  const patterns = Array.isArray(input.allowlist)
    ? input.allowlist.filter((entry): entry is string => typeof entry === "string")
    : ["*"];
  const extract: Extract =
    input.extract === "metadata" || input.extract === "links" ? input.extract : "text";
  const spec: ExchangeSpec = {
    method: "GET",
    url: typeof input.url === "string" ? input.url : "",
    headers: { accept: ACCEPT, "user-agent": "runx-web-fetch/1" },
    maxResponseBytes: bounded(input.max_bytes, WEB_FETCH_DEFAULT_BYTES, WEB_FETCH_MAX_BYTES),
    timeoutMs: bounded(input.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
    followRedirects: true,
    hostAllowed: (hostname) => patterns.some((pattern) => matchesHostPattern(hostname, pattern)),
  };
  try {
    const result = await performExchange(ctx, spec, options);
    const body = projectBody(result.response, ctx.taint);
    const finalUrl = ctx.taint.redactText(result.finalUrl);
    const html = isHtml(body.contentType, body.text);
    const output: JsonRecord = {
      schema: "runx.fetch.v1",
      url: ctx.taint.redactText(spec.url),
      final_url: finalUrl,
      redirects: result.redirects,
      status: result.response.status,
      ok: result.response.status >= 200 && result.response.status < 300,
      content_type: body.contentType,
      headers: redactHeaders(result.response.headers, ctx.taint),
      bytes: body.bytes,
      body_sha256: body.sha256,
      request_digest: requestDigest(spec, ctx.taint),
      extract,
    };
    if (extract === "text") {
      output.text = html ? htmlToText(body.text) : isTextual(body.contentType) ? body.text : null;
    } else if (extract === "metadata") {
      const empty = { title: null, description: null, canonical: null, lang: null };
      output.metadata = html ? { ...extractMetadata(body.text, result.finalUrl) } : empty;
    } else {
      output.links = html
        ? extractLinks(body.text, result.finalUrl).map((link) => ({ ...link }))
        : [];
    }
    // Extracted URLs are resolved against the raw final URL; scrub the whole packet once more.
    const redacted = ctx.taint.redactJson(output) as JsonRecord;
    return {
      status: "success",
      output: redacted,
      summary: `${result.response.status} ${finalUrl}`,
    };
  } catch (error) {
    return failureOf(error, ctx.taint);
  }
}

/** The web.fetch tool. */
export function webFetchTool(options: NetToolOptions = {}): NativeTool {
  const validate = inputValidator(validateToolsWebFetchInput);
  const tool: NativeTool = {
    name: "web.fetch",
    description: "Fetch one public http(s) page and return its text, metadata or links.",
    mutating: false,
    scopes: ["net:allowlist"],
    inputSchema,
    outputSchema,
    validateInput: validate,
    execute: validatedExecute("web.fetch", validate, (input, ctx) =>
      fetchPage(input, ctx, options),
    ),
  };
  return withNamedOutput(tool, { name: "fetch_result", packet: "runx.fetch.v1" });
}
