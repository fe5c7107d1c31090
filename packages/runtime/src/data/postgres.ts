/**
 * PostgreSQL event store (`data.postgres`, driver `pg`). Same tables as SQLite schema v1 (text
 * columns in the "C" collation so keyset order equals byte order). An append is one round trip
 * to the database function runx_append_v1: it takes a per-stream transaction-scoped advisory
 * lock before reading the head (writers in any number of processes serialise), checks the
 * idempotency key then the version, inserts, and computes the next chain value from the head
 * it read under the lock; the primary key and the idempotency unique index are the backstop.
 * Reads run in one REPEATABLE READ, READ ONLY transaction.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { AppendOutcome, DataAdapter, HeadsQuery } from "./adapter.js";
import { EMPTY_PROJECTION_DIGEST, rowToRecord } from "./model.js";
import type { HeadRecord, StreamHead, StreamKey } from "./model.js";

const C = 'COLLATE "C"';
/** DDL; created under a session advisory lock so concurrent first opens do not race. */
export const POSTGRES_SCHEMA = `
CREATE TABLE IF NOT EXISTS runx_events (
  data_source_ref TEXT ${C} NOT NULL,
  resource TEXT ${C} NOT NULL,
  aggregate_id TEXT ${C} NOT NULL,
  version BIGINT NOT NULL,
  idempotency_key TEXT ${C} NOT NULL,
  event_ref TEXT NOT NULL,
  event_type TEXT ${C} NOT NULL,
  event_digest TEXT NOT NULL,
  event_json TEXT NOT NULL,
  committed_at TEXT ${C} NOT NULL,
  PRIMARY KEY (data_source_ref, resource, aggregate_id, version)
);
CREATE UNIQUE INDEX IF NOT EXISTS runx_events_stream_idempotency_v1 ON runx_events (data_source_ref, resource, aggregate_id, idempotency_key);
CREATE TABLE IF NOT EXISTS runx_stream_heads (
  data_source_ref TEXT ${C} NOT NULL,
  resource TEXT ${C} NOT NULL,
  aggregate_id TEXT ${C} NOT NULL,
  version BIGINT NOT NULL,
  event_ref TEXT NOT NULL,
  event_type TEXT ${C} NOT NULL,
  event_digest TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  event_json TEXT NOT NULL,
  committed_at TEXT ${C} NOT NULL,
  projection_digest TEXT NOT NULL,
  PRIMARY KEY (data_source_ref, resource, aggregate_id)
);
CREATE INDEX IF NOT EXISTS runx_stream_heads_recent_v1 ON runx_stream_heads (data_source_ref, resource, committed_at DESC, aggregate_id ASC);
CREATE INDEX IF NOT EXISTS runx_stream_heads_type_recent_v1 ON runx_stream_heads (data_source_ref, resource, event_type, committed_at DESC, aggregate_id ASC);
CREATE TABLE IF NOT EXISTS runx_source_secrets (
  data_source_ref TEXT NOT NULL PRIMARY KEY,
  cursor_secret BYTEA NOT NULL
);
CREATE OR REPLACE FUNCTION runx_append_v1(
  p_source TEXT, p_resource TEXT, p_aggregate TEXT, p_expected BIGINT, p_key TEXT,
  p_ref TEXT, p_type TEXT, p_digest TEXT, p_json TEXT, p_at TEXT, p_empty TEXT)
RETURNS TABLE (kind TEXT, current_version BIGINT, projection_digest TEXT, version BIGINT,
  idempotency_key TEXT, event_ref TEXT, event_type TEXT, event_digest TEXT, event_json TEXT,
  committed_at TEXT)
LANGUAGE plpgsql AS $fn$
DECLARE
  h_version BIGINT := 0;
  h_digest TEXT := p_empty;
  e RECORD;
  next_digest TEXT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(json_build_array(p_source, p_resource, p_aggregate)::text, 0));
  SELECT s.version, s.projection_digest INTO h_version, h_digest FROM runx_stream_heads s
    WHERE s.data_source_ref = p_source AND s.resource = p_resource AND s.aggregate_id = p_aggregate;
  IF NOT FOUND THEN h_version := 0; h_digest := p_empty; END IF;
  SELECT * INTO e FROM runx_events x WHERE x.data_source_ref = p_source AND x.resource = p_resource
    AND x.aggregate_id = p_aggregate AND x.idempotency_key = p_key;
  IF FOUND THEN
    IF e.event_digest = p_digest THEN
      RETURN QUERY SELECT 'replay'::TEXT, h_version, h_digest, e.version, e.idempotency_key, e.event_ref, e.event_type, e.event_digest, e.event_json, e.committed_at;
    ELSE
      RETURN QUERY SELECT 'idempotency_conflict'::TEXT, h_version, h_digest, NULL::BIGINT, NULL, NULL, NULL, NULL, NULL, NULL;
    END IF;
    RETURN;
  END IF;
  IF h_version <> p_expected THEN
    RETURN QUERY SELECT 'version_conflict'::TEXT, h_version, h_digest, NULL::BIGINT, NULL, NULL, NULL, NULL, NULL, NULL;
    RETURN;
  END IF;
  -- The chain value is computed here, from the head read under the lock:
  -- H({"event_digest":E,"previous_projection_digest":P,"version":n}) (all ASCII, canonical).
  next_digest := 'sha256:' || encode(sha256(convert_to('{"event_digest":"' || p_digest || '","previous_projection_digest":"' || h_digest || '","version":' || (p_expected + 1)::TEXT || '}', 'UTF8')), 'hex');
  INSERT INTO runx_events (data_source_ref, resource, aggregate_id, version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at)
    VALUES (p_source, p_resource, p_aggregate, p_expected + 1, p_key, p_ref, p_type, p_digest, p_json, p_at);
  INSERT INTO runx_stream_heads AS t (data_source_ref, resource, aggregate_id, version, event_ref, event_type, event_digest, idempotency_key, event_json, committed_at, projection_digest)
    VALUES (p_source, p_resource, p_aggregate, p_expected + 1, p_ref, p_type, p_digest, p_key, p_json, p_at, next_digest)
    ON CONFLICT (data_source_ref, resource, aggregate_id) DO UPDATE SET version = EXCLUDED.version, event_ref = EXCLUDED.event_ref, event_type = EXCLUDED.event_type, event_digest = EXCLUDED.event_digest, idempotency_key = EXCLUDED.idempotency_key, event_json = EXCLUDED.event_json, committed_at = EXCLUDED.committed_at, projection_digest = EXCLUDED.projection_digest;
  RETURN QUERY SELECT 'committed'::TEXT, p_expected + 1, next_digest, NULL::BIGINT, NULL, NULL, NULL, NULL, NULL, NULL;
END
$fn$;
`;
const SCHEMA_LOCK = 0x72756e78; // "runx"
const SCHEMA_READY = `SELECT to_regclass('runx_events') IS NOT NULL
  AND to_regclass('runx_stream_heads') IS NOT NULL
  AND to_regclass('runx_source_secrets') IS NOT NULL
  AND to_regclass('runx_events_stream_idempotency_v1') IS NOT NULL
  AND to_regclass('runx_stream_heads_recent_v1') IS NOT NULL
  AND to_regclass('runx_stream_heads_type_recent_v1') IS NOT NULL
  AND to_regprocedure('runx_append_v1(text,text,text,bigint,text,text,text,text,text,text,text)') IS NOT NULL AS ready`;

