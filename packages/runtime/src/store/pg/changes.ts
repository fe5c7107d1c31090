/**
 * Live updates across instances: a change feed in the `changes` table plus `pg_notify`.
 *
 * `publishChange` runs in the writer's transaction and takes the next `seq` from the single
 * `change_counter` row. That row stays locked until the transaction ends, so sequence
 * numbers are gapless and commit in order: a reader that has seen `seq` n has seen every
 * change up to n, and "everything after my last event id" is one indexed range read. The
 * price is that publishers serialise from their publish to their commit, so a writer
 * publishes last, just before it commits. The notification (delivered at commit) carries
 * the change itself; listeners treat it as the fast path and the table as the truth: a gap
 * or a missed notification is filled by reading the table, so live delivery and replay from
 * a last event id are the same code.
 */
import pg from "pg";
import { RuntimeError } from "../../errors.js";
import type { Queryable } from "./connect.js";

/** The notification channel of the change feed. */
export const CHANGE_CHANNEL = "runx_changes";

/** One published change (`seq` is the event id a subscriber resumes after). */
export interface Change {
  seq: number;
  kind: string;
  runId: string;
  status: string;
}

/** Largest number of changes one replay read returns. */
const REPLAY_PAGE = 500;

/** Records a change and notifies listeners when the caller's transaction commits. */
export async function publishChange(db: Queryable, change: Omit<Change, "seq">): Promise<Change> {
  const counter = await db.query<{ seq: string }>(
    `INSERT INTO change_counter (id, seq) VALUES (1, 1)
     ON CONFLICT (id) DO UPDATE SET seq = change_counter.seq + 1
     RETURNING seq::text AS seq`,
  );
  const seq = Number((counter.rows[0] as { seq: string }).seq);
  await db.query("INSERT INTO changes (seq, kind, run_id, status) VALUES ($1, $2, $3, $4)", [
    seq,
    change.kind,
    change.runId,
    change.status,
  ]);
  const published: Change = { seq, ...change };
  await db.query("SELECT pg_notify($1, $2)", [
    CHANGE_CHANNEL,
    JSON.stringify({ seq, kind: change.kind, run_id: change.runId, status: change.status }),
  ]);
  return published;
}

/** Changes with `seq` greater than `afterSeq`, oldest first (at most `limit`). */
export async function changesSince(
  db: Queryable,
  afterSeq: number,
  limit = REPLAY_PAGE,
): Promise<Change[]> {
  const result = await db.query<{ seq: string; kind: string; run_id: string; status: string }>(
    "SELECT seq::text AS seq, kind, run_id, status FROM changes WHERE changes.seq > $1 ORDER BY changes.seq LIMIT $2",
    [afterSeq, limit],
  );
  return result.rows.map((r) => ({
    seq: Number(r.seq),
    kind: r.kind,
    runId: r.run_id,
    status: r.status,
  }));
}

function parsePayload(payload: string | undefined): Change | undefined {
  try {
    const v = JSON.parse(payload ?? "") as Record<string, unknown>;
    if (
      typeof v.seq === "number" &&
      typeof v.kind === "string" &&
      typeof v.run_id === "string" &&
      typeof v.status === "string"
    ) {
      return { seq: v.seq, kind: v.kind, runId: v.run_id, status: v.status };
    }
  } catch {
    // not ours: ignored (the table is the truth)
  }
  return undefined;
}

/** A listening connection; each subscription is an ordered, gapless stream of changes. */
export interface ChangeListener {
  /**
   * Every change after `afterSeq` (0 for all), in `seq` order without gaps, then live ones
   * as they commit; ends when `signal` aborts or the listener closes.
   */
  subscribe(afterSeq: number, signal?: AbortSignal): AsyncGenerator<Change, void, undefined>;
  close(): Promise<void>;
}

/** The `application_name` of a listener's connection (how an operator finds it in pg_stat_activity). */
export const LISTENER_APPLICATION = "runx-change-listener";

/** Options of `openChangeListener`. */
export interface ChangeListenerOptions {
  /** Told when the connection is lost and when it is back (for a log line). */
  onConnection?: (state: "lost" | "restored", error?: Error) => void;
  /** First reconnect delay in ms (doubled per failed attempt up to `maxBackoffMs`); default 100. */
  backoffMs?: number;
  /** Largest reconnect delay in ms; default 5000. */
  maxBackoffMs?: number;
}

