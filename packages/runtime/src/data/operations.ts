/**
 * Runs one data operation against an adapter and returns its `runx.data.operation_result.v1`
 * envelope. Validation, event typing, digests, paging budgets and cursors are applied here,
 * once, for every backend; the envelope is built in `envelope.ts` and every way an operation
 * stops short in `stops.ts`.
 */
import { hashCanonical, sha256Prefixed } from "../receipts/canonical.js";
import { isoTimestamp } from "../time.js";
import type { JsonRecord } from "../contracts/json.js";
import type { DataAdapter } from "./adapter.js";
import { decodeHeadsCursor, encodeHeadsCursor } from "./cursor.js";
import type { DataInput, ListHeadsInput, ReadEventsInput } from "./inputs.js";
import { envelopeNames, parseDataInput } from "./inputs.js";
import { envelope, pageEnvelope, stopEnvelope } from "./envelope.js";
import type { EnvelopeBase } from "./envelope.js";
import {
  authorityStop,
  failed,
  pageRedactions,
  redactionStop,
  resourceStop,
  unavailable,
} from "./stops.js";
import {
  DataStop,
  PAGE_BUDGET_BYTES,
  canonicalEvent,
  canonicalRecord,
  deriveEventType,
  eventRef,
  headsDigest,
  projectionOf,
  recordBytes,
  secretFieldPaths,
} from "./model.js";
import type { DataOperation, DataOperationResult, EventRecord, HeadRecord } from "./model.js";

/** How the executor reaches storage. */
export interface DataOperationDeps {
  /** Resolves the source's binding and connects; throws DataStop(needs_source) when unbound. */
  open(source: string): Promise<DataAdapter>;
  now(): Date;
  /**
   * The scopes the caller holds, checked before anything else: the operation's scope missing
   * stops with `needs_authority`. Unset (an operator's own CLI view) is not limited.
   */
  scopes?: readonly string[];
  /**
   * The resources the binding of the source just opened declares, if it declares any: any
   * other resource stops with `needs_source`.
   */
  resourcesOf?(source: string): readonly string[] | undefined;
}

/** H(data_source_ref) per source (the same few sources recur on every call). */
const sourceDigests = new Map<string, string>();
function sourceDigest(source: string): string {
  let digest = sourceDigests.get(source);
  if (digest === undefined) {
    digest = hashCanonical(source);
    if (sourceDigests.size >= 1024) sourceDigests.clear();
    sourceDigests.set(source, digest);
  }
  return digest;
}

/** The names an envelope carries, from a parsed input (the same strings the caller sent). */
function namesOf(input: DataInput): { source: string; resource: string; aggregateId: string } {
  return input.operation === "list_stream_heads"
    ? { source: input.source, resource: input.resource, aggregateId: "" }
    : input.stream;
}

function baseFor(
  operation: DataOperation,
  names: { source: string; resource: string; aggregateId: string },
  adapter?: DataAdapter,
): EnvelopeBase {
  const aggregateId = operation === "list_stream_heads" ? "stream-heads" : names.aggregateId;
  const evidence: JsonRecord = {
    provider: adapter?.provider ?? "unbound",
    adapter: adapter?.adapter ?? "unbound",
    data_source_ref_digest: sourceDigest(names.source),
    resource: names.resource,
    aggregate_id: aggregateId,
    storage_class: adapter?.storageClass ?? "none",
  };
  adapter?.addEvidence(
    operation === "list_stream_heads" ? { source: names.source, resource: names.resource } : names,
    evidence,
  );
  return {
    source: names.source,
    provider: adapter?.provider ?? "unbound",
    operation,
    resource: names.resource,
    aggregateId,
    evidence,
  };
}

