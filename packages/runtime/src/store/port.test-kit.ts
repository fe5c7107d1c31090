/**
 * The contract suite of the asynchronous state store port (./port.ts): every adapter (SQLite
 * today, PostgreSQL next) runs these same behaviours.
 */
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { AsyncStateOperations, AsyncStateStore } from "./port.js";
import { sampleRun } from "./test-support/fixtures.js";
import { LEDGER_GENESIS_HASH } from "./types.js";
import type { LedgerAppend } from "./types.js";

/** Opens a fresh, empty store; `destroy` removes whatever it left behind. */
export type PortSubjectFactory = (options?: { clock?: () => Date }) => Promise<{
  store: AsyncStateStore;
  /** Another store over the same database (another process or instance). */
  other?: () => Promise<AsyncStateStore>;
  destroy(): Promise<void>;
}>;

const RUN = "run_default_00000000000000a1";

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

/** The append a well-behaved writer makes after reading the tail. */
async function next(ops: AsyncStateOperations, entry: unknown): Promise<LedgerAppend> {
  const tail = await ops.getLedgerTail(RUN);
  const previousHash = tail?.entryHash ?? LEDGER_GENESIS_HASH;
  const entryHash = `sha256:${createHash("sha256")
    .update(JSON.stringify([previousHash, entry]))
    .digest("hex")}`;
  return { kind: "checkpoint", status: "running", entry, previousHash, entryHash };
}

