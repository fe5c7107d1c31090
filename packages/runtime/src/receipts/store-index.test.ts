import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  RECEIPT_STORE_INDEX_SCHEMA,
  byReceiptId,
  mergeIndexEntries,
  mergeIndexText,
} from "./store-index.js";
import type { ReceiptStoreIndex, ReceiptStoreIndexEntry } from "./store-index.js";

const hex = (seed: string) => createHash("sha256").update(seed).digest("hex");
const entry = (seed: string, createdAt = "2026-11-30T07:00:00Z"): ReceiptStoreIndexEntry => ({
  receipt_id: `sha256:${hex(seed)}`,
  file_name: `sha256-${hex(seed)}.json`,
  created_at: createdAt,
});
const indexOf = (entries: ReceiptStoreIndexEntry[]): ReceiptStoreIndex => ({
  schema: RECEIPT_STORE_INDEX_SCHEMA,
  generated_at: "1",
  entries: [...entries].sort(byReceiptId),
});

/** A small deterministic generator (xorshift32). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe("mergeIndexText", () => {
  it("gives exactly the text of the parsed merge, for any index size and additions", () => {
    const next = random(20261130);
    for (let round = 0; round < 300; round++) {
      const size = Math.floor(next() * 40);
      const entries = Array.from({ length: size }, (_, i) => entry(`${round}-${i}`));
      const index = indexOf(entries);
      const text = JSON.stringify(index);
      const additions = Array.from({ length: 1 + Math.floor(next() * 3) }, (_, i) => {
        const pick = next();
        const existing = entries[Math.floor(next() * entries.length)];
        if (existing !== undefined && pick < 0.25) return existing; // already there
        if (existing !== undefined && pick < 0.4) return { ...existing, created_at: "changed" };
        return entry(`${round}-new-${i}-${next()}`);
      });
      const parsed = mergeIndexEntries(JSON.parse(text) as ReceiptStoreIndex, additions);
      const spliced = mergeIndexText(text, additions, "42");
      expect(parsed).toBeDefined();
      if (parsed === undefined || spliced === undefined) throw new Error("no merge");
      expect(spliced.changed).toBe(parsed.changed);
      if (spliced.changed) {
        expect(spliced.text).toBe(
          JSON.stringify({ ...index, generated_at: "42", entries: parsed.entries }),
        );
      }
    }
  });

  it("merges into an empty index", () => {
    const text = JSON.stringify(indexOf([]));
    const merged = mergeIndexText(text, [entry("a"), entry("b")], "7");
    expect(merged?.changed && JSON.parse(merged.text)).toEqual({
      ...indexOf([entry("a"), entry("b")]),
      generated_at: "7",
    });
  });

  it("leaves an index it did not write, or one out of order, to the parsed merge", () => {
    const index = indexOf([entry("a"), entry("b"), entry("c")]);
    const addition = [entry("d")];
    expect(mergeIndexText(JSON.stringify(index, null, 2), addition, "1")).toBeUndefined();
    const reversed = { ...index, entries: [...index.entries].reverse() };
    expect(mergeIndexText(JSON.stringify(reversed), addition, "1")).toBeUndefined();
    const repeated = { ...index, entries: [entry("a"), entry("a")].sort(byReceiptId) };
    expect(mergeIndexText(JSON.stringify(repeated), addition, "1")).toBeUndefined();
    expect(mergeIndexText("[garbage", addition, "1")).toBeUndefined();
    const wrongFile = { ...entry("d"), file_name: `sha256-${hex("e")}.json` };
    expect(mergeIndexText(JSON.stringify(index), [wrongFile], "1")).toBeUndefined();
  });
});