/** Runs `operation` with `rawInput`; never throws for bad input or storage failures. */
export async function runDataOperation(
  operation: DataOperation,
  rawInput: JsonRecord,
  deps: DataOperationDeps,
): Promise<DataOperationResult> {
  // Authority first: a caller without the scope learns nothing about its input or the source.
  const denied = authorityStop(operation, deps.scopes);
  if (denied !== undefined) {
    return stopEnvelope(baseFor(operation, envelopeNames(rawInput)), {
      code: denied.code,
      message: denied.message,
    });
  }
  let input: DataInput;
  try {
    input = parseDataInput(operation, rawInput);
  } catch (error) {
    if (!(error instanceof DataStop)) throw error;
    return stopEnvelope(baseFor(operation, envelopeNames(rawInput)), {
      code: error.code,
      message: error.message,
    });
  }
  const names = namesOf(input);
  let adapter: DataAdapter;
  try {
    adapter = await deps.open(names.source);
  } catch (error) {
    const stop = error instanceof DataStop ? error : unavailable(error);
    return stopEnvelope(baseFor(operation, names), { code: stop.code, message: stop.message });
  }
  try {
    const undeclared = resourceStop(names.source, names.resource, deps.resourcesOf?.(names.source));
    if (undeclared !== undefined) {
      return stopEnvelope(baseFor(operation, names, adapter), {
        code: undeclared.code,
        message: undeclared.message,
      });
    }
    return await runParsed(adapter, input, deps);
  } finally {
    await adapter.close().catch(() => undefined);
  }
}

/**
 * Runs one operation on an already open adapter (kept open): contract tests, benches and the
 * CLI views reuse one connection across calls.
 */
export function runOnAdapter(
  adapter: DataAdapter,
  operation: DataOperation,
  rawInput: JsonRecord,
  deps: Pick<DataOperationDeps, "now" | "scopes"> & { resources?: readonly string[] },
): Promise<DataOperationResult> {
  // Not async itself: it hands back runParsed's promise rather than wrapping it in another.
  const denied = authorityStop(operation, deps.scopes);
  if (denied !== undefined) {
    return Promise.resolve(
      stopEnvelope(baseFor(operation, envelopeNames(rawInput), adapter), {
        code: denied.code,
        message: denied.message,
      }),
    );
  }
  let input: DataInput;
  try {
    input = parseDataInput(operation, rawInput);
    const names = namesOf(input);
    const undeclared = resourceStop(names.source, names.resource, deps.resources);
    if (undeclared !== undefined) throw undeclared;
  } catch (error) {
    if (!(error instanceof DataStop)) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return Promise.resolve(
      stopEnvelope(baseFor(operation, envelopeNames(rawInput), adapter), {
        code: error.code,
        message: error.message,
      }),
    );
  }
  return runParsed(adapter, input, deps);
}

/**
 * A parsed operation on an open adapter, as an envelope. Each operation turns its own stops and
 * storage failures into stop envelopes (see `failed`), so the operation's promise is the result:
 * no handler is chained onto it (one promise and one microtask fewer per call).
 */
function runParsed(
  adapter: DataAdapter,
  input: DataInput,
  deps: Pick<DataOperationDeps, "now">,
): Promise<DataOperationResult> {
  const base = baseFor(input.operation, namesOf(input), adapter);
  switch (input.operation) {
    case "append_event":
      return append(adapter, input, base, deps);
    case "read_events":
      return readEvents(adapter, input, base);
    case "read_projection":
      return readProjection(adapter, input, base);
    case "list_stream_heads":
      return listHeads(adapter, input, base);
  }
}

async function readProjection(
  adapter: DataAdapter,
  input: Extract<DataInput, { operation: "read_projection" }>,
  base: EnvelopeBase,
): Promise<DataOperationResult> {
  try {
    const head = await adapter.readHead(input.stream);
    const projection = projectionOf(input.stream, head);
    return envelope(base, {
      status: "read",
      before_version: head.version,
      after_version: head.version,
      result_digest: hashCanonical(projection),
      projection_digest: head.projection_digest,
      projection,
    });
  } catch (error) {
    return failed(base, error);
  }
}