/** Registers the contract suite for one adapter. */
export function asyncStateStoreContract(name: string, factory: PortSubjectFactory): void {
  describe(`async state store port: ${name}`, () => {
    let subject: Awaited<ReturnType<PortSubjectFactory>>;
    let store: AsyncStateStore;
    beforeEach(async () => {
      subject = await factory();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.destroy();
    });

    it("creates, reads and patches a run with the same records and errors as the synchronous store", async () => {
      const created = await store.createRun(sampleRun(RUN));
      expect(created).toMatchObject({ id: RUN, status: "running", outcome: "running" });
      expect(await store.getRun(RUN)).toEqual(created);
      const patched = await store.updateRun(RUN, { status: "sealed", disposition: "closed" });
      expect(patched.status).toBe("sealed");
      expect((await refusal(store.getRun("run_default_ffffffffffffffff"))).code).toBe(
        "RUN_NOT_FOUND",
      );
      const dup = await refusal(store.createRun(sampleRun(RUN)));
      expect([dup.code, dup.details.reason]).toEqual(["STORE_ERROR", "run_exists"]);
    });

    it("pages runs newest first with a keyset cursor and filters by status and skill", async () => {
      let ms = Date.UTC(2026, 0, 1);
      await subject.destroy(); // this test needs a store on its own clock
      subject = await factory({ clock: () => new Date(ms) });
      store = subject.store;
      const ids = Array.from({ length: 5 }, (_, i) => `run_default_00000000000000b${i}`);
      for (const [i, id] of ids.entries()) {
        ms += i === 3 ? 0 : 1000; // two runs share a created_ms: the id breaks the tie
        await store.createRun(sampleRun(id, { skillName: i % 2 === 0 ? "even" : "odd" }));
      }
      await store.updateRun(ids[4] as string, { status: "sealed" });
      const first = await store.listRuns({ limit: 2 });
      const second = await store.listRuns({ limit: 2, cursor: first.nextCursor });
      const third = await store.listRuns({ limit: 2, cursor: second.nextCursor });
      expect([...first.runs, ...second.runs, ...third.runs].map((r) => r.id)).toEqual(
        [...ids].reverse(),
      );
      expect(third.nextCursor).toBeNull();
      expect((await store.listRuns({ limit: 10, skillName: "odd" })).runs.map((r) => r.id)).toEqual(
        [ids[3], ids[1]],
      );
      expect((await store.listRuns({ limit: 10, status: "sealed" })).runs.map((r) => r.id)).toEqual(
        [ids[4]],
      );
      expect((await refusal(store.listRuns({ limit: 0 }))).code).toBe("USAGE");
      expect((await refusal(store.listRuns({ limit: 1, cursor: "garbage" }))).code).toBe("USAGE");
    });

    it("derives the outcome from status, disposition and pending requests", async () => {
      await store.createRun(sampleRun(RUN));
      const paused = await store.updateRun(RUN, {
        status: "needs_approval",
        requestsJson: JSON.stringify([{ kind: "approval" }]),
      });
      const sealed = await store.updateRun(RUN, { status: "sealed", disposition: "closed" });
      expect([paused.outcome, sealed.outcome]).not.toContain("running");
      expect(paused.outcome).not.toBe(sealed.outcome);
      expect((await store.getRun(RUN)).outcome).toBe(sealed.outcome);
    });

    it("upserts steps keeping unspecified fields and first-write order", async () => {
      await store.createRun(sampleRun(RUN));
      await store.upsertStep({ runId: RUN, stepId: "b", status: "running", startedAt: "t1" });
      await store.upsertStep({ runId: RUN, stepId: "a", status: "running" });
      const b = await store.upsertStep({
        runId: RUN,
        stepId: "b",
        status: "succeeded",
        attempt: 2,
      });
      expect(b).toMatchObject({ status: "succeeded", attempt: 2, startedAt: "t1" });
      expect((await store.listSteps(RUN)).map((s) => s.stepId)).toEqual(["b", "a"]);
      const missing = await refusal(
        store.upsertStep({ runId: "run_default_ffffffffffffffff", stepId: "a", status: "x" }),
      );
      expect(missing.code).toBe("RUN_NOT_FOUND");
    });

    it("indexes receipts idempotently, merging only the derived facts", async () => {
      const entry = {
        receiptId: `sha256:${"1".repeat(64)}`,
        skillName: "echo",
        disposition: "closed",
        createdAt: "2026-01-01T00:00:01.000Z",
        fileName: `sha256-${"1".repeat(64)}.json`,
      };
      await store.indexReceipt(entry);
      const merged = await store.indexReceipt({
        ...entry,
        runId: RUN,
        disposition: "failed",
        isChild: true,
      });
      expect(merged).toMatchObject({ runId: RUN, disposition: "closed", isChild: true });
      const again = await store.indexReceipt({ ...entry, runId: "run_other", isChild: false });
      expect(again).toMatchObject({ runId: RUN, isChild: true, harness: false });
      const top = { ...entry, receiptId: `sha256:${"2".repeat(64)}`, fileName: "f2" };
      await store.indexReceipt(top);
      expect((await store.listIndexedReceipts({ limit: 10 })).map((r) => r.receiptId)).toEqual([
        top.receiptId,
      ]);
      expect(
        (await store.listIndexedReceipts({ limit: 10, includeChildren: true })).map(
          (r) => r.receiptId,
        ),
      ).toEqual([top.receiptId, entry.receiptId]);
      const found = await store.findIndexedReceipts([entry.receiptId, `sha256:${"3".repeat(64)}`]);
      expect(found.map((r) => r.receiptId)).toEqual([entry.receiptId]);
      expect(await store.findIndexedReceipts([])).toEqual([]);
    });

    it("commits everything done through the transaction handle, or nothing when it throws", async () => {
      await store.createRun(sampleRun(RUN));
      await expect(
        store.transaction(async (tx) => {
          await tx.updateRun(RUN, { status: "failure" });
          await tx.appendLedgerEntry(RUN, await next(tx, { n: "rolled back" }));
          throw new Error("stage failed");
        }),
      ).rejects.toThrow("stage failed");
      expect((await store.getRun(RUN)).status).toBe("running");
      expect(await store.readLedger(RUN)).toEqual([]);

      const result = await store.transaction(async (tx) => {
        await tx.upsertStep({ runId: RUN, stepId: "a", status: "succeeded" });
        await tx.appendLedgerEntry(RUN, await next(tx, { n: 0 }));
        return (await tx.updateRun(RUN, { status: "sealed" })).status;
      });
      expect(result).toBe("sealed");
      expect((await store.listSteps(RUN)).map((s) => s.stepId)).toEqual(["a"]);
      expect((await store.readLedger(RUN)).map((l) => l.entry)).toEqual([{ n: 0 }]);
    });

    it("keeps concurrent transactions apart: each reads the tail it extends", async () => {
      await store.createRun(sampleRun(RUN));
      await Promise.all(
        Array.from({ length: 8 }, (_, n) =>
          store.transaction(async (tx) => {
            const append = await next(tx, { n });
            // Yield to the event loop between the read and the write: other requests run here.
            await new Promise((r) => setImmediate(r));
            return tx.appendLedgerEntry(RUN, append);
          }),
        ),
      );
      const ledger = await store.readLedger(RUN);
      expect(ledger.map((l) => l.idx)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(new Set(ledger.map((l) => (l.entry as { n: number }).n)).size).toBe(8);
    });

    it("does not let a read outside a transaction see its uncommitted writes", async () => {
      await store.createRun(sampleRun(RUN));
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const tx = store.transaction(async (t) => {
        await t.updateRun(RUN, { status: "failure" });
        entered();
        await gate;
        throw new Error("abandoned");
      });
      await inside;
      const read = store.getRun(RUN);
      release();
      await expect(tx).rejects.toThrow("abandoned");
      expect((await read).status).toBe("running");
    });

    it("refuses the store itself inside a transaction and the handle after it ended", async () => {
      await store.createRun(sampleRun(RUN));
      let leaked: AsyncStateOperations | undefined;
      const reentry = await refusal(
        store.transaction(async (tx) => {
          leaked = tx;
          return store.getRun(RUN);
        }),
      );
      expect(reentry.details.reason).toBe("transaction_reentry");
      const ended = await refusal((leaked as AsyncStateOperations).getRun(RUN));
      expect(ended.details.reason).toBe("transaction_ended");
      // The store is usable again afterwards.
      expect((await store.getRun(RUN)).id).toBe(RUN);
    });

    it("refuses a stale ledger append made from another connection", async () => {
      if (subject.other === undefined) return;
      const other = await subject.other();
      await store.createRun(sampleRun(RUN));
      const stale = await next(other, { n: "stale" });
      await store.appendLedgerEntry(RUN, await next(store, { n: 0 }));
      const err = await refusal(other.appendLedgerEntry(RUN, stale));
      expect(err.details.reason).toBe("ledger_chain_mismatch");
      await other.close();
    });
  });
}
