import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RuntimeError } from "../../errors.js";
import { LEDGER_GENESIS_HASH } from "../types.js";
import type { PgState } from "./connect.js";
import {
  claimNext,
  fencedWrite,
  heartbeat,
  isLeaseLost,
  release,
  requestCancel,
  requeueParked,
} from "./lease.js";
import type { Lease } from "./lease.js";
import { appendFencedLedgerEntry, ledgerTail, readLedger } from "./ledger.js";
import { insertQueuedRuns, pollFor, scratchPgState } from "./test-kit.js";
import type { ScratchPgState } from "./test-kit.js";

let scratch: ScratchPgState;
let a: PgState;
let b: PgState;

beforeAll(async () => {
  scratch = await scratchPgState();
  a = await scratch.open();
  b = await scratch.open();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

async function refusal(promise: Promise<unknown>): Promise<RuntimeError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof RuntimeError) return err;
    throw err;
  }
  throw new Error("expected a RuntimeError");
}

/** Appends one ledger line for `lease`'s run under its fence, chained to the current tail. */
async function appendUnder(state: PgState, lease: Lease, entry: unknown) {
  return fencedWrite(state.pool, lease, async (tx) => {
    const tail = await ledgerTail(tx.client, lease.runId);
    const previousHash = tail?.entryHash ?? LEDGER_GENESIS_HASH;
    const entryHash = `sha256:${createHash("sha256")
      .update(JSON.stringify([previousHash, entry]))
      .digest("hex")}`;
    return appendFencedLedgerEntry(
      tx,
      { kind: "checkpoint", status: "running", entry, previousHash, entryHash },
      new Date().toISOString(),
    );
  });
}

/** Claims `runId` from `state` once its current lease has expired. */
async function claimWhenExpired(state: PgState, owner: string, ttlMs: number): Promise<Lease> {
  return pollFor(() => claimNext(state.pool, { owner, ttlMs }), { what: `${owner}'s claim` });
}

/** Leaves no claimable run behind for the next test. */
async function drain(): Promise<void> {
  await a.pool.query(
    "UPDATE runs SET job_state = 'done', lease_owner = NULL, lease_expires_at = NULL",
  );
}

