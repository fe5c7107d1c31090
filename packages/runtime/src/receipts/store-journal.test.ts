import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildSkillReceipt } from "./build.js";
import type { Receipt } from "./model.js";
import { sealReceipt } from "./seal.js";
import { localDevelopmentSigner } from "./signer.js";
import { ReceiptStore } from "./store.js";
import type { JournalEntry } from "./store.js";
import { lineageChildren, STORE_JOURNAL_FILE } from "./store-journal.js";
import { localDevelopmentPolicy } from "./verifier.js";

const signer = localDevelopmentSigner();

function sealed(name: string, createdAt: string, children: Receipt[] = []): Receipt {
  return sealReceipt(
    buildSkillReceipt({
      name,
      step: "default",
      createdAt,
      disposition: "closed",
      reasonCode: "process_closed",
      children,
    }),
    signer,
  );
}

/** A timestamp from a small range, so that many receipts share one (ties order by id). */
function at(i: number): string {
  const second = (i * 7919) % 600;
  return `2026-05-18T00:${String(Math.floor(second / 60)).padStart(2, "0")}:${String(second % 60).padStart(2, "0")}Z`;
}

let dir: string;
let store: ReceiptStore;
let all: Receipt[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "runx-receipt-journal-"));
  store = new ReceiptStore({ dir, policy: localDevelopmentPolicy() });
  all = [];
  const batch: Receipt[] = [];
  for (let i = 0; i < 3000; i++) {
    // Every tenth receipt is a parent of the two before it; written out of time order.
    const r =
      i % 10 === 9
        ? sealed(`parent-${i}`, at(i), batch.slice(-2))
        : sealed(`skill-${i % 17}-${i}`, at(i));
    batch.push(r);
    all.push(r);
    if (batch.length === 500) await store.writeAll(batch.splice(0));
  }
  await store.writeAll(batch);
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** The reference: every receipt, filtered and ordered as a full scan does. */
function fullScan(includeChildren: boolean, accept: (id: string) => boolean): string[] {
  const listed = new Set(all.flatMap((r) => lineageChildren(r)));
  return all
    .filter((r) => includeChildren || !listed.has(r.id))
    .filter((r) => accept(r.id))
    .sort((a, b) =>
      a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1,
    )
    .map((r) => r.id);
}

async function pages(
  limit: number,
  includeChildren: boolean,
  accept: (id: string) => boolean,
): Promise<string[]> {
  const ids: string[] = [];
  let before: JournalEntry | undefined;
  for (;;) {
    const page = await store.newestFirst({
      limit,
      includeChildren,
      ...(before !== undefined ? { before } : {}),
      accept: (entries) => Promise.resolve(entries.map((e) => accept(e.receipt_id))),
    });
    ids.push(...page.map((e) => e.receipt_id));
    if (page.length < limit) return ids;
    before = page[page.length - 1];
  }
}

describe("receipt journal paging", () => {
  it("pages newest first exactly as a full scan orders and filters", async () => {
    const everything = () => true;
    const some = (id: string) => id.charCodeAt(10) % 3 !== 0;
    expect(await pages(20, false, everything)).toEqual(fullScan(false, everything));
    expect(await pages(137, true, everything)).toEqual(fullScan(true, everything));
    expect(await pages(50, false, some)).toEqual(fullScan(false, some));
    const first = await store.newestFirst({ limit: 20, includeChildren: false });
    expect(first.map((e) => e.receipt_id)).toEqual(fullScan(false, everything).slice(0, 20));
  }, 60_000);

  it("reads only the end of the journal for a short page", async () => {
    const journal = join(dir, STORE_JOURNAL_FILE);
    const before = readFileSync(journal, "utf8");
    // Damage the journal's first line: a page that needs only the end never reaches it.
    const damaged = `{"broken":${before.slice(before.indexOf("\n"))}`;
    writeFileSync(journal, damaged);
    try {
      // Newest receipts were written last only if time and write order agree; write two that do.
      const late = [
        sealed("late-a", "2027-01-01T00:00:00Z"),
        sealed("late-b", "2027-01-01T00:00:01Z"),
      ];
      await store.writeAll(late);
      all.push(...late);
      const page = await store.newestFirst({ limit: 2, includeChildren: false });
      expect(page.map((e) => e.receipt_id)).toEqual([late[1]?.id, late[0]?.id]);
      expect(readFileSync(journal, "utf8").startsWith('{"broken":')).toBe(true);
      // A page that reaches the damaged line rebuilds the journal from the files.
      const everything = () => true;
      expect(await pages(500, false, everything)).toEqual(fullScan(false, everything));
      expect(readFileSync(journal, "utf8").startsWith('{"broken":')).toBe(false);
    } finally {
      expect((await store.loadIndex()).entries).toHaveLength(all.length);
    }
  }, 60_000);
});

describe("receipt journal recovery", () => {
  it("rebuilds a deleted index equal to the one the writes made", async () => {
    const journal = join(dir, STORE_JOURNAL_FILE);
    const old = await store.loadIndex();
    rmSync(journal);
    const rebuilt = await store.loadIndex();
    expect(rebuilt.entries).toEqual(old.entries);
    expect(rebuilt.entries.map((e) => e.receipt_id)).toEqual(all.map((r) => r.id).sort());
    const progress: Array<[number, number]> = [];
    await store.rebuildIndex((done, total) => progress.push([done, total]));
    expect(progress).toHaveLength(all.length);
    expect(progress[progress.length - 1]).toEqual([all.length, all.length]);
    expect((await store.loadIndex()).entries).toEqual(old.entries);
  }, 60_000);

  it("survives a torn last line: readers ignore it and the next write rebuilds", async () => {
    const journal = join(dir, STORE_JOURNAL_FILE);
    const firstPage = await store.newestFirst({ limit: 20, includeChildren: false });
    appendFileSync(journal, '{"receipt_id":"sha256:00');
    expect(await store.newestFirst({ limit: 20, includeChildren: false })).toEqual(firstPage);
    expect((await store.loadIndex()).entries).toHaveLength(all.length);
    const next = sealed("after-the-crash", "2027-02-01T00:00:00Z");
    await store.write(next);
    all.push(next);
    const text = readFileSync(journal, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text).not.toContain('{"receipt_id":"sha256:00\n');
    expect((await store.loadIndex()).entries).toHaveLength(all.length);
    const page = await store.newestFirst({ limit: 1, includeChildren: false });
    expect(page.map((e) => e.receipt_id)).toEqual([next.id]);
  }, 60_000);

  it("reports a damaged line in the middle as a malformed index", async () => {
    const journal = join(dir, STORE_JOURNAL_FILE);
    const text = readFileSync(journal, "utf8");
    writeFileSync(journal, `${text}not json\n`);
    await expect(store.loadIndex()).rejects.toMatchObject({ code: "RECEIPT_INDEX_MALFORMED" });
    expect((await store.rebuildIndex()).entries).toHaveLength(all.length);
  }, 60_000);
});
