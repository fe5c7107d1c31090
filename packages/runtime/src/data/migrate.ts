/**
 * `runx data migrate`: upgrades a recognised legacy SQLite event store to schema v1 under an
 * exclusive lock. Order: validate paths and the source ref; lock; classify the schema; a v1
 * store is re-verified (every head against a recomputed chain) and answers `current` with no
 * backup; a legacy store is fingerprinted row by row, backed up with SQLite's online backup
 * API (the backup is re-read and must fingerprint identically), then rewritten in one
 * EXCLUSIVE transaction that rebuilds heads and digests and must re-fingerprint identically
 * before it commits. Anything unrecognised is refused before a single byte changes.
 */
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import type Database from "better-sqlite3";
import { RuntimeError } from "../errors.js";
import { hashCanonical } from "../receipts/canonical.js";
import { openSqliteDatabase } from "../store/sqlite-native.js";
import type { JsonRecord } from "../contracts/json.js";
import {
  EMPTY_PROJECTION_DIGEST,
  MAX_INT,
  chainDigest,
  deriveEventType,
  isAggregateId,
  isIdempotencyKey,
  isResource,
  isSourceRef,
  normalizeTimestamp,
} from "./model.js";
import { SQLITE_SCHEMA_V1, SQLITE_SCHEMA_VERSION, sqliteSchemaState } from "./sqlite.js";

/** `runx.event_store_migration_proof.v1`. */
export interface MigrationProof {
  schema: "runx.event_store_migration_proof.v1";
  status: "migrated" | "current";
  data_source_ref: string;
  database_path: string;
  backup_path: string | null;
  source_schema: "v0_unscoped" | "v0_scoped" | "v1";
  target_schema_version: 1;
  source_digest: string;
  backup_digest: string | null;
  result_digest: string;
  event_count: number;
  stream_count: number;
  verified: true;
}

export interface MigrateOptions {
  workspaceRoot: string;
  /** Workspace-relative database path. */
  database: string;
  source: string;
  /** Workspace-relative backup path (default `<database>.v0.backup.sqlite`). */
  backup?: string;
}

