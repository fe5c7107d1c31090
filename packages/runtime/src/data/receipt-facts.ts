/**
 * What a step receipt records about a data operation (live receipts' metadata): the logical
 * source, resource, stream, operation, status, version movement, event ref, the three digests,
 * redactions and stop codes. Never the binding, a path, an endpoint or event content.
 */
import type { Json, JsonRecord } from "../contracts/json.js";
import { DATA_RESULT_SCHEMA } from "./model.js";

/** `{data_operation: {...}}` for a data tool's output, else `{}`. */
export function dataReceiptFacts(output: JsonRecord | undefined): JsonRecord {
  if (output === undefined || output.schema !== DATA_RESULT_SCHEMA) return {};
  const pick = (key: string): Json => output[key] ?? null;
  const evidence = output.provider_evidence;
  const stops = Array.isArray(output.stop_conditions) ? output.stop_conditions : [];
  return {
    data_operation: {
      data_source_ref: pick("data_source_ref"),
      provider: pick("provider"),
      adapter:
        evidence !== null && typeof evidence === "object" && !Array.isArray(evidence)
          ? (evidence.adapter ?? null)
          : null,
      operation: pick("operation"),
      resource: pick("resource"),
      aggregate_id: pick("aggregate_id"),
      status: pick("status"),
      before_version: pick("before_version"),
      after_version: pick("after_version"),
      idempotency_key: pick("idempotency_key"),
      event_ref: pick("event_ref"),
      event_digest: pick("event_digest"),
      result_digest: pick("result_digest"),
      projection_digest: pick("projection_digest"),
      redactions: pick("redactions"),
      stop_codes: stops.map((stop) =>
        stop !== null && typeof stop === "object" && !Array.isArray(stop)
          ? (stop.code ?? null)
          : null,
      ),
    },
  };
}
