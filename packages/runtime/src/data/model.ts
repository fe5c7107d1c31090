/**
 * The governed data store's pure core: identifier rules, event type derivation, digests and
 * the rolling head chain, and the `runx.data.operation_result.v1` envelope's shape (built in
 * `envelope.ts`). No I/O, no clock.
 *
 * Decisions (see docs/data-store.md and docs/decisions/0007):
 * - Integers beyond 2^53 − 1 inside an event are refused (`needs_input`): JavaScript numbers
 *   cannot hold them exactly, and a silently rounded value would change the event's digest
 *   and meaning. Callers send such values as strings.
 * - One event's canonical JSON is capped at MAX_EVENT_BYTES, so a single event can never
 *   make its stream unreadable under the result budget.
 * - Stop conditions other than `conflict` come back as envelopes with status `stopped`
 *   (our extension of the upstream status set) and fail the invocation, so a graph never
 *   treats a refused operation as done.
 * - Secret-like field names (the binding rule, applied to event content) are refused on
 *   append and withheld on read (`redaction_required`): the store never takes in or hands out
 *   what looks like a credential, and only field paths, never values, reach a result.
 */
import {
  canonicalJson,
  canonicalJsonOfPortable,
  canonicalNumber,
  canonicalString,
  hashCanonical,
  sha256Prefixed,
} from "../receipts/canonical.js";
import type { Json, JsonRecord } from "../contracts/json.js";

/** The packet id every operation returns. */
export const DATA_RESULT_SCHEMA = "runx.data.operation_result.v1";
/** 2^53 − 1: the portable JSON integer ceiling. */
export const MAX_INT = Number.MAX_SAFE_INTEGER;
/** Largest canonical JSON size of one event (256 KiB). */
export const MAX_EVENT_BYTES = 256 * 1024;
/** Byte budget of the records of one page (events or heads); the 16 MiB result ceiling keeps headroom. */
export const PAGE_BUDGET_BYTES = 12 * 1024 * 1024;
/** Serialized result ceiling (upstream MAX_DATA_OPERATION_RESULT_BYTES). */
export const MAX_RESULT_BYTES = 16 * 1024 * 1024;
export const READ_EVENTS_LIMIT = { min: 1, max: 500, default: 50 } as const;
export const HEADS_LIMIT = { min: 1, max: 100, default: 50 } as const;
export const MAX_EVENT_TYPES = 20;
/** Most `redactions` entries one result carries (the envelope's schema cap). */
export const MAX_REDACTIONS = 100;

/** The scope every read operation needs, and the one an append needs. */
export const DATA_READ_SCOPE = "runx:data:read";
export const DATA_APPEND_SCOPE = "runx:data:append";

/** The scope `operation` needs from its caller. */
export const scopeOf = (operation: DataOperation): string =>
  operation === "append_event" ? DATA_APPEND_SCOPE : DATA_READ_SCOPE;

const SECRET_NAMES = new Set([
  "apikey",
  "accesstoken",
  "refreshtoken",
  "clientsecret",
  "secretkey",
  "privatekey",
  "password",
  "bearertoken",
  "connectionstring",
  "authorization",
  "token",
  "secret",
]);

/**
 * True for field names that look like they carry secret material: the name lowercased and
 * stripped of non-alphanumerics is one of a fixed list (so `api_key`, `Client-Secret`, `token`).
 * A name check only: values are never inspected, so nothing about them reaches a message.
 */
export function isSecretLikeName(name: string): boolean {
  return SECRET_NAMES.has(name.toLowerCase().replace(/[^a-z0-9]/g, ""));
}

/** True when any object key inside `value` is secret-like (no paths built: the common case). */
function holdsSecretName(value: Json): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(holdsSecretName);
  for (const [key, item] of Object.entries(value)) {
    if (isSecretLikeName(key) || holdsSecretName(item)) return true;
  }
  return false;
}

/**
 * The paths (`event.payload.password`, `event.items[0].api_key`) of every secret-like field
 * inside an event, depth first in sorted key order; a secret-like field's own contents are not
 * searched (the whole field is withheld). Empty for almost every event, found without building a path.
 */
