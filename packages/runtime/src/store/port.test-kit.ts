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
export type PortSubjectFactory = () => Promise<{
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