export interface PostgresAdapterOptions {
  endpoint: string;
  user?: string;
  password?: string;
  connectTimeoutMs?: number;
}

const COLS =
  "version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at";
const WHERE = "data_source_ref = $1 AND resource = $2 AND aggregate_id = $3";

type Row = {
  version: string;
  idempotency_key: string;
  event_ref: string;
  event_type: string;
  event_digest: string;
  event_json: string;
  committed_at: string;
  aggregate_id?: string;
  projection_digest?: string;
};
const toRecord = (row: Row) => rowToRecord({ ...row, version: Number(row.version) });

/** Connects and makes sure the schema exists. */
export async function openPostgresAdapter(options: PostgresAdapterOptions): Promise<DataAdapter> {
  const url = new URL(options.endpoint);
  const client = new pg.Client({
    host: url.hostname,
    port: url.port === "" ? 5432 : Number(url.port),
    database: decodeURIComponent(url.pathname.replace(/^\//, "")) || "postgres",
    ...(options.user !== undefined ? { user: options.user } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  client.on("error", () => undefined);
  await client.connect();
  try {
    // Every object of the schema present: nothing to do (no DDL, no catalog locks per open).
    const { rows } = await client.query<{ ready: boolean }>(SCHEMA_READY);
    if (rows[0]?.ready !== true) {
      await client.query("SELECT pg_advisory_lock($1)", [SCHEMA_LOCK]);
      try {
        await client.query(POSTGRES_SCHEMA);
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [SCHEMA_LOCK]);
      }
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }

  const key = (s: StreamKey) => [s.source, s.resource, s.aggregateId];
  const readHead = async (s: StreamKey): Promise<StreamHead> => {
    const { rows } = await client.query<Row>(
      `SELECT ${COLS}, projection_digest FROM runx_stream_heads WHERE ${WHERE}`,
      key(s),
    );
    const row = rows[0];
    if (row === undefined)
      return { version: 0, projection_digest: EMPTY_PROJECTION_DIGEST, last: null };
    return {
      version: Number(row.version),
      projection_digest: row.projection_digest ?? "",
      last: toRecord(row),
    };
  };
  const inTx = async <T>(begin: string, fn: () => Promise<T>): Promise<T> => {
    await client.query(begin);
    try {
      const out = await fn();
      await client.query("COMMIT");
      return out;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  };
  const snapshot = <T>(fn: () => Promise<T>) =>
    inTx("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", fn);

  return {
    adapter: "data.postgres",
    provider: "postgres-event-store",
    storageClass: "postgres",
    addEvidence: () => undefined,
    /** One round trip: runx_append_v1 locks the stream, checks, inserts and chains in the database. */
    async append(req): Promise<AppendOutcome> {
      const s = req.stream;
      const r = req.record;
      const { rows } = await client.query<Row & { kind: string; current_version: string }>(
        "SELECT * FROM runx_append_v1($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        [
          ...key(s),
          req.expectedVersion,
          req.idempotencyKey,
          r.event_ref,
          r.event_type,
          r.event_digest,
          req.eventJson,
          r.committed_at,
          EMPTY_PROJECTION_DIGEST,
        ],
      );
      const row = rows[0];
      if (row === undefined) throw new Error("runx_append_v1 returned no row");
      const currentVersion = Number(row.current_version);
      const projectionDigest = row.projection_digest ?? "";
      switch (row.kind) {
        case "committed":
          return { kind: "committed", projectionDigest };
        case "replay":
          return { kind: "replay", record: toRecord(row), currentVersion, projectionDigest };
        case "idempotency_conflict":
        case "version_conflict":
          return { kind: row.kind, currentVersion, projectionDigest };
      }
      throw new Error(`runx_append_v1 answered ${row.kind}`);
    },
    readEvents(s, page) {
      return snapshot(async () => {
        const head = await readHead(s);
        const { rows } =
          page.afterVersion !== undefined
            ? await client.query<Row>(
                `SELECT ${COLS} FROM runx_events WHERE ${WHERE} AND version > $4 ORDER BY version ASC LIMIT $5`,
                [...key(s), page.afterVersion, page.limit + 1],
              )
            : await client.query<Row>(
                `SELECT ${COLS} FROM runx_events WHERE ${WHERE} AND version > $4 ORDER BY version ASC`,
                [...key(s), Math.max(0, head.version - page.limit)],
              );
        return { head, records: rows.map(toRecord) };
      });
    },
    readHead(s) {
      return snapshot(() => readHead(s));
    },
    async listHeads(q: HeadsQuery): Promise<HeadRecord[]> {
      const params: (string | number | string[])[] = [q.source, q.resource];
      let sql = `SELECT aggregate_id, ${COLS} FROM runx_stream_heads WHERE data_source_ref = $1 AND resource = $2`;
      if (q.eventTypes.length > 0) {
        params.push([...q.eventTypes]);
        sql += ` AND event_type = ANY($${params.length}::text[])`;
      }
      if (q.after !== undefined) {
        params.push(q.after.committed_at, q.after.aggregate_id);
        const c = `$${params.length - 1}`;
        const a = `$${params.length}`;
        sql += ` AND (committed_at < ${c} OR (committed_at = ${c} AND aggregate_id > ${a}))`;
      }
      params.push(q.limit);
      sql += ` ORDER BY committed_at DESC, aggregate_id ASC LIMIT $${params.length}`;
      const { rows } = await client.query<Row & { aggregate_id: string }>(sql, params);
      return rows.map((row) => ({ ...toRecord(row), aggregate_id: row.aggregate_id }));
    },
    async cursorSecret(source) {
      const select = () =>
        client.query<{ cursor_secret: Buffer }>(
          "SELECT cursor_secret FROM runx_source_secrets WHERE data_source_ref = $1",
          [source],
        );
      let { rows } = await select();
      if (rows[0] === undefined) {
        await client.query(
          "INSERT INTO runx_source_secrets (data_source_ref, cursor_secret) VALUES ($1, $2) ON CONFLICT DO NOTHING",
          [source, randomBytes(32)],
        );
        ({ rows } = await select());
      }
      const secret = rows[0]?.cursor_secret;
      if (secret === undefined || secret.length < 32) throw new Error("cursor secret is missing");
      return new Uint8Array(secret);
    },
    async close() {
      await client.end();
    },
  };
}
