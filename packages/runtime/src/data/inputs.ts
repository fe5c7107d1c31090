/**
 * Exact input contracts of the four operations (pure). Unknown fields are refused; `null` for
 * an optional field means "absent" (graph inputs resolve unset `$input.*` to null). A missing
 * source or resource is `needs_source`, a missing `expected_version` is `needs_version`,
 * limits out of range are `too_broad` (never clamped), everything else malformed is
 * `needs_input`.
 */
import type { Json, JsonRecord } from "../contracts/json.js";
import {
  DataStop,
  HEADS_LIMIT,
  MAX_EVENT_TYPES,
  MAX_INT,
  READ_EVENTS_LIMIT,
  isAggregateId,
  isEventType,
  isIdempotencyKey,
  isResource,
  isSourceRef,
  normalizeTimestamp,
} from "./model.js";
import type { DataOperation, StreamKey } from "./model.js";

export interface AppendInput {
  operation: "append_event";
  stream: StreamKey;
  expectedVersion: number;
  idempotencyKey: string;
  event: JsonRecord;
  observedAt?: string;
}
export interface ReadEventsInput {
  operation: "read_events";
  stream: StreamKey;
  limit: number;
  afterVersion?: number;
}
export interface ReadProjectionInput {
  operation: "read_projection";
  stream: StreamKey;
}
export interface ListHeadsInput {
  operation: "list_stream_heads";
  source: string;
  resource: string;
  eventTypes: string[];
  limit: number;
  cursor?: string;
}
export type DataInput = AppendInput | ReadEventsInput | ReadProjectionInput | ListHeadsInput;

const FIELDS: Record<DataOperation, readonly string[]> = {
  append_event: [
    "data_source_ref",
    "resource",
    "aggregate_id",
    "expected_version",
    "idempotency_key",
    "event",
    "observed_at",
  ],
  read_events: ["data_source_ref", "resource", "aggregate_id", "limit", "after_version"],
  read_projection: ["data_source_ref", "resource", "aggregate_id"],
  list_stream_heads: ["data_source_ref", "resource", "event_types", "limit", "cursor"],
};

/** The parts of an input that name the envelope, read leniently (for stop envelopes). */
export function envelopeNames(input: JsonRecord): {
  source: string;
  resource: string;
  aggregateId: string;
} {
  const text = (value: Json | undefined): string => (typeof value === "string" ? value : "");
  return {
    source: text(input.data_source_ref),
    resource: text(input.resource),
    aggregateId: text(input.aggregate_id),
  };
}

const present = (value: Json | undefined): value is Exclude<Json, null> =>
  value !== undefined && value !== null;

function uint(value: Json, field: string, max: number, inclusive: boolean): number {
  if (
    typeof value !== "number" ||
    !Number.isSafeInteger(value) ||
    value < 0 ||
    (inclusive ? value > max : value >= max)
  ) {
    throw new DataStop(
      "needs_input",
      `${field} must be an unsigned integer ${inclusive ? "at most" : "below"} ${max}`,
    );
  }
  return value;
}

function limitOf(value: Json | undefined, range: { min: number; max: number; default: number }) {
  if (!present(value)) return range.default;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new DataStop("needs_input", "limit must be an integer");
  }
  if (value < range.min || value > range.max) {
    throw new DataStop(
      "too_broad",
      `limit must be from ${range.min} to ${range.max}, got ${value}`,
    );
  }
  return value;
}

/**
 * The source ref and resource last accepted: a process works with a few, and a string equal to
 * one already accepted needs no second check (the checks depend on the string alone).
 */
let acceptedSource = "";
let acceptedResource = "";

function source(input: JsonRecord): string {
  const ref = input.data_source_ref;
  if (!present(ref) || ref === "")
    throw new DataStop("needs_source", "data_source_ref is required");
  if (ref === acceptedSource) return ref;
  if (typeof ref !== "string" || !isSourceRef(ref)) {
    throw new DataStop(
      "needs_input",
      "data_source_ref must be a trimmed token of at most 512 bytes without control characters",
    );
  }
  acceptedSource = ref;
  return ref;
}

function resource(input: JsonRecord): string {
  const value = input.resource;
  if (!present(value) || value === "") throw new DataStop("needs_source", "resource is required");
  if (value === acceptedResource) return value;
  if (typeof value !== "string" || !isResource(value)) {
    throw new DataStop(
      "needs_input",
      "resource must start with a letter or digit and hold only letters, digits and . _ : - (at most 128 bytes)",
    );
  }
  acceptedResource = value;
  return value;
}

