/**
 * The data-store contract suite: one set of behaviour cases every adapter must pass (SQLite,
 * PostgreSQL, Redis). Each adapter's test file supplies a factory that opens a fresh, isolated
 * store (own file / database / key prefix) and cleans it up. Cases isolate themselves further
 * with a data_source_ref of their own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateToolsDataOperationResultOutput } from "../generated/validate-tools-data-operation-result.output.js";
import { hashCanonical } from "../receipts/canonical.js";
import type { JsonRecord } from "../contracts/json.js";
import type { DataAdapter } from "./adapter.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import {
  DATA_APPEND_SCOPE,
  DATA_READ_SCOPE,
  EMPTY_PROJECTION_DIGEST,
  MAX_EVENT_BYTES,
  canonicalEvent,
  canonicalRecord,
  chainDigest,
  deriveEventType,
  eventRef,
  recomputeChain,
} from "./model.js";
import type { DataOperation, DataOperationResult, EventRecord, HeadRecord } from "./model.js";
import { runOnAdapter } from "./operations.js";

/** How a test file provides stores. */
export interface ContractStore {
  /** Opens another connection to the same store (for concurrency cases). */
  open(): Promise<DataAdapter>;
  /** Drops everything the store created (database, file, keys). */
  destroy(): Promise<void>;
}

let counter = 0;
const clock = { ms: Date.parse("2026-07-14T04:00:00.000Z") };
const now = () => new Date((clock.ms += 1000));