async function append(
  adapter: DataAdapter,
  input: Extract<DataInput, { operation: "append_event" }>,
  base: EnvelopeBase,
  deps: Pick<DataOperationDeps, "now">,
): Promise<DataOperationResult> {
  try {
    // Before anything else reads the event: a secret is neither digested nor stored.
    const secrets = secretFieldPaths(input.event);
    if (secrets.length > 0) {
      return redactionStop(
        base,
        secrets.map((path) => ({ path, reason: "secret_field" })),
      );
    }
    const eventJson = canonicalEvent(input.event);
    // input.event is plain JSON (it arrived as JSON); its canonical bytes are eventJson.
    const event = input.event;
    // The canonical bytes are already in hand: H(event) is their SHA-256.
    const eventDigest = sha256Prefixed(eventJson);
    const eventType = deriveEventType(event);
    const version = input.expectedVersion + 1;
    // The commit time: the caller's observed_at (normalized) or now, written without
    // toISOString's zone set-up; its instant goes to the adapter as a number as well.
    let committedAt = input.observedAt;
    let committedAtMs: number;
    if (committedAt === undefined) {
      const now = deps.now();
      committedAtMs = now.getTime();
      committedAt = isoTimestamp(now);
    } else {
      committedAtMs = Date.parse(committedAt);
    }
    const record: EventRecord = {
      event_ref: eventRef(input.stream, version),
      version,
      event_type: eventType,
      event,
      event_digest: eventDigest,
      idempotency_key: input.idempotencyKey,
      committed_at: committedAt,
    };
    const recordJson = canonicalRecord(record, eventJson);
    // A commit's result digest, taken before the record goes to storage: hashing flattens the
    // record's string once, in place, so an adapter that stores the record JSON (Redis) sends
    // a flat string rather than copying each piece of it into its command and then again into
    // the hash. The outcomes that do not use it (replay, conflict) are the rare ones.
    const committedDigest = sha256Prefixed(recordJson);
    const outcome = await adapter.append({
      stream: input.stream,
      expectedVersion: input.expectedVersion,
      idempotencyKey: input.idempotencyKey,
      eventJson,
      recordJson,
      record,
      committedAtMs,
    });
    // Each envelope's fields are written out in one literal: a spread of a shared object here
    // cost more than all of the append's hashing (V8 copies it property by property).
    switch (outcome.kind) {
      case "committed":
        return envelope(base, {
          status: "committed",
          before_version: input.expectedVersion,
          after_version: version,
          idempotency_key: input.idempotencyKey,
          event_ref: record.event_ref,
          event_digest: eventDigest,
          result_digest: committedDigest,
          projection_digest: outcome.projectionDigest,
        });
      case "replay":
        return envelope(
          { ...base, evidence: { ...base.evidence, committed_version: outcome.record.version } },
          {
            status: "idempotent_replay",
            before_version: outcome.currentVersion,
            after_version: outcome.currentVersion,
            idempotency_key: input.idempotencyKey,
            event_ref: outcome.record.event_ref,
            event_digest: eventDigest,
            result_digest: hashCanonical(outcome.record),
            projection_digest: outcome.projectionDigest,
          },
        );
      case "idempotency_conflict":
      case "version_conflict": {
        const stop = {
          code: "conflict" as const,
          message:
            outcome.kind === "idempotency_conflict"
              ? "idempotency key was reused with different event content"
              : `expected version ${input.expectedVersion}, got ${outcome.currentVersion}`,
        };
        return envelope(base, {
          status: "conflict",
          before_version: outcome.currentVersion,
          after_version: outcome.currentVersion,
          idempotency_key: input.idempotencyKey,
          event_digest: eventDigest,
          result_digest: hashCanonical(stop),
          projection_digest: outcome.projectionDigest,
          stop_conditions: [stop],
        });
      }
    }
  } catch (error) {
    return failed(base, error);
  }
}

/** Re-derives type and digest of every stored record a page returns (tamper evidence). */
function checkRecords(records: readonly EventRecord[]): void {
  for (const record of records) {
    if (
      hashCanonical(record.event) !== record.event_digest ||
      deriveEventType(record.event) !== record.event_type
    ) {
      throw new DataStop(
        "provider_unavailable",
        `stored event ${record.event_ref} does not match its recorded digest or type; the store is inconsistent`,
      );
    }
  }
}

