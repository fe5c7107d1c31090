import { createHash } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { openStateStore } from "./open.js";
import { LEDGER_GENESIS_HASH } from "./state-store.js";
import type { LedgerAppend, StateStore } from "./state-store.js";
import { bundleStoreChild, runTogether } from "./test-support/child-process.js";
import type { BundledChild } from "./test-support/child-process.js";
import { sampleRun, tempDir } from "./test-support/fixtures.js";
import type { TempDir } from "./test-support/fixtures.js";

const RUN = "run_default_00000000000000c1";

let tmp: TempDir;
let store: StateStore;

beforeEach(() => {
  tmp = tempDir();
  store = openStateStore({ path: tmp.dbPath });
  store.createRun(sampleRun(RUN));
});
afterEach(() => {
  store.close();
  tmp.cleanup();
});

function hashOf(index: number, previousHash: string, entry: unknown): string {
  const payload = JSON.stringify({ index, previous_hash: previousHash, entry });
  return `sha256:${createHash("sha256").update(payload).digest("hex")}`;
}

/** The append a well-behaved writer makes after reading the tail. */
function next(target: StateStore, entry: unknown, runId = RUN): LedgerAppend {
  const tail = target.getLedgerTail(runId);
  const index = tail === undefined ? 0 : tail.idx + 1;
  const previousHash = tail?.entryHash ?? LEDGER_GENESIS_HASH;
  return {
    kind: "resolution_requested",
    status: "waiting",
    stepId: "triage",
    entry,
    previousHash,
    entryHash: hashOf(index, previousHash, entry),
  };
}

function refusal(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

describe("run ledger", () => {
  it("chains entries from the genesis hash and reads them back in order", () => {
    const first = store.appendLedgerEntry(RUN, next(store, { n: 0, detail: { step_ids: ["a"] } }));
    const second = store.appendLedgerEntry(RUN, next(store, { n: 1 }));
    expect(first).toMatchObject({ idx: 0, previousHash: LEDGER_GENESIS_HASH, stepId: "triage" });
    expect(second.idx).toBe(1);
    expect(second.previousHash).toBe(first.entryHash);
    const ledger = store.readLedger(RUN);
    expect(ledger).toEqual([first, second]);
    expect(ledger[0]?.entry).toEqual({ n: 0, detail: { step_ids: ["a"] } });
    expect(store.getLedgerTail(RUN)).toEqual(second);
  });

  it("refuses a first entry that does not point at the genesis hash", () => {
    const err = refusal(() =>
      store.appendLedgerEntry(RUN, {
        ...next(store, { n: 0 }),
        previousHash: `sha256:${"1".repeat(64)}`,
      }),
    );
    expect(err.code).toBe("STORE_ERROR");
    expect(err.details.reason).toBe("ledger_chain_mismatch");
    expect(store.readLedger(RUN)).toEqual([]);
  });

  it("refuses an append whose previous hash is not the tail", () => {
    const first = store.appendLedgerEntry(RUN, next(store, { n: 0 }));
    const stale: LedgerAppend = {
      ...next(store, { n: 1 }),
      previousHash: LEDGER_GENESIS_HASH,
    };
    expect(refusal(() => store.appendLedgerEntry(RUN, stale)).details.reason).toBe(
      "ledger_chain_mismatch",
    );
    expect(store.readLedger(RUN)).toEqual([first]);
  });

  it("refuses an append that names a different index than the one it lands at", () => {
    store.appendLedgerEntry(RUN, next(store, { n: 0 }));
    const err = refusal(() => store.appendLedgerEntry(RUN, { ...next(store, { n: 1 }), index: 5 }));
    expect(err.details.reason).toBe("ledger_chain_mismatch");
  });

  it("lets only one of two writers holding the same tail extend the chain", () => {
    const other = openStateStore({ path: tmp.dbPath });
    try {
      store.appendLedgerEntry(RUN, next(store, { n: 0 }));
      const mine = next(store, { writer: "a" });
      const theirs = next(other, { writer: "b" });
      store.appendLedgerEntry(RUN, mine);
      expect(refusal(() => other.appendLedgerEntry(RUN, theirs)).details.reason).toBe(
        "ledger_chain_mismatch",
      );
      other.appendLedgerEntry(RUN, next(other, { writer: "b" }));
      expect(other.readLedger(RUN).map((e) => e.idx)).toEqual([0, 1, 2]);
    } finally {
      other.close();
    }
  });

  it("keeps ledgers of different runs independent", () => {
    const otherRun = "run_default_00000000000000c2";
    store.createRun(sampleRun(otherRun));
    store.appendLedgerEntry(RUN, next(store, { n: 0 }));
    const first = store.appendLedgerEntry(otherRun, next(store, { n: 0 }, otherRun));
    expect(first.idx).toBe(0);
    expect(store.readLedger(otherRun)).toHaveLength(1);
  });

  it("raises RUN_NOT_FOUND when appending to an unknown run", () => {
    const err = refusal(() =>
      store.appendLedgerEntry("run_default_ffffffffffffffff", next(store, { n: 0 })),
    );
    expect(err.code).toBe("RUN_NOT_FOUND");
    expect(store.readLedger("run_default_ffffffffffffffff")).toEqual([]);
    expect(store.getLedgerTail("run_default_ffffffffffffffff")).toBeUndefined();
  });

  it("rejects an entry that cannot be serialized as USAGE", () => {
    expect(refusal(() => store.appendLedgerEntry(RUN, next(store, undefined))).code).toBe("USAGE");
  });
});

describe("run ledger across processes", () => {
  let child: BundledChild;
  beforeAll(() => {
    child = bundleStoreChild();
  });
  afterAll(() => child.dispose());

  it("never forks the chain when two processes append concurrently", async () => {
    const perWriter = 60;
    const results = await runTogether(child.file, [
      ["append", tmp.dbPath, RUN, String(perWriter)],
      ["append", tmp.dbPath, RUN, String(perWriter)],
    ]);
    for (const result of results) expect(result).toMatchObject({ ok: true, appended: perWriter });

    const ledger = store.readLedger(RUN);
    expect(ledger).toHaveLength(2 * perWriter);
    let previous = LEDGER_GENESIS_HASH;
    ledger.forEach((line, index) => {
      expect(line.idx).toBe(index);
      expect(line.previousHash).toBe(previous);
      expect(line.entryHash).toBe(hashOf(index, previous, line.entry));
      previous = line.entryHash;
    });
    const writers = new Set(ledger.map((line) => (line.entry as { writer: number }).writer));
    expect(writers.size).toBe(2);
  });
});