/** Registers the contract cases for one adapter. */
export function dataStoreContract(
  name: string,
  createStore: () => Promise<ContractStore>,
  options: { timeoutMs?: number } = {},
): void {
  describe(`data store contract: ${name}`, { timeout: options.timeoutMs ?? 30_000 }, () => {
    let store: ContractStore;
    let adapter: DataAdapter;
    beforeAll(async () => {
      store = await createStore();
      adapter = await store.open();
    }, 60_000);
    afterAll(async () => {
      await adapter?.close();
      await store?.destroy();
    }, 60_000);

    /** Runs an operation and checks its envelope against the published output schema. */
    const op = async (
      operation: DataOperation,
      input: JsonRecord,
      via: DataAdapter = adapter,
      policy?: { scopes?: readonly string[]; resources?: readonly string[] },
    ) => {
      const result = await runOnAdapter(via, operation, input, {
        now,
        ...policy,
      });
      const packet = result as unknown as JsonRecord;
      const valid = validateToolsDataOperationResultOutput({
        ...packet,
        data_operation_result: { data: packet },
      });
      expect(valid, JSON.stringify(validateToolsDataOperationResultOutput.errors)).toBe(true);
      expect(result.operation).toBe(operation);
      return result;
    };
    const fresh = () => `tenant://contract/${name}/${process.pid}/${++counter}`;
    const stream = (source = fresh()) => ({
      data_source_ref: source,
      resource: "board_events",
      aggregate_id: "posting-123",
    });
    type Stream = ReturnType<typeof stream>;
    const append = (s: Stream, fields: JsonRecord) =>
      op("append_event", {
        ...s,
        expected_version: 0,
        idempotency_key: "k1",
        event: { type: "a" },
        ...fields,
      });
    const fill = async (
      s: Stream,
      count: number,
      event: (i: number) => JsonRecord = (i) => ({ type: "item.changed", n: i }),
    ) => {
      for (let i = 0; i < count; i++) {
        const r = await append(s, {
          expected_version: i,
          idempotency_key: `k${i + 1}`,
          event: event(i + 1),
        });
        expect(r.status).toBe("committed");
      }
    };
    const readAll = async (s: Stream): Promise<EventRecord[]> => {
      const out: EventRecord[] = [];
      let after = 0;
      for (;;) {
        const page = await op("read_events", { ...s, after_version: after, limit: 500 });
        out.push(...page.events);
        after = page.next_after_version ?? after;
        if (page.has_more !== true) return out;
      }
    };
    const stopCode = (r: DataOperationResult) => r.stop_conditions[0]?.code;

    describe("append_event", () => {
      it("commits the first event as version 1 with the documented digests", async () => {
        const s = stream();
        const event = { type: "posting.created", payload: { title: "x" } };
        const r = await append(s, { event, idempotency_key: "posting-123:create" });
        expect(r).toMatchObject({
          schema: "runx.data.operation_result.v1",
          operation: "append_event",
          status: "committed",
          before_version: 0,
          after_version: 1,
          idempotency_key: "posting-123:create",
          event_ref: "board_events:posting-123:1",
          event_digest: "sha256:9dca04f49bddc150cc60e76fc6cbbb610f2708c8304d707d3c50ffd3af774909",
          stop_conditions: [],
          events: [],
          rows: [],
          projection: null,
          redactions: [],
        });
        expect(r.projection_digest).toBe(
          chainDigest(EMPTY_PROJECTION_DIGEST, 1, r.event_digest ?? ""),
        );
      });

      it("result_digest of a commit is the digest of the stored record", async () => {
        const s = stream();
        const r = await append(s, {});
        const [record] = (await op("read_events", s)).events;
        expect(r.result_digest).toBe(hashCanonical(record));
      });

      it("advances versions densely and chains the head digest", async () => {
        const s = stream();
        await fill(s, 3);
        const projection = await op("read_projection", s);
        expect(projection.after_version).toBe(3);
        expect(projection.projection_digest).toBe(recomputeChain(await readAll(s)));
      });

      it("replays the same key and event with the stored result", async () => {
        const s = stream();
        const first = await append(s, {});
        const again = await append(s, {});
        expect(again).toMatchObject({
          status: "idempotent_replay",
          before_version: 1,
          after_version: 1,
          event_ref: first.event_ref,
        });
        expect(again.result_digest).toBe(first.result_digest);
        expect(again.provider_evidence.committed_version).toBe(1);
      });

      it("replays even when expected_version is stale", async () => {
        const s = stream();
        await append(s, {});
        await append(s, { expected_version: 1, idempotency_key: "k2", event: { type: "b" } });
        const retry = await append(s, { expected_version: 0 });
        expect(retry).toMatchObject({
          status: "idempotent_replay",
          before_version: 2,
          after_version: 2,
          event_ref: "board_events:posting-123:1",
        });
      });

      it("treats key order and 1.0 versus 1 as the same event", async () => {
        const s = stream();
        await append(s, { event: { type: "a", n: 1, z: { b: 2, a: 1 } } });
        const retry = await append(s, { event: { z: { a: 1, b: 2.0 }, n: 1.0, type: "a" } });
        expect(retry.status).toBe("idempotent_replay");
      });

      it("refuses a reused key with different content as a conflict", async () => {
        const s = stream();
        await append(s, {});
        const r = await append(s, { expected_version: 1, event: { type: "other" } });
        expect(r).toMatchObject({
          status: "conflict",
          before_version: 1,
          after_version: 1,
          event_ref: null,
          idempotency_key: "k1",
        });
        expect(r.stop_conditions).toEqual([
          { code: "conflict", message: "idempotency key was reused with different event content" },
        ]);
      });

      it("reports a version conflict with both versions", async () => {
        const s = stream();
        await append(s, {});
        const r = await append(s, { idempotency_key: "k2" });
        expect(r.stop_conditions).toEqual([
          { code: "conflict", message: "expected version 0, got 1" },
        ]);
        expect(r.result_digest).toBe(hashCanonical(r.stop_conditions[0]));
        expect(r.event_digest).toBe(hashCanonical({ type: "a" }));
      });

      it("refuses an expected_version ahead of the stream", async () => {
        const r = await append(stream(), { expected_version: 5 });
        expect(r).toMatchObject({ status: "conflict", before_version: 0, after_version: 0 });
        expect(r.projection_digest).toBe(EMPTY_PROJECTION_DIGEST);
      });

      it("scopes idempotency keys to one stream", async () => {
        const s = stream();
        await append(s, {});
        const other = await append({ ...s, aggregate_id: "posting-456" }, { event: { type: "z" } });
        expect(other.status).toBe("committed");
      });

      it("keeps sources apart even with identical resource and aggregate", async () => {
        const a = stream();
        const b = stream();
        await append(a, {});
        const r = await append(b, { event: { type: "z" } });
        expect(r.status).toBe("committed");
        expect((await op("read_projection", a)).after_version).toBe(1);
      });

      it("keeps resources apart within one source", async () => {
        const s = stream();
        await append(s, {});
        expect((await append({ ...s, resource: "other_events" }, {})).status).toBe("committed");
      });

      it("does not normalise Unicode: NFC and NFD differ", async () => {
        const s = stream();
        await append(s, { event: { type: "a", name: "caf\u00e9" } });
        const r = await append(s, {
          expected_version: 1,
          event: { type: "a", name: "cafe\u0301" },
        });
        expect(r.status).toBe("conflict");
      });

      it("accepts @ and / inside aggregate ids", async () => {
        const r = await append({ ...stream(), aggregate_id: "team@acme/posting-1" }, {});
        expect(r).toMatchObject({
          status: "committed",
          event_ref: "board_events:team@acme/posting-1:1",
        });
      });

      it("normalises observed_at to UTC milliseconds", async () => {
        const s = stream();
        await append(s, { observed_at: "2026-07-14T06:00:00.123456+02:00" });
        const [record] = (await op("read_events", s)).events;
        expect(record?.committed_at).toBe("2026-07-14T04:00:00.123Z");
      });

      it("preserves safe integers, floats and nested structure exactly", async () => {
        const s = stream();
        const event = {
          type: "a",
          big: 9007199254740991,
          neg: -12,
          f: 0.1,
          list: [1, "two", null, true, { x: [] }],
        };
        await append(s, { event });
        expect((await op("read_events", s)).events[0]?.event).toEqual(event);
      });
    });

    describe("event type derivation", () => {
      const typed = async (event: JsonRecord) => {
        const s = stream();
        const r = await append(s, { event });
        if (r.status !== "committed") return r;
        return (await op("read_events", s)).events[0]?.event_type;
      };
      it("uses event.type first", async () => {
        expect(
          await typed({ type: "t.one", event_type: "t.two", effect_family: "f", operation: "o" }),
        ).toBe("t.one");
      });
      it("falls back to event.event_type", async () => {
        expect(await typed({ event_type: "t.two", effect_family: "f", operation: "o" })).toBe(
          "t.two",
        );
      });
      it("composes effect_family.operation", async () => {
        expect(await typed({ effect_family: "board", operation: "accept" })).toBe("board.accept");
      });
      it("falls back to operation alone", async () => {
        expect(await typed({ operation: "route" })).toBe("route");
      });
      it("defaults to data.event", async () => {
        expect(await typed({ payload: 1 })).toBe("data.event");
      });
      it("skips invalid candidates instead of failing", async () => {
        expect(
          await typed({
            type: "has/slash",
            event_type: " padded",
            effect_family: "f",
            operation: "o",
          }),
        ).toBe("f.o");
      });
      it("refuses a composed type over 128 bytes", async () => {
        const r = (await typed({
          effect_family: "f".repeat(100),
          operation: "o".repeat(100),
        })) as DataOperationResult;
        expect(stopCode(r)).toBe("needs_input");
      });
    });

    describe("input contract", () => {
      it("needs_version when expected_version is missing", async () => {
        const r = await op("append_event", { ...stream(), idempotency_key: "k", event: {} });
        expect(r).toMatchObject({
          status: "stopped",
          stop_conditions: [{ code: "needs_version" }],
        });
      });
      it("needs_source when data_source_ref is missing", async () => {
        const r = await op("read_projection", { resource: "r", aggregate_id: "a" });
        expect(stopCode(r)).toBe("needs_source");
      });
      it("needs_source when resource is missing", async () => {
        const r = await op("read_events", { data_source_ref: fresh(), aggregate_id: "a" });
        expect(stopCode(r)).toBe("needs_source");
      });
      it("refuses unknown fields such as store_id", async () => {
        const r = await op("read_projection", { ...stream(), store_id: "legacy" });
        expect(stopCode(r)).toBe("needs_input");
        expect(r.stop_conditions[0]?.message).toContain("store_id");
      });
      it("refuses a non-object event", async () => {
        expect(stopCode(await append(stream(), { event: [1, 2] }))).toBe("needs_input");
        expect(stopCode(await append(stream(), { event: "text" }))).toBe("needs_input");
      });
      it("refuses integers beyond 2^53 - 1 instead of rounding them", async () => {
        const r = await append(stream(), { event: { type: "a", n: 2 ** 53 } });
        expect(stopCode(r)).toBe("needs_input");
        expect(r.stop_conditions[0]?.message).toContain("event.n");
      });
      it("refuses an event over the per-event cap", async () => {
        const r = await append(stream(), {
          event: { type: "a", blob: "x".repeat(MAX_EVENT_BYTES) },
        });
        expect(stopCode(r)).toBe("needs_input");
      });
      it("checks every call's source and resource, right after accepting others", async () => {
        const s = stream();
        expect((await append(s, {})).status).toBe("committed");
        for (const bad of [` ${s.data_source_ref}`, `${s.data_source_ref}\u0001`, 7]) {
          const r = await append({ ...s, data_source_ref: bad as string }, {});
          expect(stopCode(r)).toBe("needs_input");
        }
        for (const bad of [`${s.resource} `, "a@b", ["board_events"]]) {
          const r = await append({ ...s, resource: bad as string }, {});
          expect(stopCode(r)).toBe("needs_input");
        }
        const again = await append(s, { expected_version: 1, idempotency_key: "k2" });
        expect(again.status).toBe("committed");
      });
      it("refuses resources with @ or /", async () => {
        expect(stopCode(await append({ ...stream(), resource: "a@b" }, {}))).toBe("needs_input");
        expect(stopCode(await append({ ...stream(), resource: "a/b" }, {}))).toBe("needs_input");
      });
      it("refuses expected_version at 2^53 - 1", async () => {
        expect(
          stopCode(await append(stream(), { expected_version: Number.MAX_SAFE_INTEGER })),
        ).toBe("needs_input");
      });
      it("refuses idempotency keys with control characters or outer whitespace", async () => {
        expect(stopCode(await append(stream(), { idempotency_key: "a\u0001b" }))).toBe(
          "needs_input",
        );
        expect(stopCode(await append(stream(), { idempotency_key: " k" }))).toBe("needs_input");
      });
      it("refuses malformed observed_at", async () => {
        expect(stopCode(await append(stream(), { observed_at: "2026-02-30T00:00:00Z" }))).toBe(
          "needs_input",
        );
        expect(stopCode(await append(stream(), { observed_at: "yesterday" }))).toBe("needs_input");
      });
      it("refuses read limits out of range instead of clamping", async () => {
        expect(stopCode(await op("read_events", { ...stream(), limit: 0 }))).toBe("too_broad");
        expect(stopCode(await op("read_events", { ...stream(), limit: 501 }))).toBe("too_broad");
        expect((await op("read_events", { ...stream(), limit: 500 })).status).toBe("read");
      });
      it("stop envelopes carry a digest of the stop and no data", async () => {
        const r = await op("read_events", { ...stream(), limit: 0 });
        expect(r.result_digest).toBe(hashCanonical(r.stop_conditions[0]));
        expect(r).toMatchObject({ events: [], rows: [], projection: null, idempotency_key: null });
      });
    });

    describe("read_events", () => {
      it("reads an empty stream as version 0", async () => {
        const r = await op("read_events", stream());
        expect(r).toMatchObject({
          status: "read",
          before_version: 0,
          after_version: 0,
          events: [],
          limit: 50,
          next_after_version: 0,
          has_more: false,
        });
        expect(r.projection_digest).toBe(EMPTY_PROJECTION_DIGEST);
      });
      it("returns the newest events ascending in tail mode, never has_more", async () => {
        const s = stream();
        await fill(s, 7);
        const r = await op("read_events", { ...s, limit: 3 });
        expect(r.events.map((e) => e.version)).toEqual([5, 6, 7]);
        expect(r).toMatchObject({ has_more: false, next_after_version: 7 });
      });
      it("pages forward with has_more until the end", async () => {
        const s = stream();
        await fill(s, 5);
        const first = await op("read_events", { ...s, after_version: 0, limit: 2 });
        expect(first.events.map((e) => e.version)).toEqual([1, 2]);
        expect(first).toMatchObject({ has_more: true, next_after_version: 2 });
        const third = await op("read_events", { ...s, after_version: 4, limit: 2 });
        expect(third.events.map((e) => e.version)).toEqual([5]);
        expect(third).toMatchObject({ has_more: false, next_after_version: 5 });
      });
      it("says has_more false on an exactly full last page", async () => {
        const s = stream();
        await fill(s, 4);
        expect((await op("read_events", { ...s, after_version: 2, limit: 2 })).has_more).toBe(
          false,
        );
      });
      it("returns an empty page at the head with next_after_version unchanged", async () => {
        const s = stream();
        await fill(s, 2);
        expect(await op("read_events", { ...s, after_version: 2 })).toMatchObject({
          events: [],
          next_after_version: 2,
          has_more: false,
        });
      });
      it("refuses after_version beyond the head", async () => {
        const s = stream();
        await fill(s, 1);
        const r = await op("read_events", { ...s, after_version: 3 });
        expect(r).toMatchObject({ status: "stopped", before_version: 1, after_version: 1 });
        expect(stopCode(r)).toBe("needs_input");
      });
      it("digests the page body and mirrors events into rows", async () => {
        const s = stream();
        await fill(s, 2);
        const r = await op("read_events", { ...s, after_version: 0, limit: 10 });
        expect(r.rows).toEqual(r.events);
        expect(r.result_digest).toBe(
          hashCanonical({ events: r.events, has_more: false, limit: 10, next_after_version: 2 }),
        );
        expect(r).toMatchObject({ idempotency_key: null, event_ref: null, event_digest: null });
      });
      it("returns records whose digest and type match their events", async () => {
        const s = stream();
        await fill(s, 3);
        for (const record of (await op("read_events", s)).events) {
          expect(record.event_digest).toBe(hashCanonical(record.event));
          expect(record.event_ref).toBe(`board_events:posting-123:${record.version}`);
          expect(record.idempotency_key).toBe(`k${record.version}`);
        }
      });
      it("pages a long stream of 2 KiB events with every version exactly once", async () => {
        const s = stream();
        await fill(s, 120, (i) => ({ type: "blob", i, pad: "p".repeat(2048) }));
        const seen: number[] = [];
        let after = 0;
        for (;;) {
          const page = await op("read_events", { ...s, after_version: after, limit: 50 });
          seen.push(...page.events.map((e) => e.version));
          after = page.next_after_version ?? after;
          if (page.has_more !== true) break;
        }
        expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      });
    });

    describe("read_projection", () => {
      it("reads a missing stream as version 0 with null last fields", async () => {
        const s = stream();
        const r = await op("read_projection", s);
        expect(r.projection).toEqual({
          aggregate_id: "posting-123",
          resource: "board_events",
          version: 0,
          event_count: 0,
          last_event_ref: null,
          last_event_type: null,
          last_event_digest: null,
        });
        expect(r.projection_digest).toBe(EMPTY_PROJECTION_DIGEST);
      });
      it("describes the latest event and matches the append's chain value", async () => {
        const s = stream();
        await fill(s, 1);
        const last = await append(s, {
          expected_version: 1,
          idempotency_key: "z",
          event: { type: "posting.claimed" },
        });
        const r = await op("read_projection", s);
        expect(r.projection).toMatchObject({
          version: 2,
          event_count: 2,
          last_event_ref: last.event_ref,
          last_event_type: "posting.claimed",
          last_event_digest: last.event_digest,
        });
        expect(r.projection_digest).toBe(last.projection_digest);
        expect(r.result_digest).toBe(hashCanonical(r.projection));
      });
      it("exposes no internal digest state in the projection", async () => {
        const s = stream();
        await fill(s, 2);
        const projection = (await op("read_projection", s)).projection ?? {};
        expect(Object.keys(projection)).not.toContain("projection_digest");
        expect(Object.keys(projection)).not.toContain("event_digests");
      });
      it("is a read with no effect fields", async () => {
        const r = await op("read_projection", stream());
        expect(r).toMatchObject({
          status: "read",
          idempotency_key: null,
          event_ref: null,
          event_digest: null,
          stop_conditions: [],
        });
      });
    });

    describe("list_stream_heads", () => {
      const heads = (source: string, fields: JsonRecord = {}) =>
        op("list_stream_heads", { data_source_ref: source, resource: "board_events", ...fields });
      const seed = async (source: string, items: [string, string, string][]) => {
        for (const [aggregate, type, at] of items) {
          const s = { data_source_ref: source, resource: "board_events", aggregate_id: aggregate };
          const p = await op("read_projection", s);
          const r = await append(s, {
            expected_version: p.after_version,
            idempotency_key: `${aggregate}:${type}:${at}`,
            event: { type, at },
            observed_at: at,
          });
          expect(r.status).toBe("committed");
        }
      };
      it("lists nothing for an empty resource", async () => {
        const r = await heads(fresh());
        expect(r).toMatchObject({
          status: "read",
          aggregate_id: "stream-heads",
          before_version: 0,
          after_version: 0,
          rows: [],
          projection: { limit: 50, count: 0, has_more: false, next_cursor: null },
        });
      });
      it("orders newest first with ties by aggregate ascending", async () => {
        const source = fresh();
        await seed(source, [
          ["b", "t", "2026-01-01T00:00:00Z"],
          ["a", "t", "2026-01-01T00:00:00Z"],
          ["c", "t", "2026-01-02T00:00:00Z"],
        ]);
        expect((await heads(source)).rows.map((r) => (r as HeadRecord).aggregate_id)).toEqual([
          "c",
          "a",
          "b",
        ]);
      });
      it("lists only the latest event of each stream", async () => {
        const source = fresh();
        await seed(source, [
          ["a", "first", "2026-01-01T00:00:00Z"],
          ["a", "second", "2026-01-03T00:00:00Z"],
        ]);
        const r = await heads(source);
        expect(r.rows).toHaveLength(1);
        expect(r.rows[0]).toMatchObject({ aggregate_id: "a", version: 2, event_type: "second" });
      });
      it("filters on the latest event type only", async () => {
        const source = fresh();
        await seed(source, [
          ["a", "open", "2026-01-01T00:00:00Z"],
          ["a", "closed", "2026-01-02T00:00:00Z"],
          ["b", "open", "2026-01-01T00:00:00Z"],
        ]);
        const r = await heads(source, { event_types: ["open"] });
        expect(r.rows.map((x) => (x as HeadRecord).aggregate_id)).toEqual(["b"]);
      });
      it("pages through every head exactly once with opaque cursors", async () => {
        const source = fresh();
        const items: [string, string, string][] = Array.from({ length: 7 }, (_, i) => [
          `agg-${i}`,
          "t",
          `2026-01-0${(i % 3) + 1}T00:00:00Z`,
        ]);
        await seed(source, items);
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: DataOperationResult = await heads(source, {
            limit: 3,
            ...(cursor !== null ? { cursor } : {}),
          });
          seen.push(...page.rows.map((r) => (r as HeadRecord).aggregate_id));
          cursor = (page.projection?.next_cursor as string | null) ?? null;
          expect(page.projection?.has_more).toBe(cursor !== null);
        } while (cursor !== null);
        expect([...seen].sort()).toEqual(items.map((i) => i[0]).sort());
        expect(new Set(seen).size).toBe(7);
      });
      it("keeps later pages stable when newer heads arrive", async () => {
        const source = fresh();
        await seed(source, [
          ["a", "t", "2026-01-03T00:00:00Z"],
          ["b", "t", "2026-01-02T00:00:00Z"],
          ["c", "t", "2026-01-01T00:00:00Z"],
        ]);
        const first = await heads(source, { limit: 1 });
        await seed(source, [["z", "t", "2026-02-01T00:00:00Z"]]);
        const second = await heads(source, {
          limit: 5,
          cursor: first.projection?.next_cursor ?? null,
        });
        expect(second.rows.map((r) => (r as HeadRecord).aggregate_id)).toEqual(["b", "c"]);
      });
      it("refuses a tampered cursor", async () => {
        const source = fresh();
        await seed(source, [
          ["a", "t", "2026-01-02T00:00:00Z"],
          ["b", "t", "2026-01-01T00:00:00Z"],
        ]);
        const cursor = (await heads(source, { limit: 1 })).projection?.next_cursor as string;
        const [payload = "", tag = ""] = cursor.split(".");
        const forged = Buffer.from(
          JSON.stringify({ a: "zzz", c: "2026-01-02T00:00:00.000Z", f: "x" }),
        ).toString("base64url");
        expect(stopCode(await heads(source, { cursor: `${forged}.${tag}` }))).toBe("needs_input");
        expect(stopCode(await heads(source, { cursor: `${payload}.${tag.slice(0, -2)}AA` }))).toBe(
          "needs_input",
        );
        expect(stopCode(await heads(source, { cursor: "not a cursor" }))).toBe("needs_input");
      });
      it("refuses a cursor issued for another filter or resource", async () => {
        const source = fresh();
        await seed(source, [
          ["a", "t", "2026-01-02T00:00:00Z"],
          ["b", "t", "2026-01-01T00:00:00Z"],
        ]);
        const cursor = (await heads(source, { limit: 1 })).projection?.next_cursor ?? null;
        expect(stopCode(await heads(source, { cursor, event_types: ["t"] }))).toBe("needs_input");
        expect(
          stopCode(
            await op("list_stream_heads", { data_source_ref: source, resource: "other", cursor }),
          ),
        ).toBe("needs_input");
      });
      it("refuses a cursor from another source", async () => {
        const a = fresh();
        const b = fresh();
        await seed(a, [
          ["a", "t", "2026-01-02T00:00:00Z"],
          ["b", "t", "2026-01-01T00:00:00Z"],
        ]);
        const cursor = (await heads(a, { limit: 1 })).projection?.next_cursor ?? null;
        expect(stopCode(await heads(b, { cursor }))).toBe("needs_input");
      });
      it("refuses limits above 100 and more than 20 event types", async () => {
        expect(stopCode(await heads(fresh(), { limit: 101 }))).toBe("too_broad");
        expect(
          stopCode(
            await heads(fresh(), { event_types: Array.from({ length: 21 }, (_, i) => `t${i}`) }),
          ),
        ).toBe("too_broad");
      });
      it("deduplicates repeated event types", async () => {
        const r = await heads(fresh(), { event_types: Array.from({ length: 25 }, () => "same") });
        expect(r.status).toBe("read");
      });
      it("refuses event type patterns", async () => {
        expect(stopCode(await heads(fresh(), { event_types: ["a/*"] }))).toBe("needs_input");
      });
      it("digests rows and page as documented", async () => {
        const source = fresh();
        await seed(source, [["a", "t", "2026-01-02T00:00:00Z"]]);
        const r = await heads(source);
        const rows = r.rows as HeadRecord[];
        expect(r.projection_digest).toBe(
          hashCanonical(rows.map((x) => [x.aggregate_id, x.version, x.event_digest])),
        );
        expect(r.result_digest).toBe(hashCanonical({ page: r.projection, rows }));
      });
      it("lists only the requested resource", async () => {
        const source = fresh();
        await seed(source, [["a", "t", "2026-01-02T00:00:00Z"]]);
        const r = await op("list_stream_heads", { data_source_ref: source, resource: "elsewhere" });
        expect(r.rows).toEqual([]);
      });
      it("finds sparse filtered heads across more than one scan batch", async () => {
        const source = fresh();
        const base = Date.parse("2026-03-01T00:00:00.000Z");
        const items: [string, string, string][] = Array.from({ length: 120 }, (_, i) => [
          `s-${String(i).padStart(3, "0")}`,
          [0, 60, 110].includes(i) ? "hit" : "miss",
          new Date(base - i * 1000).toISOString(),
        ]);
        await seed(source, items);
        const first = await heads(source, { event_types: ["hit"], limit: 2 });
        expect(first.rows.map((r) => (r as HeadRecord).aggregate_id)).toEqual(["s-000", "s-060"]);
        expect(first.projection?.has_more).toBe(true);
        const second = await heads(source, {
          event_types: ["hit"],
          limit: 2,
          cursor: first.projection?.next_cursor ?? null,
        });
        expect(second.rows.map((r) => (r as HeadRecord).aggregate_id)).toEqual(["s-110"]);
        expect(second.projection).toMatchObject({ has_more: false, next_cursor: null });
      });
      it("carries the full latest event body on each row", async () => {
        const source = fresh();
        await seed(source, [["a", "t", "2026-01-02T00:00:00Z"]]);
        expect((await heads(source)).rows[0]?.event).toEqual({
          type: "t",
          at: "2026-01-02T00:00:00Z",
        });
      });
    });

    describe("provider evidence", () => {
      it("names the adapter without secrets and digests the source ref", async () => {
        const r = await op("read_projection", {
          data_source_ref: "tenant://acme/board",
          resource: "r",
          aggregate_id: "a",
        });
        expect(r.provider_evidence).toMatchObject({
          provider: adapter.provider,
          adapter: adapter.adapter,
          storage_class: adapter.storageClass,
          resource: "r",
          aggregate_id: "a",
        });
        expect(r.provider_evidence.data_source_ref_digest).toBe(
          hashCanonical("tenant://acme/board"),
        );
        expect(r.provider).toBe(adapter.provider);
      });

      it("is the stream's own in every envelope, and no envelope can change another's", async () => {
        const s = stream();
        const first = await append(s, {});
        const replay = await append(s, {});
        const second = await append(s, {
          expected_version: 1,
          idempotency_key: "k2",
          event: { type: "b" },
        });
        const other = await append(stream(), {});
        expect(replay.provider_evidence).toMatchObject({ committed_version: 1 });
        expect(first.provider_evidence).not.toHaveProperty("committed_version");
        expect(second.provider_evidence).toEqual(first.provider_evidence);
        expect(other.provider_evidence.data_source_ref_digest).not.toBe(
          first.provider_evidence.data_source_ref_digest,
        );
        expect(first.provider_evidence.data_source_ref_digest).toBe(
          hashCanonical(s.data_source_ref),
        );
        // Changing one envelope's evidence (refused or not) leaves every other envelope's alone.
        try {
          (second.provider_evidence as Record<string, unknown>).resource = "changed";
        } catch {
          // frozen: refused
        }
        expect(first.provider_evidence.resource).toBe("board_events");
      });
    });

    describe("concurrency", () => {
      it("a key reused at the current version replays without moving the head", async () => {
        const s = stream();
        const first = await append(s, {});
        const again = await append(s, { expected_version: 1 });
        expect(again).toMatchObject({
          status: "idempotent_replay",
          before_version: 1,
          after_version: 1,
          event_ref: first.event_ref,
          projection_digest: first.projection_digest,
        });
        const next = await append(s, {
          expected_version: 1,
          idempotency_key: "k2",
          event: { type: "b" },
        });
        expect(next).toMatchObject({ status: "committed", after_version: 2 });
        expect(next.projection_digest).toBe(recomputeChain(await readAll(s)));
      });

      it("a connection whose last-seen head moved gets a conflict, then commits on the new head", async () => {
        const s = stream();
        const other = await store.open();
        try {
          await append(s, {});
          const moved = await op(
            "append_event",
            { ...s, expected_version: 1, idempotency_key: "k2", event: { type: "b" } },
            other,
          );
          expect(moved.status).toBe("committed");
          const stale = await append(s, {
            expected_version: 1,
            idempotency_key: "k3",
            event: { type: "c" },
          });
          expect(stale).toMatchObject({
            status: "conflict",
            before_version: 2,
            after_version: 2,
            projection_digest: moved.projection_digest,
          });
          const next = await append(s, {
            expected_version: 2,
            idempotency_key: "k3",
            event: { type: "c" },
          });
          expect(next).toMatchObject({ status: "committed", after_version: 3 });
          expect(next.projection_digest).toBe(recomputeChain(await readAll(s)));
        } finally {
          await other.close();
        }
      });

      it("lets exactly one of eight racing writers commit version 1", async () => {
        const s = stream();
        const writers = await Promise.all(Array.from({ length: 8 }, () => store.open()));
        try {
          const results = await Promise.all(
            writers.map((w, i) =>
              op(
                "append_event",
                { ...s, expected_version: 0, idempotency_key: `w${i}`, event: { type: "race", i } },
                w,
              ),
            ),
          );
          expect(results.filter((r) => r.status === "committed")).toHaveLength(1);
          expect(results.filter((r) => r.status === "conflict")).toHaveLength(7);
        } finally {
          await Promise.all(writers.map((w) => w.close()));
        }
      });
      it("appends from several connections stay dense and chained", async () => {
        const s = stream();
        const writers = await Promise.all(Array.from({ length: 4 }, () => store.open()));
        try {
          await Promise.all(
            writers.map(async (w, i) => {
              for (let n = 0; n < 10; n++) {
                for (;;) {
                  const head = await op("read_projection", s, w);
                  const r = await op(
                    "append_event",
                    {
                      ...s,
                      expected_version: head.after_version,
                      idempotency_key: `w${i}-${n}`,
                      event: { type: "x", i, n },
                    },
                    w,
                  );
                  if (r.status === "committed" || r.status === "idempotent_replay") break;
                  expect(r.status).toBe("conflict");
                }
              }
            }),
          );
          const all = await readAll(s);
          expect(all.map((e) => e.version)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
          expect(new Set(all.map((e) => e.idempotency_key)).size).toBe(40);
          expect((await op("read_projection", s)).projection_digest).toBe(recomputeChain(all));
        } finally {
          await Promise.all(writers.map((w) => w.close()));
        }
      });
    });
    describe("authority, redaction and declared resources", () => {
      const HUNTER = "hunter2-do-not-echo";
      const LIVE_KEY = "sk-live-4f9a1c-never-shown";
      /** Stores an event the way a writer predating the secret check did: straight to the adapter. */
      const storeRaw = async (s: Stream, version: number, key: string, event: JsonRecord) => {
        const eventJson = canonicalEvent(event);
        const streamKey = {
          source: s.data_source_ref,
          resource: s.resource,
          aggregateId: s.aggregate_id,
        };
        const committedAt = new Date((clock.ms += 1000));
        const record: EventRecord = {
          event_ref: eventRef(streamKey, version),
          version,
          event_type: deriveEventType(event),
          event,
          event_digest: sha256Prefixed(eventJson),
          idempotency_key: key,
          committed_at: committedAt.toISOString(),
        };
        const outcome = await adapter.append({
          stream: streamKey,
          expectedVersion: version - 1,
          idempotencyKey: key,
          eventJson,
          recordJson: canonicalRecord(record, eventJson),
          record,
          committedAtMs: committedAt.getTime(),
        });
        expect(outcome.kind).toBe("committed");
      };

      it("stops with needs_authority when the caller lacks the operation's scope, before storage", async () => {
        const s = stream();
        const readOnly = { scopes: [DATA_READ_SCOPE] };
        const refused = await op(
          "append_event",
          { ...s, expected_version: 0, idempotency_key: "k1", event: { type: "a" } },
          adapter,
          readOnly,
        );
        expect(refused).toMatchObject({
          status: "stopped",
          before_version: 0,
          after_version: 0,
          idempotency_key: null,
          event_ref: null,
          stop_conditions: [
            {
              code: "needs_authority",
              message:
                "data.append_event requires scope runx:data:append, which the caller was not granted",
            },
          ],
        });
        // Nothing was written: the granted read sees an empty stream.
        expect((await op("read_projection", s, adapter, readOnly)).after_version).toBe(0);
        const appendOnly = { scopes: [DATA_APPEND_SCOPE] };
        for (const [operation, input] of [
          ["read_events", s],
          ["read_projection", s],
          ["list_stream_heads", { data_source_ref: s.data_source_ref, resource: s.resource }],
        ] as const) {
          const r = await op(operation, input, adapter, appendOnly);
          expect(r.status).toBe("stopped");
          expect(r.stop_conditions).toEqual([
            {
              code: "needs_authority",
              message: `data.${operation} requires scope runx:data:read, which the caller was not granted`,
            },
          ]);
        }
        // Authority is checked before input: an unauthorised caller learns nothing about it.
        const bad = await op("read_events", { ...s, limit: 0 }, adapter, { scopes: [] });
        expect(stopCode(bad)).toBe("needs_authority");
        const granted = await op(
          "append_event",
          { ...s, expected_version: 0, idempotency_key: "k1", event: { type: "a" } },
          adapter,
          appendOnly,
        );
        expect(granted.status).toBe("committed");
      });

      it("stops an append carrying secret-like fields with redaction_required and never echoes them", async () => {
        const s = stream();
        const r = await append(s, {
          event: {
            type: "account.linked",
            payload: { password: HUNTER, keys: [{ label: "ci", api_key: LIVE_KEY }] },
            Client_Secret: { nested: HUNTER },
          },
        });
        expect(r).toMatchObject({
          status: "stopped",
          before_version: 0,
          after_version: 0,
          event_digest: null,
          redactions: [
            { path: "event.Client_Secret", reason: "secret_field" },
            { path: "event.payload.keys[0].api_key", reason: "secret_field" },
            { path: "event.payload.password", reason: "secret_field" },
          ],
        });
        expect(r.stop_conditions).toHaveLength(1);
        expect(r.stop_conditions[0]?.code).toBe("redaction_required");
        expect(r.stop_conditions[0]?.message).toContain("event.payload.password");
        const text = JSON.stringify(r);
        expect(text).not.toContain(HUNTER);
        expect(text).not.toContain(LIVE_KEY);
        // Not stored, so the same key is free for a clean event.
        expect((await op("read_projection", s)).after_version).toBe(0);
        expect((await append(s, { event: { type: "account.linked" } })).status).toBe("committed");
      });

      it("withholds stored secret-like fields on read with redaction_required and lists where they are", async () => {
        const s = stream();
        await storeRaw(s, 1, "legacy-1", { type: "account.linked", auth: { token: LIVE_KEY } });
        await storeRaw(s, 2, "legacy-2", { type: "account.renamed", name: "ci" });
        const head = await op("read_projection", s);
        expect(head).toMatchObject({ status: "read", after_version: 2 });
        expect(JSON.stringify(head)).not.toContain(LIVE_KEY);

        const tail = await op("read_events", s);
        expect(tail).toMatchObject({
          status: "stopped",
          before_version: 2,
          after_version: 2,
          projection_digest: head.projection_digest,
          events: [],
          rows: [],
          redactions: [
            {
              event_ref: "board_events:posting-123:1",
              path: "event.auth.token",
              reason: "secret_field",
            },
          ],
        });
        expect(stopCode(tail)).toBe("redaction_required");
        expect(JSON.stringify(tail)).not.toContain(LIVE_KEY);

        // A page without the secret-bearing event reads normally.
        const later = await op("read_events", { ...s, after_version: 1 });
        expect(later.status).toBe("read");
        expect(later.events.map((e) => e.version)).toEqual([2]);

        const other = { ...s, aggregate_id: "posting-456" };
        await storeRaw(other, 1, "legacy-1", { type: "x", password: HUNTER });
        const heads = await op("list_stream_heads", {
          data_source_ref: s.data_source_ref,
          resource: s.resource,
        });
        expect(heads).toMatchObject({
          status: "stopped",
          rows: [],
          redactions: [
            {
              event_ref: "board_events:posting-456:1",
              path: "event.password",
              reason: "secret_field",
            },
          ],
        });
        expect(stopCode(heads)).toBe("redaction_required");
        expect(JSON.stringify(heads)).not.toContain(HUNTER);
      });

      it("stops an operation on a resource the binding does not declare with needs_source", async () => {
        const s = stream();
        const declared = { resources: ["board_events", "board_projections"] };
        const ok = await append(s, {});
        expect(ok.status).toBe("committed");
        const undeclared = { ...s, resource: "payroll_events" };
        for (const [operation, input] of [
          [
            "append_event",
            { ...undeclared, expected_version: 0, idempotency_key: "k", event: { type: "a" } },
          ],
          ["read_events", undeclared],
          ["read_projection", undeclared],
          ["list_stream_heads", { data_source_ref: s.data_source_ref, resource: "payroll_events" }],
        ] as const) {
          const r = await op(operation, input, adapter, declared);
          expect(r).toMatchObject({ status: "stopped", resource: "payroll_events" });
          expect(r.stop_conditions).toEqual([
            {
              code: "needs_source",
              message: `resource payroll_events is not declared by the binding of data source ${s.data_source_ref} (declared: board_events, board_projections)`,
            },
          ]);
        }
        // Nothing was written to the undeclared resource.
        expect((await op("read_projection", undeclared)).after_version).toBe(0);
        const read = await op("read_events", s, adapter, declared);
        expect(read.status).toBe("read");
        expect(read.events).toHaveLength(1);
      });
    });
  });
}