async function readEvents(
  adapter: DataAdapter,
  input: ReadEventsInput,
  base: EnvelopeBase,
): Promise<DataOperationResult> {
  try {
    const { head, records } = await adapter.readEvents(input.stream, {
      ...(input.afterVersion !== undefined ? { afterVersion: input.afterVersion } : {}),
      limit: input.limit,
    });
    if (input.afterVersion !== undefined && input.afterVersion > head.version) {
      return stopEnvelope(
        base,
        {
          code: "needs_input",
          message: `after_version ${input.afterVersion} is beyond the stream's current version ${head.version}`,
        },
        head.version,
        head.projection_digest,
      );
    }
    checkRecords(records);
    let page: EventRecord[];
    let hasMore = false;
    if (input.afterVersion !== undefined) {
      page = records.slice(0, input.limit);
      hasMore = records.length > input.limit;
      const fitted = fitForward(page);
      if (fitted.length < page.length) hasMore = true;
      page = fitted;
    } else {
      page = fitTail(records.slice(-input.limit));
    }
    const withheld = pageRedactions(page);
    if (withheld.length > 0) return redactionStop(base, withheld, head);
    const last = page.at(-1);
    const next = last?.version ?? input.afterVersion ?? head.version;
    const body = { events: page, has_more: hasMore, limit: input.limit, next_after_version: next };
    return pageEnvelope(base, head, body, hashCanonical(body));
  } catch (error) {
    return failed(base, error);
  }
}

/** The longest prefix within the page byte budget (at least one record always fits: events are capped). */
function fitForward<T extends EventRecord>(records: T[]): T[] {
  let used = 0;
  for (let i = 0; i < records.length; i++) {
    used += recordBytes(records[i] as T);
    if (used > PAGE_BUDGET_BYTES) return records.slice(0, Math.max(1, i));
  }
  return records;
}

/** The longest suffix within the budget (tail reads keep the newest events). */
function fitTail(records: EventRecord[]): EventRecord[] {
  let used = 0;
  for (let i = records.length - 1; i >= 0; i--) {
    used += recordBytes(records[i] as EventRecord);
    if (used > PAGE_BUDGET_BYTES) return records.slice(Math.min(records.length - 1, i + 1));
  }
  return records;
}

async function listHeads(
  adapter: DataAdapter,
  input: ListHeadsInput,
  base: EnvelopeBase,
): Promise<DataOperationResult> {
  try {
    const scope = { resource: input.resource, eventTypes: input.eventTypes };
    const secret = await adapter.cursorSecret(input.source);
    const after =
      input.cursor !== undefined ? decodeHeadsCursor(secret, scope, input.cursor) : undefined;
    const fetched = await adapter.listHeads({
      source: input.source,
      resource: input.resource,
      eventTypes: input.eventTypes,
      ...(after !== undefined ? { after } : {}),
      limit: input.limit + 1,
    });
    checkRecords(fetched);
    let rows: HeadRecord[] = fetched.slice(0, input.limit);
    let hasMore = fetched.length > input.limit;
    const fitted = fitForward(rows);
    if (fitted.length < rows.length) hasMore = true;
    rows = fitted;
    const withheld = pageRedactions(rows);
    if (withheld.length > 0) return redactionStop(base, withheld);
    const last = rows.at(-1);
    const nextCursor =
      hasMore && last !== undefined
        ? encodeHeadsCursor(secret, scope, {
            committed_at: last.committed_at,
            aggregate_id: last.aggregate_id,
          })
        : null;
    const page = {
      limit: input.limit,
      count: rows.length,
      has_more: nextCursor !== null,
      next_cursor: nextCursor,
    };
    return envelope(base, {
      status: "read",
      before_version: 0,
      after_version: 0,
      result_digest: hashCanonical({ page, rows }),
      projection_digest: headsDigest(rows),
      projection: page,
      rows,
    });
  } catch (error) {
    return failed(base, error);
  }
}