const LEGACY_COLUMNS = [
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
const TOLERATED = new Set(["runx_events", "runx_stream_heads", "runx_data_store_migrations"]);

function fail(message: string, details: Record<string, unknown> = {}): never {
  throw new RuntimeError("DATA_SOURCE_INVALID", message, {
    kind: "event_store_migration",
    ...details,
  });
}

function contained(root: string, rel: string, what: string): string {
  if (rel.trim() === "" || isAbsolute(rel))
    fail(`${what} must be a workspace-relative path`, { path: what });
  const full = resolve(root, rel);
  const back = relative(root, full);
  if (back.startsWith("..") || isAbsolute(back))
    fail(`${what} ${rel} is outside the workspace; nothing was created`, { path: what });
  let current = root;
  for (const part of back.split(/[\\/]/)) {
    current = join(current, part);
    if (existsSync(current) && lstatSync(current).isSymbolicLink())
      fail(`${what} ${rel} crosses a symbolic link; refusing`, { path: what });
  }
  return full;
}

interface Row {
  source: string;
  resource: string;
  aggregate: string;
  version: number;
  key: string;
  ref: string;
  type: string;
  digest: string;
  json: string;
  at: string;
}

/** Length-prefixed, domain-separated digest of every row in stream/version order. */
function contentDigest(rows: readonly Row[]): string {
  const hash = createHash("sha256").update("runx.event-store.content.v1\u0000");
  const field = (value: string) => {
    const bytes = Buffer.from(value, "utf8");
    const length = Buffer.alloc(8);
    length.writeBigUInt64BE(BigInt(bytes.length));
    hash.update(length).update(bytes);
  };
  for (const r of rows) {
    for (const value of [
      r.source,
      r.resource,
      r.aggregate,
      String(r.version),
      r.key,
      r.ref,
      r.type,
      r.digest,
      r.json,
      r.at,
    ])
      field(value);
  }
  return `sha256:${hash.digest("hex")}`;
}

const order = (a: Row, b: Row) =>
  a.source < b.source
    ? -1
    : a.source > b.source
      ? 1
      : a.resource < b.resource
        ? -1
        : a.resource > b.resource
          ? 1
          : a.aggregate < b.aggregate
            ? -1
            : a.aggregate > b.aggregate
              ? 1
              : a.version - b.version;

/** Validates rows as an event store must hold them; returns canonicalised rows and stream count. */
function fingerprint(raw: Row[]): { digest: string; rows: Row[]; streams: number } {
  const rows = raw.map((r) => {
    let event: unknown;
    try {
      event = JSON.parse(r.json);
    } catch {
      return fail(`row ${r.ref}: event_json is not JSON`);
    }
    if (event === null || typeof event !== "object" || Array.isArray(event))
      fail(`row ${r.ref}: event_json is not an object`);
    const record = event as JsonRecord;
    if (!isSourceRef(r.source) || !isResource(r.resource) || !isAggregateId(r.aggregate))
      fail(`row ${r.ref}: invalid source, resource or aggregate id`);
    if (!Number.isSafeInteger(r.version) || r.version < 1 || r.version > MAX_INT)
      fail(`row ${r.ref}: invalid version`);
    if (r.ref !== `${r.resource}:${r.aggregate}:${r.version}`)
      fail(`row ${r.ref}: event_ref is not resource:aggregate:version`);
    if (!isIdempotencyKey(r.key)) fail(`row ${r.ref}: invalid idempotency key`);
    if (hashCanonical(record) !== r.digest || deriveEventType(record) !== r.type)
      fail(`row ${r.ref}: stored digest or type does not match the event`);
    if (normalizeTimestamp(r.at) !== r.at)
      fail(`row ${r.ref}: committed_at is not canonical UTC milliseconds`);
    return r;
  });
  rows.sort(order);
  let streams = 0;
  let previous: Row | undefined;
  for (const r of rows) {
    const same =
      previous !== undefined &&
      previous.source === r.source &&
      previous.resource === r.resource &&
      previous.aggregate === r.aggregate;
    if (!same) streams++;
    const expected = same ? (previous as Row).version + 1 : 1;
    if (r.version !== expected)
      fail(
        `stream ${r.resource}:${r.aggregate}: versions are not contiguous from 1 (found ${r.version}, expected ${expected})`,
      );
    previous = r;
  }
  return { digest: contentDigest(rows), rows, streams };
}

function readV1(db: Database.Database): Row[] {
  return (
    db
      .prepare(
        "SELECT data_source_ref AS source, resource, aggregate_id AS aggregate, version, idempotency_key AS key, event_ref AS ref, event_type AS type, event_digest AS digest, event_json AS json, committed_at AS at FROM runx_events",
      )
      .all() as Row[]
  ).map((r) => ({ ...r, version: Number(r.version) }));
}

/** Recomputes each stream's chain and compares it (and the head fields) with the stored head. */
function verifyHeads(db: Database.Database, rows: readonly Row[]): void {
  const heads = db
    .prepare(
      "SELECT data_source_ref AS source, resource, aggregate_id AS aggregate, version, event_ref AS ref, event_digest AS digest, projection_digest AS pd FROM runx_stream_heads",
    )
    .all() as {
    source: string;
    resource: string;
    aggregate: string;
    version: number;
    ref: string;
    digest: string;
    pd: string;
  }[];
  const expected = new Map<string, { version: number; ref: string; digest: string; pd: string }>();
  for (const r of rows) {
    const id = JSON.stringify([r.source, r.resource, r.aggregate]);
    const prev = expected.get(id);
    expected.set(id, {
      version: r.version,
      ref: r.ref,
      digest: r.digest,
      pd: chainDigest(prev?.pd ?? EMPTY_PROJECTION_DIGEST, r.version, r.digest),
    });
  }
  if (heads.length !== expected.size)
    fail("stream heads do not match the event streams (head count differs)");
  for (const h of heads) {
    const e = expected.get(JSON.stringify([h.source, h.resource, h.aggregate]));
    if (
      e === undefined ||
      e.version !== Number(h.version) ||
      e.ref !== h.ref ||
      e.digest !== h.digest ||
      e.pd !== h.pd
    ) {
      fail(`stream head ${h.resource}:${h.aggregate} does not match its recomputed chain`);
    }
  }
}

const fileDigest = (path: string) =>
  `sha256:${createHash("sha256").update(readFileSync(path)).digest("hex")}`;

/** Runs the migration; throws DATA_SOURCE_INVALID (details.kind = event_store_migration) on refusal. */
export async function migrateSqliteStore(options: MigrateOptions): Promise<MigrationProof> {
  if (!isSourceRef(options.source))
    fail("--source must be a non-empty token of at most 512 bytes without control characters");
  const root = resolve(options.workspaceRoot);
  const dbPath = contained(root, options.database, "--database");
  if (!existsSync(dbPath) || !lstatSync(dbPath).isFile())
    fail(`--database ${options.database} is not an existing regular file`);
  const backupRel = options.backup ?? `${options.database}.v0.backup.sqlite`;
  const backupPath = contained(root, backupRel, "--backup");
  if (backupPath === dbPath) fail("--backup must differ from --database");

  const db = openSqliteDatabase(dbPath, { fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    db.exec("COMMIT");
    const state = sqliteSchemaState(db);
    if (state === "v1") {
      const rows = readV1(db);
      const { digest, streams } = fingerprint(rows);
      verifyHeads(db, rows);
      return {
        schema: "runx.event_store_migration_proof.v1",
        status: "current",
        data_source_ref: options.source,
        database_path: options.database,
        backup_path: null,
        source_schema: "v1",
        target_schema_version: 1,
        source_digest: digest,
        backup_digest: null,
        result_digest: digest,
        event_count: rows.length,
        stream_count: streams,
        verified: true,
      };
    }
    const version = db.pragma("user_version", { simple: true }) as number;
    const tables = (
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]
    ).map((t) => t.name);
    const columns = (db.prepare("PRAGMA table_info(runx_events)").all() as { name: string }[]).map(
      (c) => c.name,
    );
    const set = new Set(columns);
    const unscoped = columns.length === 9 && LEGACY_COLUMNS.every((c) => set.has(c));
    const scoped =
      columns.length === 10 &&
      set.has("data_source_ref") &&
      LEGACY_COLUMNS.every((c) => set.has(c));
    const strays = tables.filter((t) => t.startsWith("runx_") && !TOLERATED.has(t));
    if (version !== 0 || (!unscoped && !scoped) || strays.length > 0) {
      fail(
        `unsupported event store schema (user_version ${version}${strays.length > 0 ? `, unexpected tables ${strays.join(", ")}` : ""}); the database was not modified. Recovery: restore it from a backup, or export its events and append them to a new store`,
      );
    }
    const sourceSchema = unscoped ? "v0_unscoped" : "v0_scoped";
    const readLegacy = (handle: Database.Database): Row[] =>
      (
        handle
          .prepare(
            `SELECT ${scoped ? "data_source_ref" : "NULL"} AS source, resource, aggregate_id AS aggregate, version, idempotency_key AS key, event_ref AS ref, event_type AS type, event_digest AS digest, event_json AS json, committed_at AS at FROM runx_events`,
          )
          .all() as (Row & { source: string | null })[]
      ).map((r) => ({
        ...r,
        version: Number(r.version),
        source: r.source === null || r.source.trim() === "" ? options.source : r.source,
      }));
    const before = fingerprint(readLegacy(db));
    const schemaSql = (handle: Database.Database) =>
      hashCanonical(
        handle.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY type, name").all(),
      );
    if (existsSync(backupPath))
      fail(`backup ${backupRel} already exists; choose a new --backup path`);
    await db.backup(backupPath);
    const copy = openSqliteDatabase(backupPath, { readonly: true });
    try {
      if (
        schemaSql(copy) !== schemaSql(db) ||
        fingerprint(readLegacy(copy)).digest !== before.digest
      ) {
        fail("the backup does not match the source; the database was not modified");
      }
    } finally {
      copy.close();
    }
    const backupDigest = fileDigest(backupPath);

    db.exec("BEGIN EXCLUSIVE");
    try {
      for (const index of [
        "runx_events_stream_version_v1",
        "runx_events_stream_idempotency_v1",
        "runx_stream_heads_recent_v1",
        "runx_stream_heads_type_recent_v1",
      ]) {
        db.exec(`DROP INDEX IF EXISTS ${index}`);
      }
      db.exec("ALTER TABLE runx_events RENAME TO runx_events_migration_v0");
      db.exec("DROP TABLE IF EXISTS runx_stream_heads");
      db.exec("DROP TABLE IF EXISTS runx_data_store_migrations");
      db.exec(SQLITE_SCHEMA_V1);
      const insert = db.prepare(
        "INSERT INTO runx_events (data_source_ref, resource, aggregate_id, version, idempotency_key, event_ref, event_type, event_digest, event_json, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      const head = db.prepare(
        "INSERT OR REPLACE INTO runx_stream_heads (data_source_ref, resource, aggregate_id, version, event_ref, event_type, event_digest, idempotency_key, event_json, committed_at, projection_digest) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      let chain = EMPTY_PROJECTION_DIGEST;
      for (const r of before.rows) {
        if (r.version === 1) chain = EMPTY_PROJECTION_DIGEST;
        chain = chainDigest(chain, r.version, r.digest);
        insert.run(
          r.source,
          r.resource,
          r.aggregate,
          r.version,
          r.key,
          r.ref,
          r.type,
          r.digest,
          r.json,
          r.at,
        );
        head.run(
          r.source,
          r.resource,
          r.aggregate,
          r.version,
          r.ref,
          r.type,
          r.digest,
          r.key,
          r.json,
          r.at,
          chain,
        );
      }
      db.exec("DROP TABLE runx_events_migration_v0");
      db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
      if (sqliteSchemaState(db) !== "v1")
        fail("the rebuilt schema did not validate; nothing was committed");
      const rows = readV1(db);
      const after = fingerprint(rows);
      verifyHeads(db, rows);
      if (after.digest !== before.digest)
        fail("the migrated events differ from the source; nothing was committed");
      db.exec("COMMIT");
      return {
        schema: "runx.event_store_migration_proof.v1",
        status: "migrated",
        data_source_ref: options.source,
        database_path: options.database,
        backup_path: backupRel,
        source_schema: sourceSchema,
        target_schema_version: 1,
        source_digest: before.digest,
        backup_digest: backupDigest,
        result_digest: after.digest,
        event_count: rows.length,
        stream_count: after.streams,
        verified: true,
      };
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  } finally {
    db.close();
  }
}
