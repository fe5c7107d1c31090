/**
 * `control.prepare_handoff`: validates a provider-neutral workflow handoff and
 * returns `runx.orchestrator.handoff_context.v1` — the canonical delivery envelope a receiver
 * (n8n, Zapier, …) gets, and what it must check before it starts work. No I/O: delivery is
 * a separate, governed provider effect.
 *
 * Bindings: the scope is `orchestrator.<platform>.<…>`, the audience `<platform>:<receiver>`,
 * `event_id` is also the idempotency key (one retry identity), and any of those facts the
 * execution context already carries must agree. The context must say where the handoff came
 * from. Credential values Runx delivered in this run (the taint set) are refused anywhere in
 * the material — keys and values of the payload, context, receiver and request alike.
 */
import inputSchema from "../../../schemas/tools/control-prepare-handoff.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/control-prepare-handoff.output.schema.json" with { type: "json" };
import { validateToolsControlPrepareHandoffInput } from "../../generated/validate-tools-control-prepare-handoff.input.js";
import { RuntimeError } from "../../errors.js";
import { defineTool } from "../define-tool.js";
import { classifyAddress } from "../http/net-guard.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { eachString, isRecord } from "../packet.js";
import type { Json, JsonRecord, NativeTool, ToolContext } from "../types.js";

export const HANDOFF_CONTEXT_PACKET = "runx.orchestrator.handoff_context.v1";
const TOOL = "control.prepare_handoff";

/** Context fields that identify the origin of a handoff (at least one must be non-empty). */
const ORIGIN_FIELDS = [
  "caller",
  "caller_id",
  "principal",
  "principal_id",
  "workflow",
  "workflow_id",
  "workflow_ref",
  "source_workflow",
  "upstream_execution_id",
  "upstream_run_id",
] as const;

/** `control.prepare_handoff` input after schema validation. */
export interface HandoffInput {
  platform: string;
  event_id: string;
  handoff_scope: string;
  handoff_audience: string;
  execution_context: JsonRecord;
  payload: Json;
  source?: string;
  receiver?: JsonRecord;
  request?: { id: string; url: string; path?: Record<string, string> };
}

