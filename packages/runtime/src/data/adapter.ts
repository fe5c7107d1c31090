/**
 * The one port every event-store backend implements (SQLite, PostgreSQL, Redis). Adapters own
 * atomicity and storage; the core (operations.ts) owns validation, digests and envelopes.
 * Every adapter must:
 * - append atomically: read head, look up the idempotency key (same digest → replay, else
 *   conflict) BEFORE the version check, check the version, insert the event and advance the
 *   head chain from the previous digest read inside the same atomic section;
 * - read a page and its head from one snapshot;
 * - never expire durable keys or rows.
 */
import type { JsonRecord } from "../contracts/json.js";
import type { HeadsPosition } from "./cursor.js";
import type { EventRecord, HeadRecord, StreamHead, StreamKey } from "./model.js";

/** One append, fully prepared by the core. */
export interface AppendRequest {
  stream: StreamKey;
  expectedVersion: number;
  idempotencyKey: string;
  /** The canonical JSON of `record.event`. */
  eventJson: string;
  /** The canonical JSON of `record` (its SHA-256 is the commit's result_digest). */
  recordJson: string;
  /** The record as it will be stored if the append commits (version = expected + 1). */
  record: EventRecord;
  /** The instant `record.committed_at` names, in epoch milliseconds (no adapter parses it back). */
  committedAtMs: number;
}

export type AppendOutcome =
  | { kind: "committed"; projectionDigest: string }
  | { kind: "replay"; record: EventRecord; currentVersion: number; projectionDigest: string }
  | { kind: "idempotency_conflict"; currentVersion: number; projectionDigest: string }
  | { kind: "version_conflict"; currentVersion: number; projectionDigest: string };

/** A page of events and the head it was read with (one snapshot). */
export interface EventPage {
  head: StreamHead;
  /**
   * Forward mode (`afterVersion` set): versions > afterVersion ascending, at most limit + 1.
   * Tail mode: the newest `limit` events, ascending.
   */
  records: EventRecord[];
}

export interface HeadsQuery {
  source: string;
  resource: string;
  /** Exact latest event types; empty means all. */
  eventTypes: readonly string[];
  /** Exclusive keyset start (newest committed_at first, then aggregate_id ascending). */
  after?: HeadsPosition;
  /** Rows to return at most (the core asks for limit + 1). */
  limit: number;
}

/** A connected event store. */
export interface DataAdapter {
  /** Binding identifier: data.sqlite, data.postgres, data.redis. */
  readonly adapter: string;
  /** Envelope `provider`: sqlite-event-store, postgres-event-store, redis-event-store. */
  readonly provider: string;
  readonly storageClass: string;
  /**
   * Adds the adapter's own non-secret evidence for a stream (e.g. Redis key digests) to the
   * core's `evidence` (written into it: no object per operation to copy from).
   */
  addEvidence(
    stream: { source: string; resource: string; aggregateId?: string },
    evidence: JsonRecord,
  ): void;
  append(request: AppendRequest): Promise<AppendOutcome>;
  readEvents(stream: StreamKey, page: { afterVersion?: number; limit: number }): Promise<EventPage>;
  readHead(stream: StreamKey): Promise<StreamHead>;
  listHeads(query: HeadsQuery): Promise<HeadRecord[]>;
  /** The per-source cursor secret (created on first use, kept in the store). */
  cursorSecret(source: string): Promise<Uint8Array>;
  close(): Promise<void>;
}
