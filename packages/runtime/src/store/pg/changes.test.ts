import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PgState } from "./connect.js";
import { inTransaction } from "./connect.js";
import type { Change, ChangeListener } from "./changes.js";
import {
  LISTENER_APPLICATION,
  changesSince,
  openChangeListener,
  publishChange,
} from "./changes.js";
import { pollFor, scratchPgState } from "./test-kit.js";
import type { ScratchPgState } from "./test-kit.js";

let scratch: ScratchPgState;
let a: PgState;
let b: PgState;
let listener: ChangeListener;

beforeAll(async () => {
  scratch = await scratchPgState();
  a = await scratch.open(8);
  b = await scratch.open(8);
  listener = await openChangeListener(b.config);
}, 60_000);
afterAll(async () => {
  await listener.close();
  await scratch.drop();
}, 60_000);

/** The next `n` changes of a subscription (fails after a deadline instead of hanging). */
async function take(
  stream: AsyncGenerator<Change, void, undefined>,
  n: number,
  timeoutMs = 10_000,
): Promise<Change[]> {
  const got: Change[] = [];
  const deadline = setTimeout(() => void stream.return(undefined), timeoutMs);
  try {
    while (got.length < n) {
      const next = await stream.next();
      if (next.done === true) throw new Error(`stream ended after ${got.length} of ${n} changes`);
      got.push(next.value);
    }
  } finally {
    clearTimeout(deadline);
  }
  return got;
}

async function lastSeq(): Promise<number> {
  const all = await changesSince(a.pool, 0, 100_000);
  return all.at(-1)?.seq ?? 0;
}

describe("change feed over pg_notify", () => {
  it("delivers concurrent changes from two instances to another connection in order, without gaps", async () => {
    const from = await lastSeq();
    const controller = new AbortController();
    const stream = listener.subscribe(from, controller.signal);
    const first = take(stream, 40);
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        inTransaction(i % 2 === 0 ? a.pool : b.pool, (tx) =>
          publishChange(tx, { kind: "run", runId: `run_${i % 5}`, status: `s${i}` }),
        ),
      ),
    );
    const got = await first;
    controller.abort();
    expect(got.map((c) => c.seq)).toEqual(Array.from({ length: 40 }, (_, i) => from + i + 1));
    expect(new Set(got.map((c) => c.status)).size).toBe(40);
    expect(got.every((c) => c.kind === "run" && /^run_[0-4]$/.test(c.runId))).toBe(true);
  });

  it("replays everything after a last event id, then continues live", async () => {
    const base = await lastSeq();
    for (let i = 0; i < 5; i++) {
      await publishChange(a.pool, { kind: "run", runId: "run_replay", status: `r${i}` });
    }
    const controller = new AbortController();
    const stream = listener.subscribe(base + 2, controller.signal);
    const replayed = await take(stream, 3);
    expect(replayed.map((c) => [c.seq, c.status])).toEqual([
      [base + 3, "r2"],
      [base + 4, "r3"],
      [base + 5, "r4"],
    ]);
    const live = take(stream, 1);
    await publishChange(b.pool, { kind: "run", runId: "run_replay", status: "live" });
    expect(await live).toEqual([
      { seq: base + 6, kind: "run", runId: "run_replay", status: "live" },
    ]);
    controller.abort();
    expect((await stream.next()).done).toBe(true);
  });

  it("numbers changes in commit order: a later publisher waits for an open one, and a rollback leaves no gap", async () => {
    const base = await lastSeq();
    const controller = new AbortController();
    const stream = listener.subscribe(base, controller.signal);
    const seen = take(stream, 2);

    const holder = await a.pool.connect();
    try {
      await holder.query("BEGIN");
      await publishChange(holder, { kind: "run", runId: "run_rolled_back", status: "x" });
      await holder.query("ROLLBACK");
      await holder.query("BEGIN");
      const early = await publishChange(holder, {
        kind: "run",
        runId: "run_slow",
        status: "first",
      });
      expect(early.seq).toBe(base + 1);
      const later = inTransaction(b.pool, (tx) =>
        publishChange(tx, { kind: "run", runId: "run_fast", status: "second" }),
      );
      // The second publisher is blocked on the counter row until the first commits.
      await pollFor(async () => {
        const r = await a.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        return (r.rows[0]?.n ?? 0) > 0 ? true : undefined;
      });
      await holder.query("COMMIT");
      expect((await later).seq).toBe(base + 2);
    } finally {
      holder.release();
    }
    expect((await seen).map((c) => c.runId)).toEqual(["run_slow", "run_fast"]);
    controller.abort();
  });

  it("reconnects after its connection is terminated and catches up from the table without a gap", async () => {
    const states: string[] = [];
    const own = await openChangeListener(b.config, {
      backoffMs: 20,
      onConnection: (state) => states.push(state),
    });
    try {
      const base = await lastSeq();
      const controller = new AbortController();
      const stream = own.subscribe(base, controller.signal);
      const all = take(stream, 8);
      for (let i = 0; i < 3; i++) {
        await publishChange(a.pool, { kind: "run", runId: "run_cut", status: `before${i}` });
      }
      const pids = async () =>
        (
          await a.pool.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 ORDER BY pid",
            [LISTENER_APPLICATION],
          )
        ).rows.map((r) => r.pid);
      const before = await pids();
      await a.pool.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1",
        [LISTENER_APPLICATION],
      );
      await pollFor(() => Promise.resolve(states.includes("lost") ? true : undefined), {
        what: "the loss",
      });
      // Published while the listener is away: no notification reaches it.
      for (let i = 0; i < 5; i++) {
        await publishChange(a.pool, { kind: "run", runId: "run_cut", status: `during${i}` });
      }
      const got = await all;
      controller.abort();
      expect(got.map((c) => c.seq)).toEqual(Array.from({ length: 8 }, (_, i) => base + i + 1));
      expect(got.map((c) => c.status)).toEqual([
        "before0",
        "before1",
        "before2",
        ...Array.from({ length: 5 }, (_, i) => `during${i}`),
      ]);
      expect(states).toEqual(["lost", "restored"]);
      // Every listener (this one and the suite's) is back, on new backends.
      await pollFor(
        async () => {
          const after = await pids();
          return after.length === before.length && !after.some((p) => before.includes(p))
            ? true
            : undefined;
        },
        { what: "the listeners to reconnect" },
      );
      // And live again over the new connection.
      const live = own.subscribe(base + 8);
      const next = take(live, 1);
      await publishChange(b.pool, { kind: "run", runId: "run_cut", status: "live" });
      expect((await next)[0]).toMatchObject({ seq: base + 9, status: "live" });
      await live.return(undefined);
    } finally {
      await own.close();
    }
  });

  it("refuses a last event id that is not a non-negative integer", async () => {
    const stream = listener.subscribe(-1);
    await expect(stream.next()).rejects.toMatchObject({ code: "USAGE" });
  });
});