export function secretFieldPaths(event: JsonRecord, root = "event"): string[] {
  if (!holdsSecretName(event)) return [];
  const paths: string[] = [];
  const walk = (value: Json, path: string): void => {
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${path}[${i}]`));
      return;
    }
    // Keys in canonical (sorted) order, so a path list does not depend on how the caller
    // ordered its JSON.
    for (const key of Object.keys(value).sort()) {
      if (isSecretLikeName(key)) paths.push(`${path}.${key}`);
      else walk(value[key] as Json, `${path}.${key}`);
    }
  };
  walk(event, root);
  return paths;
}

/** The four operations. */
export type DataOperation =
  "append_event" | "read_events" | "read_projection" | "list_stream_heads";

/** Stop condition codes (SKILL.md vocabulary). */
export type StopCode =
  | "needs_source"
  | "needs_input"
  | "needs_authority"
  | "needs_version"
  | "conflict"
  | "too_broad"
  | "redaction_required"
  | "provider_unavailable";

export interface StopCondition {
  code: StopCode;
  message: string;
}

export type DataStatus =
  "committed" | "idempotent_replay" | "read" | "conflict" | "provider_unavailable" | "stopped";

/** A stream's identity. */
export interface StreamKey {
  source: string;
  resource: string;
  aggregateId: string;
}

/** One stored event as every page returns it. */
export interface EventRecord {
  event_ref: string;
  version: number;
  event_type: string;
  event: JsonRecord;
  event_digest: string;
  idempotency_key: string;
  committed_at: string;
}

/** The latest event of a stream, with its aggregate. */
export interface HeadRecord extends EventRecord {
  aggregate_id: string;
}

/** A stored event row as SQL adapters read it. */
export interface EventRow {
  version: number;
  idempotency_key: string;
  event_ref: string;
  event_type: string;
  event_digest: string;
  event_json: string;
  committed_at: string;
  aggregate_id?: string;
}

/** Turns a stored row back into a record. */
export function rowToRecord(row: EventRow): EventRecord {
  return {
    event_ref: row.event_ref,
    version: Number(row.version),
    event_type: row.event_type,
    event: JSON.parse(row.event_json) as JsonRecord,
    event_digest: row.event_digest,
    idempotency_key: row.idempotency_key,
    committed_at: row.committed_at,
  };
}

/** The rolling head of one stream. */
export interface StreamHead {
  version: number;
  projection_digest: string;
  last: EventRecord | null;
}

/** The envelope. */
export interface DataOperationResult {
  schema: typeof DATA_RESULT_SCHEMA;
  data_source_ref: string;
  provider: string;
  operation: DataOperation;
  resource: string;
  aggregate_id: string;
  status: DataStatus;
  before_version: number;
  after_version: number;
  idempotency_key: string | null;
  event_ref: string | null;
  event_digest: string | null;
  result_digest: string;
  projection_digest: string;
  projection: JsonRecord | null;
  limit?: number;
  next_after_version?: number;
  has_more?: boolean;
  events: EventRecord[];
  rows: (EventRecord | HeadRecord)[];
  redactions: JsonRecord[];
  stop_conditions: StopCondition[];
  provider_evidence: JsonRecord;
}

/** Thrown by pure checks; the executor turns it into a stop envelope. */
export class DataStop extends Error {
  constructor(
    readonly code: StopCode,
    message: string,
  ) {
    super(message);
  }
}

const utf8Bytes = (value: string): number => Buffer.byteLength(value, "utf8");

/**
 * True when `value` is at most `maxBytes` long in UTF-8. A UTF-16 code unit is at most three
 * UTF-8 bytes, so a string short enough in units is decided without counting its bytes (a
 * native call, which for the short names of every operation costs more than all the rest of
 * their check).
 */
const fitsBytes = (value: string, maxBytes: number): boolean =>
  value.length * 3 <= maxBytes || utf8Bytes(value) <= maxBytes;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A token: non-empty, trimmed, no control characters, at most `maxBytes`. */
export function isToken(value: string, maxBytes: number, allowSlash = true): boolean {
  return (
    value.length > 0 &&
    value.trim() === value &&
    !CONTROL.test(value) &&
    fitsBytes(value, maxBytes) &&
    (allowSlash || !value.includes("/"))
  );
}

const RESOURCE = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const AGGREGATE = /^[A-Za-z0-9][A-Za-z0-9._:@/-]*$/;
// Both patterns admit ASCII only, so a matching name's length is its byte count.

export const isResource = (value: string): boolean => value.length <= 128 && RESOURCE.test(value);
export const isAggregateId = (value: string): boolean =>
  value.length <= 192 && AGGREGATE.test(value);
export const isEventType = (value: string): boolean => isToken(value, 128, false);
export const isIdempotencyKey = (value: string): boolean => isToken(value, 256);
export const isSourceRef = (value: string): boolean => isToken(value, 512);

/**
 * The event type last found valid, and its canonical JSON string: a process appends a few types
 * over and over, and one equal to it needs no second check (the check depends on the string
 * alone).
 */
let knownType = "data.event";
let knownTypeJson: string | undefined;

/** A valid event type candidate (remembered as the known type). */
function validType(value: Json | undefined): value is string {
  if (value === knownType) return true;
  if (typeof value !== "string" || !isEventType(value)) return false;
  knownType = value;
  knownTypeJson = undefined;
  return true;
}

/** The canonical JSON string of an event type (`canonicalString`, kept for the known type). */
export function eventTypeJson(type: string): string {
  if (type !== knownType) return canonicalString(type);
  return (knownTypeJson ??= canonicalString(type));
}

/**
 * The readable event type, in this order: `type`, `event_type`, `effect_family.operation`,
 * `operation`, else `data.event`. Invalid candidates are skipped; a composed type over 128
 * bytes is refused rather than truncated.
 */
export function deriveEventType(event: JsonRecord): string {
  if (validType(event.type)) return event.type;
  if (validType(event.event_type)) return event.event_type;
  if (validType(event.effect_family) && validType(event.operation)) {
    const composed = `${event.effect_family}.${event.operation}`;
    if (!isEventType(composed)) {
      throw new DataStop(
        "needs_input",
        "event_type is invalid: effect_family.operation is longer than 128 bytes",
      );
    }
    return composed;
  }
  if (validType(event.operation)) return event.operation;
  return "data.event";
}

/** True when `value` holds an integer beyond 2^53 − 1 anywhere (no paths built). */
function hasUnportableNumber(value: Json): boolean {
  if (typeof value === "number") return Number.isInteger(value) && !Number.isSafeInteger(value);
  if (value === null || typeof value !== "object") return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  for (const item of items) if (hasUnportableNumber(item)) return true;
  return false;
}

/** Refuses numbers that would not round-trip exactly (integers beyond 2^53 − 1). */
export function assertPortableNumbers(value: Json, path: string): void {
  // The common case (nothing to refuse) is checked without building a path per value.
  if (!hasUnportableNumber(value)) return;
  refuseUnportableNumbers(value, path);
}

function refuseUnportableNumbers(value: Json, path: string): void {
  if (typeof value === "number") {
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
      throw new DataStop(
        "needs_input",
        `${path}: integer ${String(value)} is beyond 2^53-1 and cannot be stored exactly; send it as a string`,
      );
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => refuseUnportableNumbers(item, `${path}[${index}]`));
    return;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value))
      refuseUnportableNumbers(item, `${path}.${key}`);
  }
}

/** Canonical bytes of an event, checked for portability and size. */
export function canonicalEvent(event: JsonRecord): string {
  let text = canonicalJsonOfPortable(event);
  if (text === undefined) {
    // Something is refused: name it (an unportable integer first, as before).
    assertPortableNumbers(event, "event");
    try {
      text = canonicalJson(event);
    } catch (error) {
      throw new DataStop("needs_input", `event is not canonical JSON: ${(error as Error).message}`);
    }
  }
  if (!fitsBytes(text, MAX_EVENT_BYTES)) {
    const bytes = utf8Bytes(text);
    throw new DataStop(
      "needs_input",
      `event is ${bytes} bytes as canonical JSON, over the ${MAX_EVENT_BYTES}-byte per-event cap`,
    );
  }
  return text;
}

/**
 * The canonical JSON of a record whose event is already canonical (`eventJson`), without
 * canonicalising the event a second time. Key order: committed_at, event, event_digest, …
 *
 * For records the core builds for an append: `committed_at` is a normalized timestamp
 * (digits, `-`, `:`, `.`, `T`, `Z`), `event_digest` a `sha256:<hex>` digest and `event_ref` the
 * ref of a validated stream (letters, digits and `._:@/-`), none of which JSON escapes, so they
 * are written as they are; `event_type` and `idempotency_key` come from the caller and are
 * written canonically (escaped, or refused when not well formed).
 */
export function canonicalRecord(record: EventRecord, eventJson: string): string {
  // The record's keys are fixed, so their sorted order is too.
  return (
    `{"committed_at":"${record.committed_at}","event":${eventJson}` +
    `,"event_digest":"${record.event_digest}"` +
    `,"event_ref":"${record.event_ref}"` +
    `,"event_type":${eventTypeJson(record.event_type)}` +
    `,"idempotency_key":${canonicalString(record.idempotency_key)}` +
    `,"version":${canonicalNumber(record.version)}}`
  );
}

/** `resource:aggregate:version`. */
export const eventRef = (stream: StreamKey, version: number): string =>
  `${stream.resource}:${stream.aggregateId}:${version}`;

/** P0: the chain value of an empty stream. */
export const EMPTY_PROJECTION_DIGEST = hashCanonical({ event_digest: null, version: 0 });

/**
 * Pn = H({event_digest: En, previous_projection_digest: P(n−1), version: n}), from the two
 * digests already written as JSON strings. The object's keys are fixed (event_digest <
 * previous_projection_digest < version), so its canonical bytes are this template.
 */
const chainOf = (eventDigestJson: string, previousJson: string, version: number): string =>
  sha256Prefixed(
    `{"event_digest":${eventDigestJson},"previous_projection_digest":${previousJson},"version":${canonicalNumber(version)}}`,
  );

/** Pn = H({event_digest: En, previous_projection_digest: P(n−1), version: n}). */
export function chainDigest(previous: string, version: number, eventDigest: string): string {
  return chainOf(canonicalString(eventDigest), canonicalString(previous), version);
}

/**
 * `chainDigest` of an event digest and a previous chain value this process computed itself
 * (sha256Prefixed output or EMPTY_PROJECTION_DIGEST: `sha256:` and hex digits, nothing JSON
 * escapes), written without testing them. A value read back from storage goes through
 * `chainDigest`.
 */
export function chainDigestOfOwn(previous: string, version: number, eventDigest: string): string {
  return chainOf(`"${eventDigest}"`, `"${previous}"`, version);
}

/** Recomputes the chain over records in version order (1..n); returns P(n). */
export function recomputeChain(records: readonly Pick<EventRecord, "event_digest">[]): string {
  let digest = EMPTY_PROJECTION_DIGEST;
  records.forEach((record, index) => {
    digest = chainDigest(digest, index + 1, record.event_digest);
  });
  return digest;
}

/** `read_projection`'s projection (metadata only, no digests of internal state). */
export function projectionOf(stream: StreamKey, head: StreamHead): JsonRecord {
  return {
    aggregate_id: stream.aggregateId,
    resource: stream.resource,
    version: head.version,
    event_count: head.version,
    last_event_ref: head.last?.event_ref ?? null,
    last_event_type: head.last?.event_type ?? null,
    last_event_digest: head.last?.event_digest ?? null,
  };
}

/** Heads page digest: H([[aggregate_id, version, event_digest], …]). */
export const headsDigest = (rows: readonly HeadRecord[]): string =>
  hashCanonical(rows.map((row) => [row.aggregate_id, row.version, row.event_digest]));

/** Byte size of a record as it will appear in a result. */
export const recordBytes = (record: EventRecord): number => utf8Bytes(canonicalJson(record));

/**
 * Normalises an RFC 3339 time (4-digit year, `Z` or ±HH:MM) to UTC milliseconds,
 * `YYYY-MM-DDTHH:MM:SS.mmmZ`; sub-millisecond digits are truncated. Undefined when invalid.
 */
export function normalizeTimestamp(value: string): string | undefined {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/.exec(
      value,
    );
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = match as unknown as string[];
  const month = Number(mo);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1 || day > 31) return undefined;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined;
  const ms = (frac ?? "").padEnd(3, "0").slice(0, 3);
  const offset = zone === "Z" || zone === "z" ? "Z" : zone;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}.${ms}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Reject calendar overflow such as 02-30 (Date rolls it into March).
  const probe = new Date(Date.UTC(Number(y), month - 1, day));
  if (probe.getUTCDate() !== day) return undefined;
  const iso = date.toISOString();
  return /^\d{4}-/.test(iso) ? iso : undefined;
}