describe("leased execution over PostgreSQL", () => {
  it("claims every queued run exactly once across many concurrent claimers on several instances", async () => {
    const instances = [a, b, await scratch.open(), await scratch.open()];
    const ids = await insertQueuedRuns(a.pool, 120);
    const claimed: Lease[] = [];
    const claimers = instances.flatMap((state, i) =>
      Array.from({ length: 4 }, async (_, j) => {
        for (;;) {
          const lease = await claimNext(state.pool, { owner: `i${i}-c${j}`, ttlMs: 30_000 });
          if (lease === undefined) return;
          claimed.push(lease);
          await release(state.pool, lease, "done");
        }
      }),
    );
    await Promise.all(claimers);
    expect(claimed.map((l) => l.runId).sort()).toEqual(ids);
    expect(new Set(claimed.map((l) => l.owner)).size).toBeGreaterThan(1);
    expect(
      claimed.every((l) => l.fence === 1n && l.attempt === 1 && l.previousOwner === null),
    ).toBe(true);
    expect(await claimNext(a.pool, { owner: "late", ttlMs: 1000 })).toBeUndefined();
  });

  it("hands an expired lease to another instance with a higher fence and the next attempt", async () => {
    const [runId] = await insertQueuedRuns(a.pool, 1);
    const first = await claimNext(a.pool, { owner: "alpha", ttlMs: 1000 });
    expect(first?.runId).toBe(runId);
    // While the lease is live nobody else gets the run.
    expect(await claimNext(b.pool, { owner: "beta", ttlMs: 300 })).toBeUndefined();
    const second = await claimWhenExpired(b, "beta", 30_000);
    expect(second).toMatchObject({ runId, owner: "beta", attempt: 2, previousOwner: "alpha" });
    expect(second.fence).toBe((first as Lease).fence + 1n);
    expect(second.claimedAt.getTime()).toBeGreaterThanOrEqual((first as Lease).expiresAt.getTime());
    await drain();
  });

  it("refuses a stale holder's fenced write and heartbeat after a takeover, and writes nothing", async () => {
    await insertQueuedRuns(a.pool, 1);
    const stale = await claimNext(a.pool, { owner: "alpha", ttlMs: 1000 });
    if (stale === undefined) throw new Error("no claim");
    await appendUnder(a, stale, { step: 1 });
    const current = await claimWhenExpired(b, "beta", 30_000);
    await appendUnder(b, current, { step: 2 });

    const write = await refusal(appendUnder(a, stale, { step: "stale" }));
    expect(write.code).toBe("LEASE_LOST");
    expect(write.details).toMatchObject({ reason: "fenced", fence: "1", currentFence: "2" });
    const beat = await refusal(heartbeat(a.pool, stale, 30_000));
    expect(beat.code).toBe("LEASE_LOST");
    expect(beat.details.reason).toBe("fenced");

    const ledger = await readLedger(a.pool, stale.runId);
    expect(ledger.map((l) => [l.entry, l.fence])).toEqual([
      [{ step: 1 }, 1n],
      [{ step: 2 }, 2n],
    ]);
    // The current holder's lease is untouched by the refused calls.
    await expect(heartbeat(b.pool, current, 30_000)).resolves.toMatchObject({
      cancelRequested: false,
    });
    await drain();
  });

  it("refuses writes and heartbeats once the lease expired, even before anyone takes over", async () => {
    await insertQueuedRuns(a.pool, 1);
    const lease = await claimNext(a.pool, { owner: "alpha", ttlMs: 100 });
    if (lease === undefined) throw new Error("no claim");
    // Wait (by the database's clock) for the lease to lapse, without touching it.
    await pollFor(async () => {
      const r = await b.pool.query<{ lapsed: boolean }>(
        "SELECT lease_expires_at <= clock_timestamp() AS lapsed FROM runs WHERE id = $1",
        [lease.runId],
      );
      return r.rows[0]?.lapsed === true ? true : undefined;
    });
    const expired = await refusal(heartbeat(a.pool, lease, 100));
    expect(expired).toMatchObject({ code: "LEASE_LOST", details: { reason: "expired" } });
    expect((await refusal(appendUnder(a, lease, { late: true }))).details.reason).toBe("expired");
    expect(await readLedger(a.pool, lease.runId)).toEqual([]);
    await drain();
  });

  it("releases in the same transaction as the holder's decision: both commit or neither", async () => {
    const [runId] = await insertQueuedRuns(a.pool, 1);
    const lease = await claimNext(a.pool, { owner: "alpha", ttlMs: 30_000 });
    if (lease === undefined) throw new Error("no claim");
    const failed = release(a.pool, lease, "done", async (tx) => {
      await tx.client.query("UPDATE runs SET status = 'sealed' WHERE id = $1", [runId]);
      throw new Error("seal failed");
    });
    await expect(failed).rejects.toThrow("seal failed");
    const after = await a.pool.query(
      "SELECT status, job_state, lease_owner FROM runs WHERE id = $1",
      [runId],
    );
    expect(after.rows[0]).toEqual({ status: "running", job_state: "leased", lease_owner: "alpha" });

    await release(a.pool, lease, "parked", async (tx) => {
      await tx.client.query("UPDATE runs SET status = 'needs_approval' WHERE id = $1", [runId]);
    });
    expect(await claimNext(b.pool, { owner: "beta", ttlMs: 1000 })).toBeUndefined();
    expect((await refusal(heartbeat(a.pool, lease, 1000))).details.reason).toBe("released");
    expect(await requeueParked(b.pool, runId as string)).toBe(true);
    const resumed = await claimNext(b.pool, { owner: "beta", ttlMs: 30_000 });
    expect(resumed).toMatchObject({ runId, attempt: 2, previousOwner: null });
    await drain();
  });

  it("tells the holder at its next heartbeat that another instance asked to cancel", async () => {
    const [runId] = await insertQueuedRuns(a.pool, 1);
    const lease = await claimNext(a.pool, { owner: "alpha", ttlMs: 30_000 });
    if (lease === undefined) throw new Error("no claim");
    expect((await heartbeat(a.pool, lease, 30_000)).cancelRequested).toBe(false);
    expect(await requestCancel(b.pool, runId as string)).toBe(true);
    expect((await heartbeat(a.pool, lease, 30_000)).cancelRequested).toBe(true);
    await drain();
  });

  it("never lets two holders' lease intervals overlap while holders crash and hand over", async () => {
    const [runId] = await insertQueuedRuns(a.pool, 1);
    const rounds = 12;
    const held: { lease: Lease; end: Date; crashed: boolean }[] = [];
    const workers = [a, b, a, b].map(async (state, w) => {
      while (held.length < rounds) {
        const lease = await claimNext(state.pool, { owner: `w${w}`, ttlMs: 150 });
        if (lease === undefined) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        let end = lease.expiresAt;
        // Even rounds crash (stop heartbeating); odd ones hand over cleanly. A holder slowed
        // down past its lease by a loaded machine is a crash too: its calls are refused.
        let crashed = held.length % 2 === 0;
        try {
          for (let i = 0; i < held.length % 3; i++) {
            end = (await heartbeat(state.pool, lease, 150)).expiresAt;
            await appendUnder(state, lease, { owner: lease.owner, fence: Number(lease.fence) });
          }
          if (!crashed) {
            end = (await release(
              state.pool,
              lease,
              "queued",
              async (tx) =>
                (await tx.client.query<{ at: Date }>("SELECT clock_timestamp() AS at")).rows[0]?.at,
            )) as Date;
          }
        } catch (err) {
          if (!isLeaseLost(err)) throw err;
          crashed = true;
        }
        held.push({ lease, end, crashed });
      }
    });
    await Promise.all(workers);

    // Every claim is recorded (a worker finishes its round), so fences run 1..n without gaps.
    const ordered = held.sort((x, y) => Number(x.lease.fence - y.lease.fence));
    expect(ordered.map((h) => h.lease.fence)).toEqual(
      Array.from({ length: ordered.length }, (_, i) => BigInt(i + 1)),
    );
    for (let i = 1; i < ordered.length; i++) {
      const previous = ordered[i - 1] as (typeof ordered)[number];
      const next = ordered[i] as (typeof ordered)[number];
      expect(next.lease.claimedAt.getTime()).toBeGreaterThanOrEqual(previous.end.getTime());
      expect(next.lease.previousOwner !== null).toBe(previous.crashed);
    }
    // Every ledger line was written under the lease current at the time: fences never go back.
    const fences = (await readLedger(a.pool, runId as string)).map((l) => l.fence);
    expect(fences).toEqual([...fences].sort((x, y) => Number(x - y)));
    await drain();
  }, 60_000);
});
