/**
 * How a data operation stops short: the caller lacks the operation's scope, the binding does
 * not declare the resource, storage failed, or the events carry secret-like fields. Each
 * becomes a stop envelope naming what was refused, never a value it refused.
 */
import type { JsonRecord } from "../contracts/json.js";
import { stopEnvelope } from "./envelope.js";
import type { EnvelopeBase } from "./envelope.js";
import { DataStop, MAX_REDACTIONS, scopeOf, secretFieldPaths } from "./model.js";
import type { DataOperation, DataOperationResult, EventRecord } from "./model.js";

/** `needs_authority` when the caller's scopes lack the operation's scope. */
export function authorityStop(
  operation: DataOperation,
  scopes: readonly string[] | undefined,
): DataStop | undefined {
  if (scopes === undefined) return undefined;
  const needed = scopeOf(operation);
  if (scopes.includes(needed)) return undefined;
  return new DataStop(
    "needs_authority",
    `data.${operation} requires scope ${needed}, which the caller was not granted`,
  );
}

/** `needs_source` when the binding declares resources and not this one. */
export function resourceStop(
  source: string,
  resource: string,
  declared: readonly string[] | undefined,
): DataStop | undefined {
  if (declared === undefined || declared.includes(resource)) return undefined;
  return new DataStop(
    "needs_source",
    `resource ${resource} is not declared by the binding of data source ${source} (declared: ${declared.join(", ")})`,
  );
}

/** The message of an adapter failure, without stack or connection secrets. */
export function unavailable(error: unknown): DataStop {
  if (error instanceof DataStop) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new DataStop(
    "provider_unavailable",
    `data source is unavailable: ${message.replace(/\/\/[^@/\s]*@/g, "//")}`,
  );
}

/**
 * A stop or a storage failure as a stop envelope (storage failures as `provider_unavailable`,
 * without connection secrets).
 */
export function failed(base: EnvelopeBase, error: unknown): DataOperationResult {
  const stop = unavailable(error);
  return stopEnvelope(base, { code: stop.code, message: stop.message });
}

/** A withheld field: where it was (event and path), never what it held. */
export interface Redaction extends JsonRecord {
  path: string;
  reason: "secret_field";
}

/** The secret-like fields of a page's records, each naming its event. */
export function pageRedactions(records: readonly EventRecord[]): Redaction[] {
  const out: Redaction[] = [];
  for (const record of records) {
    for (const path of secretFieldPaths(record.event)) {
      out.push({ event_ref: record.event_ref, path, reason: "secret_field" });
    }
  }
  return out;
}

/**
 * `redaction_required`: the operation would take in (append) or hand out (reads) fields that
 * look like secret material. The result lists where they are (at most MAX_REDACTIONS entries)
 * and carries no event content; the message names paths only, so no value is ever echoed.
 */
export function redactionStop(
  base: EnvelopeBase,
  redactions: Redaction[],
  head?: { version: number; projection_digest: string },
): DataOperationResult {
  const listed = redactions.slice(0, MAX_REDACTIONS);
  const named = redactions
    .slice(0, 5)
    .map((r) => (typeof r.event_ref === "string" ? `${r.event_ref} ${r.path}` : r.path))
    .join(", ");
  const rest = redactions.length > 5 ? ` and ${redactions.length - 5} more` : "";
  const message =
    base.operation === "append_event"
      ? `event carries secret-like field ${named}${rest}; the data store does not store secret material (reference a credential profile instead)`
      : `stored events carry secret-like field ${named}${rest}; the values are withheld and the ${base.operation === "list_stream_heads" ? "page" : "events"} not returned`;
  return stopEnvelope(
    base,
    { code: "redaction_required", message },
    head?.version ?? 0,
    head?.projection_digest,
    listed,
  );
}
