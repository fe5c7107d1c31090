/**
 * Test kit of the PostgreSQL state store: a scratch database per suite (dropped afterwards,
 * data/test-services.ts), the store opened over it, and queued runs to claim.
 */
import { randomBytes } from "node:crypto";
import { PG_USER, scratchPostgres } from "../../data/test-services.js";
import type { Queryable } from "./connect.js";
import { openPgState } from "./connect.js";
import type { PgState } from "./connect.js";

/** A migrated scratch database; `drop` closes every pool opened here and drops it. */
export interface ScratchPgState {
  url: string;
  /** Another pool over the same database (another "instance"). */
  open(max?: number): Promise<PgState>;
  drop(): Promise<void>;
}

export async function scratchPgState(): Promise<ScratchPgState> {
  const db = await scratchPostgres();
  const url = new URL(db.endpoint);
  url.username = PG_USER;
  const opened: PgState[] = [];
  return {
    url: url.toString(),
    async open(max = 4) {
      const state = await openPgState({ url: url.toString(), max });
      opened.push(state);
      return state;
    },
    async drop() {
      await Promise.all(opened.map((s) => s.close()));
      await db.drop();
    },
  };
}

/** Inserts `count` queued runs (ids `run_<tag>_<n>`, oldest first); returns their ids. */
export async function insertQueuedRuns(db: Queryable, count: number): Promise<string[]> {
  const tag = randomBytes(3).toString("hex");
  const ids = Array.from({ length: count }, (_, i) => `run_${tag}_${String(i).padStart(4, "0")}`);
  const now = new Date().toISOString();
  await db.query(
    `INSERT INTO runs (id, skill_name, runner, skill_ref, package_dir, package_digest, status,
       inputs_digest, created_at, updated_at, created_ms, job_state, queued_at)
     SELECT id, 'echo', 'cli-tool', 'skills/echo', 'skills/echo', 'sha256:00', 'running',
       'sha256:00', $2, $2, $3, 'queued', clock_timestamp() + (ord * interval '1 microsecond')
       FROM unnest($1::text[]) WITH ORDINALITY AS t(id, ord)`,
    [ids, now, Date.now()],
  );
  return ids;
}

/** Polls async `check` until it returns a value or the deadline passes (no fixed sleeps). */
export async function pollFor<T>(
  check: () => Promise<T | undefined>,
  { timeoutMs = 10_000, intervalMs = 10, what = "condition" } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