/**
 * Opens a dedicated connection that LISTENs on the change channel. When that connection is
 * lost (a database restart, a terminated backend) it reconnects with exponential backoff and
 * LISTENs again before any subscriber reads on, so every subscriber catches up from the table
 * by `seq`: notifications sent while it was away are not needed, and nothing is lost.
 */
export async function openChangeListener(
  config: pg.ClientConfig,
  options: ChangeListenerOptions = {},
): Promise<ChangeListener> {
  let latest = 0;
  let closed = false;
  let ready = false;
  let client: pg.Client | undefined;
  const recent = new Map<number, Change>();
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const onNotification = (msg: pg.Notification) => {
    if (msg.channel !== CHANGE_CHANNEL) return;
    const change = parsePayload(msg.payload);
    if (change === undefined) return;
    latest = Math.max(latest, change.seq);
    recent.set(change.seq, change);
    // Keep a small window for the fast path; anything older is read from the table.
    if (recent.size > REPLAY_PAGE) recent.delete(recent.keys().next().value as number);
    wake();
  };
  const connect = async (): Promise<pg.Client> => {
    const next = new pg.Client({
      ...config,
      application_name: LISTENER_APPLICATION,
      keepAlive: true,
    });
    next.on("notification", onNotification);
    next.on("error", (err) => lost(next, err));
    next.on("end", () => lost(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch (err) {
      next.removeAllListeners();
      next.on("error", () => undefined);
      void next.end().catch(() => undefined);
      throw err;
    }
    return next;
  };
  const reconnect = async () => {
    let delay = options.backoffMs ?? 100;
    while (!closed) {
      await new Promise((r) => setTimeout(r, delay));
      if (closed) return;
      try {
        const next = await connect();
        if (closed) {
          void next.end().catch(() => undefined);
          return;
        }
        client = next;
        ready = true;
        options.onConnection?.("restored");
        wake();
        return;
      } catch {
        delay = Math.min(delay * 2, options.maxBackoffMs ?? 5000);
      }
    }
  };
  function lost(which: pg.Client, error?: Error) {
    if (closed || which !== client || !ready) return;
    ready = false;
    options.onConnection?.("lost", error);
    which.removeAllListeners("notification");
    void which.end().catch(() => undefined);
    void reconnect();
    wake();
  }
  client = await connect();
  ready = true;

  async function* subscribe(afterSeq: number, signal?: AbortSignal) {
    if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) {
      throw new RuntimeError("USAGE", "the last event id must be a non-negative integer", {
        path: "lastEventId",
      });
    }
    let last = afterSeq;
    // A function, not a property read: TypeScript would narrow `aborted` across the yields.
    const aborted = () => signal?.aborted === true;
    const onAbort = () => wake();
    signal?.addEventListener("abort", onAbort);
    try {
      while (!closed && !aborted()) {
        if (!ready) {
          // Away: wait for the reconnect, then read on from the table.
          await waitFor(() => ready || closed || aborted());
          continue;
        }
        const next = recent.get(last + 1);
        if (next !== undefined) {
          last = next.seq;
          yield next;
          continue;
        }
        const reader = client as pg.Client;
        let page: Change[];
        try {
          page = await changesSince(reader, last);
        } catch (err) {
          if (closed) return; // closing the listener ends its subscriptions
          lost(reader, err as Error);
          continue;
        }
        for (const change of page) {
          last = change.seq;
          yield change;
          if (aborted()) return;
        }
        if (page.length > 0 || latest > last) continue;
        await waitFor(() => latest > last || closed || aborted() || !ready);
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Waits until `until()` holds (re-checked after registering: a wake may have come between). */
  async function waitFor(until: () => boolean): Promise<void> {
    while (!until()) {
      await new Promise<void>((resolve) => {
        const done = () => {
          waiters.delete(done);
          resolve();
        };
        waiters.add(done);
        if (until()) done();
      });
    }
  }

  return {
    subscribe,
    async close() {
      if (closed) return;
      closed = true;
      wake();
      await client?.end().catch(() => undefined);
    },
  };
}