function stream(input: JsonRecord): StreamKey {
  const src = source(input);
  const res = resource(input);
  const aggregate = input.aggregate_id;
  if (!present(aggregate) || aggregate === "") {
    throw new DataStop("needs_input", "aggregate_id is required");
  }
  if (typeof aggregate !== "string" || !isAggregateId(aggregate)) {
    throw new DataStop(
      "needs_input",
      "aggregate_id must start with a letter or digit and hold only letters, digits and . _ : - @ / (at most 192 bytes)",
    );
  }
  return { source: src, resource: res, aggregateId: aggregate };
}

/** FIELDS as sets (every call checks each key of its input). */
const FIELD_SETS: Record<DataOperation, ReadonlySet<string>> = {
  append_event: new Set(FIELDS.append_event),
  read_events: new Set(FIELDS.read_events),
  read_projection: new Set(FIELDS.read_projection),
  list_stream_heads: new Set(FIELDS.list_stream_heads),
};

/** Parses one operation's input or throws the stop condition that explains why not. */
export function parseDataInput(operation: DataOperation, input: JsonRecord): DataInput {
  const allowed = FIELDS[operation];
  const known = FIELD_SETS[operation];
  // for-in, not Object.keys: no array per call. It also visits inherited enumerable keys, which
  // the field reads below would see, so those are refused as unknown as well.
  for (const key in input) {
    if (!known.has(key)) {
      throw new DataStop(
        "needs_input",
        `unknown field "${key}" for ${operation} (allowed: ${allowed.join(", ")})`,
      );
    }
  }
  switch (operation) {
    case "append_event": {
      const key = stream(input);
      if (!present(input.expected_version)) {
        throw new DataStop("needs_version", "expected_version is required for append_event");
      }
      const expectedVersion = uint(input.expected_version, "expected_version", MAX_INT, false);
      const idem = input.idempotency_key;
      if (!present(idem) || idem === "") {
        throw new DataStop("needs_input", "idempotency_key is required for append_event");
      }
      if (typeof idem !== "string" || !isIdempotencyKey(idem)) {
        throw new DataStop(
          "needs_input",
          "idempotency_key must be a trimmed token of at most 256 bytes without control characters",
        );
      }
      const event = input.event;
      if (!present(event)) throw new DataStop("needs_input", "event is required for append_event");
      if (typeof event !== "object" || Array.isArray(event)) {
        throw new DataStop("needs_input", "event must be a JSON object");
      }
      const parsed: AppendInput = {
        operation,
        stream: key,
        expectedVersion,
        idempotencyKey: idem,
        event,
      };
      if (present(input.observed_at)) {
        const normalized =
          typeof input.observed_at === "string" ? normalizeTimestamp(input.observed_at) : undefined;
        if (normalized === undefined) {
          throw new DataStop(
            "needs_input",
            "observed_at must be an RFC 3339 time with a 4-digit year and Z or ±HH:MM",
          );
        }
        parsed.observedAt = normalized;
      }
      return parsed;
    }
    case "read_events": {
      const parsed: ReadEventsInput = {
        operation,
        stream: stream(input),
        limit: limitOf(input.limit, READ_EVENTS_LIMIT),
      };
      if (present(input.after_version)) {
        parsed.afterVersion = uint(input.after_version, "after_version", MAX_INT, true);
      }
      return parsed;
    }
    case "read_projection":
      return { operation, stream: stream(input) };
    case "list_stream_heads": {
      const src = source(input);
      const res = resource(input);
      const eventTypes: string[] = [];
      if (present(input.event_types)) {
        if (!Array.isArray(input.event_types)) {
          throw new DataStop("needs_input", "event_types must be an array of exact event types");
        }
        for (const type of input.event_types) {
          if (typeof type !== "string" || !isEventType(type)) {
            throw new DataStop(
              "needs_input",
              "event_types entries must be exact event types (trimmed, no '/', at most 128 bytes); patterns are not accepted",
            );
          }
          if (!eventTypes.includes(type)) eventTypes.push(type);
        }
        if (eventTypes.length > MAX_EVENT_TYPES) {
          throw new DataStop(
            "too_broad",
            `event_types holds ${eventTypes.length} types; at most ${MAX_EVENT_TYPES} are accepted`,
          );
        }
      }
      const parsed: ListHeadsInput = {
        operation,
        source: src,
        resource: res,
        eventTypes,
        limit: limitOf(input.limit, HEADS_LIMIT),
      };
      if (present(input.cursor) && input.cursor !== "") {
        if (typeof input.cursor !== "string") {
          throw new DataStop("needs_input", "cursor must be a string");
        }
        parsed.cursor = input.cursor;
      }
      return parsed;
    }
  }
}