function invalid(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${TOOL}: ${message}`, { path });
}

/** Whitespace or template braces make a claim ambiguous to the receiver. */
const unsafeClaim = (value: string): boolean => /[\s{}]/.test(value);

function isEmptyPayload(payload: Json): boolean {
  if (payload === null) return true;
  if (typeof payload === "string") return payload.trim() === "";
  if (Array.isArray(payload)) return payload.length === 0;
  if (isRecord(payload)) return Object.keys(payload).length === 0;
  return false;
}

/** Refuses any string (or key) that carries a credential value Runx delivered in this run. */
function rejectDeliveredCredentials(input: HandoffInput, ctx: ToolContext): void {
  eachString(input as unknown as Json, "", (text, at) => {
    if (ctx.taint.taints(text)) {
      // A key can itself be the credential: the path is scrubbed before it is reported.
      const where = ctx.taint.redactText(at);
      throw invalid(
        `${where} carries credential material delivered by Runx; use credential-bound provider auth instead`,
        where,
      );
    }
  });
}

/** A receiver URL must be public HTTPS: no credentials, no loopback/private literal hosts. */
function checkReceiverUrl(receiver: JsonRecord | undefined): void {
  if (receiver === undefined || receiver.url === undefined) return;
  const raw = receiver.url;
  if (typeof raw !== "string") throw invalid("receiver.url must be an HTTPS URL", "receiver.url");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("receiver.url must be a valid HTTPS URL", "receiver.url");
  }
  if (url.protocol !== "https:") throw invalid("receiver.url must use HTTPS", "receiver.url");
  if (url.username !== "" || url.password !== "") {
    throw invalid("receiver.url must not embed credentials", "receiver.url");
  }
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  if (host === "" || host === "localhost" || host.endsWith(".localhost")) {
    throw invalid("receiver.url must name a public host", "receiver.url");
  }
  const literal = classifyAddress(host);
  if (literal !== "invalid" && literal !== "public") {
    throw invalid(`receiver.url must name a public host (not ${literal})`, "receiver.url");
  }
}

/** Builds the handoff context; throws INPUT_INVALID naming the first broken binding. */
export function prepareHandoff(input: HandoffInput, ctx: ToolContext): JsonRecord {
  rejectDeliveredCredentials(input, ctx);
  const platform = input.platform;
  const eventId = input.event_id;
  const scope = input.handoff_scope.trim();
  const audience = input.handoff_audience.trim();
  const scopePrefix = `orchestrator.${platform}.`;
  if (!scope.startsWith(scopePrefix) || scope.length === scopePrefix.length || unsafeClaim(scope)) {
    throw invalid(
      `handoff_scope must be ${scopePrefix}<action> without spaces or braces`,
      "handoff_scope",
    );
  }
  const audiencePrefix = `${platform}:`;
  if (
    !audience.startsWith(audiencePrefix) ||
    audience.length === audiencePrefix.length ||
    unsafeClaim(audience)
  ) {
    throw invalid(
      `handoff_audience must be ${audiencePrefix}<receiver id> without spaces or braces`,
      "handoff_audience",
    );
  }
  const source =
    input.source === undefined || input.source.trim() === "" ? "runx" : input.source.trim();
  const context = input.execution_context;
  const identified = ORIGIN_FIELDS.some((field) => {
    const value = context[field];
    return typeof value === "string" && value.trim() !== "";
  });
  if (!identified) {
    throw invalid(
      `execution_context must identify the caller, principal, workflow or upstream run (one of ${ORIGIN_FIELDS.join(", ")})`,
      "execution_context",
    );
  }
  const bindings: Array<[string, string]> = [
    ["platform", platform],
    ["event_id", eventId],
    ["idempotency_key", eventId],
    ["handoff_scope", scope],
    ["handoff_audience", audience],
  ];
  for (const [field, expected] of bindings) {
    const actual = context[field];
    if (actual !== undefined && (typeof actual !== "string" || actual.trim() !== expected)) {
      throw invalid(
        `execution_context.${field} must match ${expected}`,
        `execution_context.${field}`,
      );
    }
  }
  if (isEmptyPayload(input.payload)) throw invalid("payload must not be empty", "payload");
  checkReceiverUrl(input.receiver);

  const boundContext: JsonRecord = { ...context };
  for (const [field, expected] of bindings) boundContext[field] = expected;
  const delivery: JsonRecord = {
    event_id: eventId,
    handoff_scope: scope,
    handoff_audience: audience,
    execution_context: boundContext,
    payload: input.payload,
    source,
    idempotency_key: eventId,
  };
  const data: JsonRecord = {
    status: "ready",
    platform,
    event_id: eventId,
    idempotency: { key: eventId, receiver_should_dedupe: true },
    handoff: { scope, audience, source },
  };
  if (input.receiver !== undefined) data.receiver = input.receiver;
  data.delivery = delivery;
  data.receiver_validation = {
    require_bearer: true,
    require_scope: scope,
    require_audience: audience,
    require_event_id: eventId,
    reject_duplicate_event_id: true,
  };
  data.receipt_expectations = {
    context_artifact: "handoff_context",
    outbound_effect_must_be_receipted: true,
    receiver_response_must_be_captured: true,
    delivered_credential_material_absent: true,
  };
  if (input.request !== undefined) data.requests = [requestTemplate(input.request, delivery)];
  data.stop_conditions = [];
  return data;
}

/** The exact webhook request: POST of the canonical delivery with the handoff headers. */
function requestTemplate(
  request: NonNullable<HandoffInput["request"]>,
  delivery: JsonRecord,
): JsonRecord {
  const url = request.url;
  if (!url.startsWith("https://") || /\s/.test(url)) {
    throw invalid(
      "request.url must be an HTTPS URL or URL template without whitespace",
      "request.url",
    );
  }
  for (const [key, value] of Object.entries(request.path ?? {})) {
    if (key.trim() === "" || value.trim() === "") {
      throw invalid("request.path keys and values must not be empty", `request.path.${key}`);
    }
  }
  const out: JsonRecord = { id: request.id, method: "POST", url };
  if (request.path !== undefined && Object.keys(request.path).length > 0) out.path = request.path;
  out.headers = {
    "content-type": "application/json",
    "x-runx-event-id": delivery.event_id as string,
    "x-runx-handoff-audience": delivery.handoff_audience as string,
    "x-runx-handoff-scope": delivery.handoff_scope as string,
  };
  out.body = delivery;
  return out;
}

export const controlPrepareHandoffTool: NativeTool = defineTool<HandoffInput, JsonRecord>({
  name: TOOL,
  description:
    "Validate and normalize a provider-neutral workflow handoff (scope, audience, idempotency, origin) without network I/O.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsControlPrepareHandoffInput,
  run(input, ctx) {
    const data = prepareHandoff(input, ctx);
    return Promise.resolve({
      output: { handoff_context: artifactEnvelope(data) },
      summary: `${input.platform} handoff ${input.event_id} ready`,
    });
  },
});
