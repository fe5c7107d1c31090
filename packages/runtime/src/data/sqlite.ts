/**
 * Native SQLite event store (`data.sqlite`): WAL, synchronous=FULL, busy timeout, appends in
 * `BEGIN IMMEDIATE`, and every read (head + page) inside one read transaction, so a page and
 * its head always come from one snapshot. Schema v1 (`user_version = 1`) is created on first
 * open; a database holding other runx tables or another version is refused untouched
 * (`runx data migrate` upgrades recognised legacy stores).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { openSqliteDatabase } from "../store/sqlite-native.js";
import type {
  AppendOutcome,
  AppendRequest,
  DataAdapter,
  EventPage,
  HeadsQuery,
} from "./adapter.js";
import { DataStop, EMPTY_PROJECTION_DIGEST, chainDigest, rowToRecord } from "./model.js";
import type { EventRow, HeadRecord, StreamHead, StreamKey } from "./model.js";

export const SQLITE_SCHEMA_VERSION = 1;

/**
 * Schema v1: two clustered (WITHOUT ROWID) tables keyed like upstream's primary keys, the
 * idempotency and head-listing indexes, plus the per-source cursor secrets.
 */
export const SQLITE_SCHEMA_V1 = `
CREATE TABLE runx_events (
  data_source_ref TEXT NOT NULL,
  resource TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL,
  event_ref TEXT NOT NULL,
  event_type TEXT NOT NULL,
  event_digest TEXT NOT NULL,
  event_json TEXT NOT NULL,
  committed_at TEXT NOT NULL,
  PRIMARY KEY (data_source_ref, resource, aggregate_id, version)
) WITHOUT ROWID;
CREATE UNIQUE INDEX runx_events_stream_idempotency_v1 ON runx_events (data_source_ref, resource, aggregate_id, idempotency_key);
CREATE TABLE runx_stream_heads (
  data_source_ref TEXT NOT NULL,
  resource TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  event_ref TEXT NOT NULL,
  event_type TEXT NOT NULL,
  event_digest TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  event_json TEXT NOT NULL,
  committed_at TEXT NOT NULL,
  projection_digest TEXT NOT NULL,
  PRIMARY KEY (data_source_ref, resource, aggregate_id)
) WITHOUT ROWID;
CREATE INDEX runx_stream_heads_recent_v1 ON runx_stream_heads (data_source_ref, resource, committed_at DESC, aggregate_id ASC);
CREATE INDEX runx_stream_heads_type_recent_v1 ON runx_stream_heads (data_source_ref, resource, event_type, committed_at DESC, aggregate_id ASC);
CREATE TABLE runx_source_secrets (
  data_source_ref TEXT NOT NULL PRIMARY KEY,
  cursor_secret BLOB NOT NULL
);
`;

const EVENT_COLUMNS = [
  "data_source_ref",
  "resource",
  "aggregate_id",
  "version",
  "idempotency_key",
  "event_ref",
  "event_type",
  "event_digest",
  "event_json",
  "committed_at",
];
const HEAD_COLUMNS = [
  "data_source_ref",
  "resource",
  "aggregate_id",
  "version",
  "event_ref",
  "event_type",
  "event_digest",
  "idempotency_key",
  "event_json",
  "committed_at",
  "projection_digest",
];
// The stream/version uniqueness is the clustered primary key (WITHOUT ROWID), so upstream's
// separate runx_events_stream_version_v1 index is not required (it is tolerated when present).
const INDEXES = [
  "runx_events_stream_idempotency_v1",
  "runx_stream_heads_recent_v1",
  "runx_stream_heads_type_recent_v1",
];

const LEGACY_MESSAGE =
  "SQLite event store uses an unsupported legacy schema; migrate it out of band before running (runx data migrate)";

/** Classifies an open database's schema: empty, v1, or something else. */
export function sqliteSchemaState(db: Database.Database): "empty" | "v1" | "other" {
  const version = db.pragma("user_version", { simple: true }) as number;
  const tables = (
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'runx_%'")
      .all() as { name: string }[]
  ).map((t) => t.name);
  if (version === 0 && tables.length === 0) return "empty";
  if (version !== SQLITE_SCHEMA_VERSION) return "other";
  const columns = (table: string) =>
    (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const indexes = new Set(
    (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index'").all() as { name: string }[]
    ).map((i) => i.name),
  );
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  if (
    !same(columns("runx_events"), EVENT_COLUMNS) ||
    !same(columns("runx_stream_heads"), HEAD_COLUMNS) ||
    !tables.includes("runx_source_secrets") ||
    tables.includes("runx_data_store_migrations") ||
    tables.includes("runx_events_migration_v0") ||
    !INDEXES.every((name) => indexes.has(name))
  ) {
    return "other";
  }
  return "v1";
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function retryBusy<T>(fn: () => T, budgetMs: number): T {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    try {
      return fn();
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() > deadline)
        throw error;
      Atomics.wait(sleeper, 0, 0, 5);
    }
  }
}

