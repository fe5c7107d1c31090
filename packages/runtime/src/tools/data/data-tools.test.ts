import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localSourcePath } from "../../data/bindings.js";
import { canonicalEvent, canonicalRecord, deriveEventType } from "../../data/model.js";
import type { EventRecord } from "../../data/model.js";
import { openSqliteAdapter } from "../../data/sqlite.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import { DATA_APPEND_SCOPE, DATA_READ_SCOPE, callDataOperation, dataTools } from "./data-tools.js";
import type { JsonRecord, ToolResult } from "../types.js";

const ALL = [DATA_READ_SCOPE, DATA_APPEND_SCOPE];
const SECRET = "sk-live-7d1e-not-for-output";
const stream = { data_source_ref: "local://tools", resource: "board_events", aggregate_id: "p-1" };
const packetOf = (result: ToolResult): JsonRecord =>
  (result as { output?: JsonRecord }).output ?? {};

describe("data tools: authority, redaction and declared resources", () => {
  let root: string;
  const ctx = (scopes: readonly string[], env: Record<string, string> = {}) => ({
    workspaceRoot: root,
    baseEnv: env,
    scopes,
    now: () => new Date("2026-07-14T04:00:00Z"),
  });
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "runx-data-tools-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("admit their own scopes, so the runtime passes a call without them through", () => {
    for (const tool of dataTools()) expect(tool.admitsOwnScopes, tool.name).toBe(true);
  });

  it("return a needs_authority packet as a POLICY_DENIED failure", async () => {
    const result = await callDataOperation(
      "append_event",
      { ...stream, expected_version: 0, idempotency_key: "k", event: { type: "a" } },
      ctx([DATA_READ_SCOPE]),
    );
    expect(result).toMatchObject({ status: "failure", code: "POLICY_DENIED" });
    expect(result.status === "failure" ? result.summary : "").toContain("needs_authority");
    const packet = packetOf(result);
    expect(packet).toMatchObject({
      status: "stopped",
      stop_conditions: [{ code: "needs_authority" }],
      data_operation_result: { data: { status: "stopped" } },
    });
    const read = await callDataOperation("read_projection", stream, ctx([DATA_READ_SCOPE]));
    expect(packetOf(read)).toMatchObject({ status: "read", after_version: 0 });
  });

  it("return redaction_required as a REDACTION_REQUIRED failure without the value, on append and on read", async () => {
    const refused = await callDataOperation(
      "append_event",
      {
        ...stream,
        expected_version: 0,
        idempotency_key: "k",
        event: { type: "a", credentials: { api_key: SECRET } },
      },
      ctx(ALL),
    );
    expect(refused).toMatchObject({ status: "failure", code: "REDACTION_REQUIRED" });
    expect(packetOf(refused)).toMatchObject({
      status: "stopped",
      redactions: [{ path: "event.credentials.api_key", reason: "secret_field" }],
    });
    expect(JSON.stringify(refused)).not.toContain(SECRET);

    // A stream written before the check existed: the event went straight to the SQLite file.
    const adapter = openSqliteAdapter({
      path: join(root, localSourcePath(stream.data_source_ref)),
      label: "legacy",
    });
    const event = { type: "a", credentials: { api_key: SECRET } };
    const eventJson = canonicalEvent(event);
    const record: EventRecord = {
      event_ref: "board_events:p-1:1",
      version: 1,
      event_type: deriveEventType(event),
      event,
      event_digest: sha256Prefixed(eventJson),
      idempotency_key: "legacy",
      committed_at: "2026-07-14T03:00:00.000Z",
    };
    const stored = await adapter.append({
      stream: { source: stream.data_source_ref, resource: "board_events", aggregateId: "p-1" },
      expectedVersion: 0,
      idempotencyKey: "legacy",
      eventJson,
      recordJson: canonicalRecord(record, eventJson),
      record,
      committedAtMs: Date.parse(record.committed_at),
    });
    await adapter.close();
    expect(stored.kind).toBe("committed");
    const read = await callDataOperation("read_events", stream, ctx(ALL));
    expect(read).toMatchObject({ status: "failure", code: "REDACTION_REQUIRED" });
    expect(packetOf(read)).toMatchObject({
      status: "stopped",
      events: [],
      redactions: [
        {
          event_ref: "board_events:p-1:1",
          path: "event.credentials.api_key",
          reason: "secret_field",
        },
      ],
    });
    expect(JSON.stringify(read)).not.toContain(SECRET);
  });

  it("refuse a resource the binding does not declare with needs_source", async () => {
    const env = {
      RUNX_DATA_SOURCES: JSON.stringify({
        data_sources: {
          "tenant://acme/board": {
            adapter: "data.sqlite",
            database_path: ".runx/data/acme.sqlite",
            resources: { board_events: { kind: "event_stream", partition_key: "aggregate_id" } },
          },
        },
      }),
    };
    const source = { data_source_ref: "tenant://acme/board", aggregate_id: "p-1" };
    const declared = await callDataOperation(
      "read_projection",
      { ...source, resource: "board_events" },
      ctx(ALL, env),
    );
    expect(packetOf(declared)).toMatchObject({ status: "read" });
    const undeclared = await callDataOperation(
      "read_events",
      { ...source, resource: "payroll_events" },
      ctx(ALL, env),
    );
    expect(undeclared).toMatchObject({ status: "failure", code: "DATA_SOURCE_INVALID" });
    expect(packetOf(undeclared)).toMatchObject({
      status: "stopped",
      stop_conditions: [
        {
          code: "needs_source",
          message:
            "resource payroll_events is not declared by the binding of data source tenant://acme/board (declared: board_events)",
        },
      ],
    });
  });

  it("refuse a declared resource entry of another kind, naming the field", async () => {
    const env = {
      RUNX_DATA_SOURCES: JSON.stringify({
        data_sources: {
          "tenant://acme/board": {
            adapter: "data.sqlite",
            database_path: ".runx/data/acme.sqlite",
            resources: { board_events: { kind: "table" } },
          },
        },
      }),
    };
    const result = await callDataOperation(
      "read_projection",
      { data_source_ref: "tenant://acme/board", resource: "board_events", aggregate_id: "p" },
      ctx(ALL, env),
    );
    expect(result).toMatchObject({ status: "failure", code: "DATA_SOURCE_INVALID" });
    expect(packetOf(result).stop_conditions).toEqual([
      expect.objectContaining({
        code: "needs_source",
        message: expect.stringContaining(
          'data_sources.tenant://acme/board.resources.board_events.kind: must be "event_stream"',
        ),
      }),
    ]);
  });
});
