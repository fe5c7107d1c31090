import { describe, expect, it } from "vitest";
import { canonicalJson, hashCanonical } from "../receipts/canonical.js";
import { decodeHeadsCursor, encodeHeadsCursor } from "./cursor.js";
import {
  DataStop,
  EMPTY_PROJECTION_DIGEST,
  assertPortableNumbers,
  canonicalEvent,
  chainDigest,
  chainDigestOfOwn,
  canonicalRecord,
  deriveEventType,
  isAggregateId,
  isIdempotencyKey,
  isSourceRef,
  normalizeTimestamp,
} from "./model.js";
import type { EventRecord } from "./model.js";
import { headMember } from "./redis.js";

describe("data store pure core", () => {
  it("matches the documented digest vectors", () => {
    expect(EMPTY_PROJECTION_DIGEST).toBe(
      "sha256:b4a3df3ffd6300954be3ce95ed8f9b3d1683f72e9f15b925a3d6b3b505c88b5a",
    );
    const ref = hashCanonical("tenant://acme/board");
    expect(ref.startsWith("sha256:e2646ee7")).toBe(true);
    expect(ref.endsWith("08441")).toBe(true);
    expect(headMember("2026-07-14T04:00:00.000Z", "item-a")).toBe("08638215998400000|item-a");
  });

  it("derives and writes each event type as itself, whatever type came before", () => {
    const types = ["a.b", 'q"uote', "a.b", "back\\slash", "t\u00e9", 'q"uote', "a.b"];
    for (const type of types) {
      const event = { type, n: 1 };
      expect(deriveEventType(event)).toBe(type);
      const record: EventRecord = {
        event_ref: "r:a:1",
        version: 1,
        event_type: deriveEventType(event),
        event,
        event_digest: hashCanonical(event),
        idempotency_key: "k",
        committed_at: "2026-07-14T04:00:00.000Z",
      };
      expect(canonicalRecord(record, canonicalEvent(event))).toBe(canonicalJson(record));
      // Invalid candidates after a valid one are still skipped.
      expect(deriveEventType({ type: ` ${type}`, operation: type })).toBe(type);
      expect(deriveEventType({ type: `${type}/x` })).toBe("data.event");
    }
  });

  it("builds a record's canonical JSON without re-canonicalising the event", () => {
    const event = { z: 1, "\u00e9": "x", a: [1.5, { b: null }], type: "t" };
    const record: EventRecord = {
      event_ref: "r:a:1",
      version: 1,
      event_type: "t",
      event,
      event_digest: hashCanonical(event),
      idempotency_key: "k \u{1F600} \u00e9",
      committed_at: "2026-07-14T04:00:00.000Z",
    };
    expect(canonicalRecord(record, canonicalEvent(event))).toBe(canonicalJson(record));
    // Every string plain, and each field a caller supplies in turn holding what JSON escapes
    // (committed_at, event_digest and event_ref are made by the core and escape nothing).
    const plain = { ...record, idempotency_key: "k-1" };
    expect(canonicalRecord(plain, canonicalEvent(event))).toBe(canonicalJson(plain));
    for (const field of ["event_type", "idempotency_key"] as const) {
      for (const text of ['a"b', "a\\b", "a\nb", "\u0001"]) {
        const escaped = { ...plain, [field]: text };
        expect(canonicalRecord(escaped, canonicalEvent(event))).toBe(canonicalJson(escaped));
      }
    }
    // A lone surrogate has no canonical form, in any field.
    expect(() => canonicalRecord({ ...plain, event_type: "\ud800" }, "{}")).toThrow(
      /unpaired surrogate/,
    );
  });

  it("chains with the canonical bytes of {event_digest, previous_projection_digest, version}", () => {
    const e = hashCanonical({ type: "a" });
    const viaObject = (previous: string, version: number, eventDigest: string) =>
      hashCanonical({ event_digest: eventDigest, previous_projection_digest: previous, version });
    expect(chainDigest(EMPTY_PROJECTION_DIGEST, 1, e)).toBe(
      viaObject(EMPTY_PROJECTION_DIGEST, 1, e),
    );
    expect(chainDigest(e, 9_007_199_254_740_991, e)).toBe(viaObject(e, 9_007_199_254_740_991, e));
    // Not a lowercase hex digest: written by the general canonical writer, same answer.
    expect(chainDigest('sha256:"\u00e9', 2, e.toUpperCase())).toBe(
      viaObject('sha256:"\u00e9', 2, e.toUpperCase()),
    );
  });

  it("chains this process's own digests to the same value without testing them", () => {
    let previous = EMPTY_PROJECTION_DIGEST;
    for (let version = 1; version <= 50; version++) {
      const e = hashCanonical({ type: "a", version });
      const next = chainDigestOfOwn(previous, version, e);
      expect(next).toBe(chainDigest(previous, version, e));
      previous = next;
    }
  });

  it("refuses integers beyond 2^53-1 anywhere in an event, naming where", () => {
    expect(() => assertPortableNumbers({ a: [1, { b: 2 ** 53 }] }, "event")).toThrow(
      "event.a[1].b: integer 9007199254740992 is beyond 2^53-1",
    );
    expect(() =>
      assertPortableNumbers({ a: [1.5, -(2 ** 53 - 1), "9007199254740993"] }, "event"),
    ).not.toThrow();
  });

  it("normalises RFC 3339 times and rejects impossible ones", () => {
    expect(normalizeTimestamp("2026-07-14T04:00:00Z")).toBe("2026-07-14T04:00:00.000Z");
    expect(normalizeTimestamp("2026-07-14t06:00:00.9999+02:00")).toBe("2026-07-14T04:00:00.999Z");
    for (const bad of [
      "2026-02-30T00:00:00Z",
      "2026-07-14 04:00:00Z",
      "26-07-14T04:00:00Z",
      "2026-07-14T24:00:00Z",
      "2026-07-14T04:00:00",
    ]) {
      expect(normalizeTimestamp(bad)).toBeUndefined();
    }
  });

  it("refuses tokens with white space at either end, of every kind trim() removes", () => {
    const spaces = [" ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u1680", "\u2000", "\u200a"];
    spaces.push("\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\ufeff");
    for (const space of spaces) {
      for (const token of [`${space}k`, `k${space}`, `${space}`, `${space}k${space}`]) {
        expect(isIdempotencyKey(token)).toBe(false);
        expect(isSourceRef(token)).toBe(false);
      }
      // Inside a token, white space other than controls is allowed.
      if (space.charCodeAt(0) >= 0x20) expect(isIdempotencyKey(`a${space}b`)).toBe(true);
    }
    // Ends that are not white space, ASCII or not.
    for (const token of ["k", "~", "!k!", "\u00e9", "\u65e5\u672c", "a\u{1F600}", "\u200b"]) {
      expect(isIdempotencyKey(token)).toBe(true);
    }
  });

  it("counts identifier limits in UTF-8 bytes, not characters", () => {
    // 256 bytes: ASCII (1 byte), é (2 bytes), U+20AC (3 bytes), an astral pair (4 bytes).
    for (const [unit, bytes] of [
      ["a", 1],
      ["\u00e9", 2],
      ["\u20ac", 3],
      ["\u{1F600}", 4],
    ] as const) {
      // As many whole characters as fit (256 or 512 bytes for 1-, 2- and 4-byte ones), then one more.
      expect(isIdempotencyKey(unit.repeat(Math.floor(256 / bytes)))).toBe(true);
      expect(isIdempotencyKey(unit.repeat(Math.floor(256 / bytes) + 1))).toBe(false);
      expect(isSourceRef(unit.repeat(Math.floor(512 / bytes)))).toBe(true);
      expect(isSourceRef(unit.repeat(Math.floor(512 / bytes) + 1))).toBe(false);
    }
    expect(isIdempotencyKey("\u20ac".repeat(85) + "a")).toBe(true); // 256 bytes
    expect(isIdempotencyKey("\u20ac".repeat(85) + "\u00e9")).toBe(false); // 257 bytes
    expect(isAggregateId("a".repeat(192))).toBe(true);
    expect(isAggregateId("a".repeat(193))).toBe(false);
  });

  it("refuses an event over the per-event cap by its UTF-8 size", () => {
    const stop = (event: Record<string, string>) => {
      try {
        canonicalEvent(event);
        return undefined;
      } catch (error) {
        return (error as DataStop).message;
      }
    };
    // {"a":"…"} is 8 bytes around the text.
    expect(stop({ a: "x".repeat(256 * 1024 - 8) })).toBeUndefined();
    expect(stop({ a: "x".repeat(256 * 1024 - 7) })).toMatch(/262145 bytes as canonical JSON/);
    expect(stop({ a: "\u00e9".repeat((256 * 1024 - 8) / 2) })).toBeUndefined();
    expect(stop({ a: "\u00e9".repeat((256 * 1024 - 8) / 2) + "x" })).toMatch(/262145 bytes/);
  });

  it("refuses lone surrogates in events", () => {
    expect(() => canonicalEvent({ type: "a", bad: "\ud800" })).toThrow(DataStop);
  });

  it("opens only cursors it sealed, for the same scope and secret", () => {
    const secret = new Uint8Array(32).fill(7);
    const scope = { resource: "r", eventTypes: ["a"] };
    const position = { committed_at: "2026-07-14T04:00:00.000Z", aggregate_id: "agg/1" };
    const cursor = encodeHeadsCursor(secret, scope, position);
    expect(decodeHeadsCursor(secret, scope, cursor)).toEqual(position);
    expect(() => decodeHeadsCursor(new Uint8Array(32).fill(8), scope, cursor)).toThrow(DataStop);
    expect(() => decodeHeadsCursor(secret, { ...scope, eventTypes: [] }, cursor)).toThrow(DataStop);
    expect(() => decodeHeadsCursor(secret, scope, `${cursor}x`)).toThrow(DataStop);
  });
});