/** Opens a SQLite file with the store's pragmas (WAL switched on, retrying while busy). */
export function openSqliteFile(path: string, busyTimeoutMs = 5000): Database.Database {
  mkdirSync(dirname(path), { recursive: true });
  const db = openSqliteDatabase(path);
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    if (retryBusy(() => db.pragma("journal_mode", { simple: true }), busyTimeoutMs) !== "wal") {
      retryBusy(() => db.pragma("journal_mode = WAL"), busyTimeoutMs);
    }
    db.pragma("synchronous = FULL");
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Creates schema v1 on an empty database, or checks it; refuses anything else untouched. */
function ensureSchema(db: Database.Database, label: string): void {
  // The unlocked look reads tables, columns and indexes in separate statements, so while
  // another process creates the schema it can see part of it: only the look under the write
  // lock below may call a store "other".
  if (sqliteSchemaState(db) === "v1") return;
  db.exec("BEGIN IMMEDIATE");
  try {
    const again = sqliteSchemaState(db);
    if (again === "empty") {
      db.exec(SQLITE_SCHEMA_V1);
      db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
    } else if (again === "other") {
      throw new DataStop("needs_source", `${label}: ${LEGACY_MESSAGE}`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}

/** Options of `openSqliteAdapter`. */
export interface SqliteAdapterOptions {
  /** Absolute database path. */
  path: string;
  /** Name used in messages (workspace-relative path), never the absolute path. */
  label: string;
  busyTimeoutMs?: number;
}

/** Opens the SQLite adapter over one database file. */
export function openSqliteAdapter(options: SqliteAdapterOptions): DataAdapter {
  const busy = options.busyTimeoutMs ?? 5000;
  const db = openSqliteFile(options.path, busy);
  try {
    retryBusy(() => ensureSchema(db, options.label), busy);
  } catch (error) {
    db.close();
    throw error;
  }
  const where = "data_source_ref = ? AND resource = ? AND aggregate_id = ?";
  const headStmt = db.prepare(
    `SELECT version, projection_digest, event_ref, event_type, event_digest, event_json, idempotency_key, committed_at FROM runx_stream_heads WHERE ${where}`,
  );
  const byKey = db.prepare(
    `SELECT version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at FROM runx_events WHERE ${where} AND idempotency_key = ?`,
  );
  const insertEvent = db.prepare(
    `INSERT INTO runx_events (data_source_ref, resource, aggregate_id, version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // Appends need only the head's version and chain value (no event JSON to decode).
  const headVersionStmt = db.prepare(
    `SELECT version, projection_digest FROM runx_stream_heads WHERE ${where}`,
  );
  // The head row is known to exist (or not) inside the append transaction: a plain UPDATE or
  // INSERT, no ON CONFLICT probe.
  const updateHead = db.prepare(
    `UPDATE runx_stream_heads SET version = ?, event_ref = ?, event_type = ?, event_digest = ?, idempotency_key = ?, event_json = ?, committed_at = ?, projection_digest = ? WHERE ${where}`,
  );
  // The commit path when this connection knows the head: the update only applies while the
  // stored head is still the one the new chain value was computed from.
  const advanceHead = db.prepare(
    `UPDATE runx_stream_heads SET version = ?, event_ref = ?, event_type = ?, event_digest = ?, idempotency_key = ?, event_json = ?, committed_at = ?, projection_digest = ? WHERE ${where} AND version = ? AND projection_digest = ?`,
  );
  const upsertHead = db.prepare(
    `INSERT INTO runx_stream_heads (data_source_ref, resource, aggregate_id, version, event_ref, event_type, event_digest, idempotency_key, event_json, committed_at, projection_digest)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (data_source_ref, resource, aggregate_id) DO UPDATE SET version = excluded.version, event_ref = excluded.event_ref, event_type = excluded.event_type, event_digest = excluded.event_digest, idempotency_key = excluded.idempotency_key, event_json = excluded.event_json, committed_at = excluded.committed_at, projection_digest = excluded.projection_digest`,
  );
  const forward = db.prepare(
    `SELECT version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at FROM runx_events WHERE ${where} AND version > ? ORDER BY version ASC LIMIT ?`,
  );
  const tail = db.prepare(
    `SELECT version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at FROM runx_events WHERE ${where} AND version > ? ORDER BY version ASC`,
  );
  const secretInsert = db.prepare(
    "INSERT OR IGNORE INTO runx_source_secrets (data_source_ref, cursor_secret) VALUES (?, ?)",
  );
  const secretSelect = db.prepare(
    "SELECT cursor_secret FROM runx_source_secrets WHERE data_source_ref = ?",
  );

  type HeadRow = EventRow & { projection_digest: string };
  const readHead = (s: StreamKey): StreamHead => {
    const row = headStmt.get(s.source, s.resource, s.aggregateId) as HeadRow | undefined;
    if (row === undefined)
      return { version: 0, projection_digest: EMPTY_PROJECTION_DIGEST, last: null };
    return {
      version: Number(row.version),
      projection_digest: row.projection_digest,
      last: rowToRecord(row),
    };
  };

  /** The head this connection last saw per stream (a hint: every use is checked in SQL). */
  const known = new Map<string, { version: number; digest: string }>();
  const streamId = (s: StreamKey) => `${s.source}\u0000${s.resource}\u0000${s.aggregateId}`;
  const remember = (id: string, version: number, digest: string) => {
    if (known.size >= 10_000 && !known.has(id)) known.clear();
    known.set(id, { version, digest });
  };
  /** Thrown inside the fast path's transaction to roll it back (the key was used before). */
  const keyTaken = new Error("idempotency key already used");

  const insertRecord = (s: StreamKey, req: AppendRequest) => {
    const r = req.record;
    insertEvent.run(
      s.source,
      s.resource,
      s.aggregateId,
      r.version,
      r.idempotency_key,
      r.event_ref,
      r.event_type,
      r.event_digest,
      req.eventJson,
      r.committed_at,
    );
  };

  /** The head columns an append writes, in the order the head statements bind them. */
  const headValues = (req: AppendRequest, next: string) => {
    const r = req.record;
    return [
      r.version,
      r.event_ref,
      r.event_type,
      r.event_digest,
      r.idempotency_key,
      req.eventJson,
      r.committed_at,
      next,
    ] as const;
  };

  /**
   * One statement fewer when the head is the one this connection last saw: advance it under a
   * version + chain-value guard, then insert the event. When the guard does not hold (another
   * writer moved the head) the ordinary path runs in the same transaction; when the key was
   * used before, `keyTaken` rolls the transaction back and the caller runs the ordinary path.
   */
  const hintedAppendTx = (
    req: AppendRequest,
    hint: { version: number; digest: string },
  ): AppendOutcome => {
    const s = req.stream;
    const r = req.record;
    const next = chainDigest(hint.digest, r.version, r.event_digest);
    const moved = advanceHead.run(
      ...headValues(req, next),
      s.source,
      s.resource,
      s.aggregateId,
      hint.version,
      hint.digest,
    ).changes;
    if (moved !== 1) return appendTx(req);
    try {
      insertRecord(s, req);
    } catch (error) {
      if ((error as { code?: unknown }).code === "SQLITE_CONSTRAINT_UNIQUE") throw keyTaken;
      throw error;
    }
    return { kind: "committed", projectionDigest: next };
  };

  const appendTx = (req: AppendRequest): AppendOutcome => {
    const s = req.stream;
    const row = headVersionStmt.get(s.source, s.resource, s.aggregateId) as
      { version: number; projection_digest: string } | undefined;
    const head =
      row === undefined
        ? { version: 0, projection_digest: EMPTY_PROJECTION_DIGEST }
        : { version: Number(row.version), projection_digest: row.projection_digest };
    // Key lookup before the version check, so a retry with a stale version still replays.
    // On the happy path the idempotency unique index answers it during the insert.
    const settleExisting = (): AppendOutcome | undefined => {
      const existing = byKey.get(s.source, s.resource, s.aggregateId, req.idempotencyKey) as
        EventRow | undefined;
      if (existing === undefined) return undefined;
      if (existing.event_digest === req.record.event_digest) {
        return {
          kind: "replay",
          record: rowToRecord(existing),
          currentVersion: head.version,
          projectionDigest: head.projection_digest,
        };
      }
      return {
        kind: "idempotency_conflict",
        currentVersion: head.version,
        projectionDigest: head.projection_digest,
      };
    };
    if (head.version !== req.expectedVersion) {
      return (
        settleExisting() ?? {
          kind: "version_conflict",
          currentVersion: head.version,
          projectionDigest: head.projection_digest,
        }
      );
    }
    const r = req.record;
    const next = chainDigest(head.projection_digest, r.version, r.event_digest);
    try {
      insertRecord(s, req);
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_CONSTRAINT_UNIQUE") throw error;
      const settled = settleExisting();
      if (settled === undefined) throw error;
      return settled;
    }
    if (row === undefined) {
      upsertHead.run(s.source, s.resource, s.aggregateId, ...headValues(req, next));
    } else {
      updateHead.run(...headValues(req, next), s.source, s.resource, s.aggregateId);
    }
    return { kind: "committed", projectionDigest: next };
  };
  const hintedAppend = db.transaction(hintedAppendTx);
  const appendTransaction = db.transaction(appendTx);
  const appendImmediate = (req: AppendRequest): AppendOutcome => {
    const id = streamId(req.stream);
    const hint = known.get(id);
    let outcome: AppendOutcome | undefined;
    if (hint !== undefined && hint.version > 0 && hint.version === req.expectedVersion) {
      try {
        outcome = hintedAppend.immediate(req, hint);
      } catch (error) {
        if (error !== keyTaken) throw error;
      }
    }
    outcome ??= appendTransaction.immediate(req);
    if (outcome.kind === "committed") remember(id, req.record.version, outcome.projectionDigest);
    else remember(id, outcome.currentVersion, outcome.projectionDigest);
    return outcome;
  };
  const snapshot = <T>(fn: () => T): T => db.transaction(fn).deferred();

  return {
    adapter: "data.sqlite",
    provider: "sqlite-event-store",
    storageClass: "sqlite",
    addEvidence: () => undefined,
    append(req) {
      return Promise.resolve(appendImmediate(req));
    },
    readEvents(s, page): Promise<EventPage> {
      return Promise.resolve(
        snapshot(() => {
          const head = readHead(s);
          const rows =
            page.afterVersion !== undefined
              ? (forward.all(
                  s.source,
                  s.resource,
                  s.aggregateId,
                  page.afterVersion,
                  page.limit + 1,
                ) as EventRow[])
              : (tail.all(
                  s.source,
                  s.resource,
                  s.aggregateId,
                  Math.max(0, head.version - page.limit),
                ) as EventRow[]);
          return { head, records: rows.map(rowToRecord) };
        }),
      );
    },
    readHead(s) {
      return Promise.resolve(snapshot(() => readHead(s)));
    },
    listHeads(q: HeadsQuery): Promise<HeadRecord[]> {
      const params: (string | number)[] = [q.source, q.resource];
      let sql = `SELECT aggregate_id, version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at FROM runx_stream_heads WHERE data_source_ref = ? AND resource = ?`;
      if (q.eventTypes.length > 0) {
        sql += ` AND event_type IN (${q.eventTypes.map(() => "?").join(", ")})`;
        params.push(...q.eventTypes);
      }
      if (q.after !== undefined) {
        sql += " AND (committed_at < ? OR (committed_at = ? AND aggregate_id > ?))";
        params.push(q.after.committed_at, q.after.committed_at, q.after.aggregate_id);
      }
      sql += " ORDER BY committed_at DESC, aggregate_id ASC LIMIT ?";
      params.push(q.limit);
      const rows = db.prepare(sql).all(...params) as (EventRow & { aggregate_id: string })[];
      return Promise.resolve(
        rows.map((row) => ({ ...rowToRecord(row), aggregate_id: row.aggregate_id })),
      );
    },
    cursorSecret(source) {
      // Read first: list_stream_heads stays a pure read once the secret exists.
      const found = secretSelect.get(source) as { cursor_secret: Buffer } | undefined;
      const row =
        found ??
        db
          .transaction(() => {
            secretInsert.run(source, randomBytes(32));
            return secretSelect.get(source) as { cursor_secret: Buffer };
          })
          .immediate();
      return Promise.resolve(new Uint8Array(row.cursor_secret));
    },
    close() {
      if (db.open) db.close();
      return Promise.resolve();
    },
  };
}
