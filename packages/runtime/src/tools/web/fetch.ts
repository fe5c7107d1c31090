/**
 * `web.fetch`: GET one public http(s) page through the governed exchange (admission,
 * pinning, at most five re-admitted redirects, byte and time caps) and return its text,
 * metadata or links. `allowlist` narrows the hosts the fetch and its redirects may reach;
 * `["*"]` means any publicly routable host. The `runx.fetch.v1` packet carries a decision:
 * `ready` (2xx), `provider_error` (another status, or no usable response, e.g. one over
 * `max_bytes`, which is refused rather than clipped), `policy_denied` (a host off the
 * allowlist or not public; nothing is sent to it) or `needs_agent` (a URL admission cannot
 * parse). Refusals carry no page: empty extract, status 0, the blocker named.
 */
import { validateToolsWebFetchInput } from "../../generated/validate-tools-web-fetch.input.js";
import inputSchema from "../../../schemas/tools/web-fetch.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/web-fetch.output.schema.json" with { type: "json" };
import { inputValidator, validatedExecute } from "../ajv-input.js";
import { isRuntimeError } from "../../errors.js";
import {
  DEFAULT_TIMEOUT_MS,
  MAX_TIMEOUT_MS,
  bounded,
  failureOf,
  performExchange,
  projectBody,
} from "../http/http-exchange.js";
import type { BodyProjection, ExchangeSpec, NetToolOptions } from "../http/http-exchange.js";
import { matchesHostPattern } from "../http/net-guard.js";
import type { Json, JsonRecord, NativeTool, ToolContext, ToolResult } from "../types.js";
import { extractLinks, extractMetadata, htmlToText } from "./extract.js";
import { withNamedOutput } from "../packet.js";

/** Default and maximum `max_bytes` of web.fetch. */
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

/** What a fetch decided (upstream's `fetch_result.decision`). */
type Decision = "ready" | "needs_agent" | "policy_denied" | "provider_error";

const emptyExtract = (extract: Extract): Json =>
  extract === "text" ? "" : extract === "metadata" ? {} : [];

function policyOf(allowed: boolean, attemptedHost: string, allowlist: string[]): JsonRecord {
  return {
    allowlist_decision: allowed ? "allowed" : "denied",
    attempted_host: attemptedHost,
    allowlist_checked: [...allowlist],
  };
}

/** A fetch that returned no page: nothing extracted, no provenance, the blocker named. */
function refusal(
  decision: Decision,
  extract: Extract,
  attemptedHost: string,
  allowlist: string[],
  blocker: string,
): JsonRecord {
  return {
    decision,
    final_url: "",
    status: 0,
    content_digest: "",
    extract_mode: extract,
    extracted: emptyExtract(extract),
    provenance: { fetched_at: "", redirects: [], bytes: 0, truncated: false },
    policy: policyOf(false, attemptedHost, allowlist),
    blockers: [blocker],
  };
}

function extractFrom(body: BodyProjection, extract: Extract, finalUrl: string): Json {
  const html = isHtml(body.contentType, body.text);
  if (extract === "text") {
    return html ? htmlToText(body.text) : isTextual(body.contentType) ? body.text : "";
  }
  if (extract === "links") {
    return html ? extractLinks(body.text, finalUrl).map((link) => link.url) : [];
  }
  const metadata: JsonRecord = { content_type: body.contentType ?? "" };
  if (html) {
    const found = extractMetadata(body.text, finalUrl);
    if (found.title !== null) metadata.title = found.title;
    if (found.description !== null) metadata.description = found.description;
    if (found.canonical !== null) metadata.canonical = found.canonical;
    if (found.lang !== null) metadata.declared_language = found.lang;
  }
  return metadata;
}

async function fetchPage(
  input: JsonRecord,
  ctx: ToolContext,
  options: NetToolOptions,
): Promise<ToolResult> {
  const allowlist = (
    Array.isArray(input.allowlist)
      ? input.allowlist.filter((entry): entry is string => typeof entry === "string")
      : ["*"]
  ).map((entry) => entry.trim().toLowerCase());
  const extract: Extract =
    input.extract === "metadata" || input.extract === "links" ? input.extract : "text";
  const url = typeof input.url === "string" ? input.url.trim() : "";
  let initialHost = "";
  try {
    initialHost = new URL(url).hostname.toLowerCase();
  } catch {
    // An unparsable URL is refused by admission below.
  }
  // The host admission last looked at: the URL's, or the redirect hop's that was refused.
  let attemptedHost = initialHost;
  const spec: ExchangeSpec = {
    method: "GET",
    url,
    headers: { accept: ACCEPT, "user-agent": "runx-web-fetch/1" },
    maxResponseBytes: bounded(input.max_bytes, WEB_FETCH_DEFAULT_BYTES, WEB_FETCH_MAX_BYTES),
    timeoutMs: bounded(input.timeout_ms, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS),
    followRedirects: true,
    hostAllowed: (hostname) => {
      attemptedHost = hostname.toLowerCase();
      return allowlist.some((pattern) => matchesHostPattern(hostname, pattern));
    },
  };
  let packet: JsonRecord;
  try {
    const result = await performExchange(ctx, spec, options);
    const body = projectBody(result.response, ctx.taint);
    const status = result.response.status;
    const ok = status >= 200 && status < 300;
    packet = {
      decision: ok ? "ready" : "provider_error",
      final_url: result.finalUrl,
      status,
      content_digest: body.sha256,
      extract_mode: extract,
      extracted: extractFrom(body, extract, result.finalUrl),
      provenance: {
        fetched_at: ctx.now().toISOString(),
        redirects: result.hops.map((hop) => ({ ...hop })),
        bytes: body.bytes,
        // A response over max_bytes is refused, never clipped.
        truncated: false,
      },
      policy: policyOf(true, initialHost, allowlist),
      blockers: ok ? [] : [`provider returned HTTP ${status}`],
    };
  } catch (error) {
    const code = isRuntimeError(error) ? error.code : "INTERNAL";
    const decision: Decision | undefined =
      code === "NETWORK_DENIED"
        ? "policy_denied"
        : code === "INPUT_INVALID"
          ? "needs_agent"
          : code.startsWith("HTTP_")
            ? "provider_error"
            : undefined;
    // Cancellation, unmatched harness fixtures and internal faults stay failures.
    if (decision === undefined || !isRuntimeError(error)) return failureOf(error, ctx.taint);
    packet = refusal(decision, extract, attemptedHost, allowlist, error.message);
  }
  // Extracted URLs are resolved against the raw final URL; scrub the whole packet once.
  const redacted = ctx.taint.redactJson(packet) as JsonRecord;
  const decided = typeof packet.decision === "string" ? packet.decision : "ready";
  const where =
    typeof redacted.final_url === "string" && redacted.final_url !== ""
      ? redacted.final_url
      : attemptedHost;
  return {
    status: "success",
    output: redacted,
    summary: `${decided} ${where}`,
  };
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
    // JSON imports of heterogeneous arrays type their gaps as `?: undefined`.
    outputSchema: outputSchema as object as JsonRecord,
    validateInput: validate,
    execute: validatedExecute("web.fetch", validate, (input, ctx) =>
      fetchPage(input, ctx, options),
    ),
  };
  return withNamedOutput(tool, { name: "fetch_result", packet: "runx.fetch.v1" });
}
