/**
 * The `runx.data.operation_result.v1` envelope every data operation returns: one builder
 * for every status, the page form `read_events` returns, and the stop form for refusals
 * found before or outside storage.
 */
import { hashCanonical } from "../receipts/canonical.js";
import type { JsonRecord } from "../contracts/json.js";
import { DATA_RESULT_SCHEMA } from "./model.js";
import type { DataOperation, DataOperationResult, EventRecord, StopCondition } from "./model.js";

/** What an envelope needs beyond its status-specific fields. */
export interface EnvelopeBase {
  source: string;
  provider: string;
  operation: DataOperation;
  resource: string;
  aggregateId: string;
  evidence: JsonRecord;
}

/**
 * Builds an envelope: absent digests and refs are null, absent collections empty. One literal,
 * no spread of `fields` (V8 copies a spread property by property, which cost an append more
 * than one of its SHA-256s).
 */
export function envelope(
  base: EnvelopeBase,
  fields: Pick<
    DataOperationResult,
    "status" | "before_version" | "after_version" | "result_digest" | "projection_digest"
  > &
    Partial<DataOperationResult>,
): DataOperationResult {
  return {
    schema: DATA_RESULT_SCHEMA,
    data_source_ref: base.source,
    provider: base.provider,
    operation: base.operation,
    resource: base.resource,
    aggregate_id: base.aggregateId,
    idempotency_key: fields.idempotency_key ?? null,
    event_ref: fields.event_ref ?? null,
    event_digest: fields.event_digest ?? null,
    projection: fields.projection ?? null,
    events: fields.events ?? [],
    rows: fields.rows ?? [],
    redactions: fields.redactions ?? [],
    stop_conditions: fields.stop_conditions ?? [],
    status: fields.status,
    before_version: fields.before_version,
    after_version: fields.after_version,
    result_digest: fields.result_digest,
    projection_digest: fields.projection_digest,
    provider_evidence: base.evidence,
  };
}

/** `read_events`' envelope: a page of events, its paging fields placed before the evidence. */
export function pageEnvelope(
  base: EnvelopeBase,
  head: { version: number; projection_digest: string },
  page: { events: EventRecord[]; limit: number; next_after_version: number; has_more: boolean },
  resultDigest: string,
): DataOperationResult {
  const { provider_evidence, ...fields } = envelope(base, {
    status: "read",
    before_version: head.version,
    after_version: head.version,
    result_digest: resultDigest,
    projection_digest: head.projection_digest,
    events: page.events,
    rows: page.events,
  });
  return {
    ...fields,
    limit: page.limit,
    next_after_version: page.next_after_version,
    has_more: page.has_more,
    provider_evidence,
  };
}

/** An envelope for a stop found before or outside storage (status `stopped`, or `provider_unavailable`). */
export function stopEnvelope(
  base: EnvelopeBase,
  stop: StopCondition,
  version = 0,
  projectionDigest?: string,
  /** The fields withheld (`redaction_required`): where they were, never what they held. */
  redactions: JsonRecord[] = [],
): DataOperationResult {
  const digest =
    redactions.length === 0
      ? hashCanonical(stop)
      : hashCanonical({ redactions, stop_conditions: [stop] });
  return envelope(base, {
    status: stop.code === "provider_unavailable" ? "provider_unavailable" : "stopped",
    before_version: version,
    after_version: version,
    result_digest: digest,
    projection_digest: projectionDigest ?? digest,
    stop_conditions: [stop],
    redactions,
  });
}
