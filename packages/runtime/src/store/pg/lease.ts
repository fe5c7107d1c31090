/**
 * Leased execution of runs over PostgreSQL: a small job lease of our own (the reasons, and
 * why not a queue library, are in docs/decisions/0010-cluster-state-store.md).
 *
 * A run row is a job. `claimNext` takes the oldest claimable run (queued, or leased with an
 * expired lease) with `FOR UPDATE SKIP LOCKED`, so concurrent claimers never pick the same
 * row and never wait on each other; the claim raises the run's fence and attempt. The holder
 * keeps the lease alive with `heartbeat` and does every write through `fencedWrite`, whose
 * transaction first locks the run row and checks that the fence is still the one it claimed
 * and the lease has not expired; otherwise it refuses with LEASE_LOST and writes nothing.
 *
 * Why that is enough: a takeover is an UPDATE of the same row, so it cannot happen while a
 * fenced write holds the row lock, and it requires the lease to have expired by the
 * database's clock. Every write a holder makes therefore commits before any later holder's
 * claim, and after a takeover the old holder's fence no longer matches. Liveness is judged
 * with `clock_timestamp()` (the time of the check), not `now()` (the start of the
 * transaction, which may have waited for the lock).
 */
import type pg from "pg";
import { RuntimeError } from "../../errors.js";
import type { Queryable } from "./connect.js";
import { inTransaction } from "./connect.js";

/** What a claim hands its holder; every fenced call needs it. */
export interface Lease {
  readonly runId: string;
  /** The claiming instance (any stable string; `host:pid:random` in the API). */
  readonly owner: string;
  /** The fencing token: the run's fence as raised by this claim. */
  readonly fence: bigint;
  /** The attempt number this claim started (1 for the first). */
  readonly attempt: number;
  /** When the lease was claimed, by the database's clock. */
  readonly claimedAt: Date;
  /** When the lease lapses unless heartbeated, by the database's clock. */
  readonly expiresAt: Date;
  /** The owner of the expired lease this claim took over, or null for a queued run. */
  readonly previousOwner: string | null;
}

/** Options of `claimNext`. */
export interface ClaimOptions {
  owner: string;
  /** Lease length; a heartbeat extends the lease by this much again. */
  ttlMs: number;
}

/** Why a fenced call was refused. */
export type LeaseLossReason = "fenced" | "expired" | "released" | "run_missing";

/** A transaction in which the holder's lease was checked and the run row is locked. */
export interface FencedTx {
  readonly client: pg.PoolClient;
  readonly lease: Lease;
}

/** How a holder lets go: the job state the run is left in. */
export type ReleaseTo = "done" | "parked" | "queued";

function checkTtl(ttlMs: number): number {
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > 3_600_000) {
    throw new RuntimeError("USAGE", "lease ttlMs must be an integer from 1 to 3600000", {
      path: "ttlMs",
    });
  }
  return ttlMs;
}

/** The LEASE_LOST error of a refused fenced call. */
function leaseLost(lease: Lease, reason: LeaseLossReason, current?: bigint): RuntimeError {
  const words: Record<LeaseLossReason, string> = {
    fenced: "another instance has claimed it since",
    expired: "the lease expired",
    released: "the lease was released",
    run_missing: "the run no longer exists",
  };
  return new RuntimeError("LEASE_LOST", `lease on run ${lease.runId} lost: ${words[reason]}`, {
    runId: lease.runId,
    reason,
    fence: lease.fence.toString(),
    ...(current !== undefined ? { currentFence: current.toString() } : {}),
  });
}

/** True for the error a fenced call raises once its lease is gone. */
export function isLeaseLost(err: unknown): err is RuntimeError {
  return err instanceof RuntimeError && err.code === "LEASE_LOST";
}

interface ClaimRow {
  id: string;
  lease_owner: string;
  fence: string;
  attempt: number;
  claimed_at: Date;
  lease_expires_at: Date;
  previous_owner: string | null;
}

/**
 * Claims the oldest claimable run: a queued one, or one whose lease expired (a takeover,
 * resuming from the run's last ledger checkpoint). Undefined when there is none.
 */
export async function claimNext(db: Queryable, options: ClaimOptions): Promise<Lease | undefined> {
  const ttl = checkTtl(options.ttlMs);
  const result = await db.query<ClaimRow>(
    `UPDATE runs AS r
        SET job_state = 'leased', lease_owner = $1,
            lease_expires_at = clock_timestamp() + make_interval(secs => $2::double precision / 1000),
            fence = r.fence + 1, attempt = r.attempt + 1
       FROM (SELECT id, lease_owner AS previous_owner FROM runs
              WHERE job_state = 'queued'
                 OR (job_state = 'leased' AND lease_expires_at <= clock_timestamp())
              ORDER BY queued_at, id
              LIMIT 1
              FOR UPDATE SKIP LOCKED) AS c
      WHERE r.id = c.id
  RETURNING r.id, r.lease_owner, r.fence::text AS fence, r.attempt, clock_timestamp() AS claimed_at,
            r.lease_expires_at, c.previous_owner`,
    [options.owner, ttl],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  return {
    runId: row.id,
    owner: row.lease_owner,
    fence: BigInt(row.fence),
    attempt: row.attempt,
    claimedAt: row.claimed_at,
    expiresAt: row.lease_expires_at,
    previousOwner: row.previous_owner,
  };
}

interface LeaseStateRow {
  job_state: string;
  lease_owner: string | null;
  fence: string;
  live: boolean;
}

/** Why `row` does not (or no longer does) belong to `lease`, or undefined when it does. */
function lossReason(lease: Lease, row: LeaseStateRow | undefined): LeaseLossReason | undefined {
  if (row === undefined) return "run_missing";
  if (BigInt(row.fence) !== lease.fence) return "fenced";
  if (row.job_state !== "leased" || row.lease_owner !== lease.owner) return "released";
  if (!row.live) return "expired";
  return undefined;
}

const LEASE_STATE = `SELECT job_state, lease_owner, fence::text AS fence,
  coalesce(lease_expires_at > clock_timestamp(), false) AS live FROM runs WHERE id = $1`;

/** What a heartbeat learnt. */
export interface HeartbeatOutcome {
  expiresAt: Date;
  /** Someone asked (on any instance) to cancel the run: stop and seal it as cancelled. */
  cancelRequested: boolean;
}

/**
 * Extends the lease by `ttlMs` from now, only while the fence matches and the lease has not
 * expired; otherwise LEASE_LOST (the holder must stop: another instance may own the run).
 */
export async function heartbeat(
  db: Queryable,
  lease: Lease,
  ttlMs: number,
): Promise<HeartbeatOutcome> {
  const ttl = checkTtl(ttlMs);
  const result = await db.query<{ lease_expires_at: Date; cancel_requested: boolean }>(
    `UPDATE runs
        SET lease_expires_at = clock_timestamp() + make_interval(secs => $4::double precision / 1000)
      WHERE id = $1 AND fence = $2::bigint AND lease_owner = $3 AND job_state = 'leased'
        AND lease_expires_at > clock_timestamp()
  RETURNING lease_expires_at, cancel_requested_at IS NOT NULL AS cancel_requested`,
    [lease.runId, lease.fence.toString(), lease.owner, ttl],
  );
  const row = result.rows[0];
  if (row !== undefined) {
    return { expiresAt: row.lease_expires_at, cancelRequested: row.cancel_requested };
  }
  const state = (await db.query<LeaseStateRow>(LEASE_STATE, [lease.runId])).rows[0];
  throw leaseLost(lease, lossReason(lease, state) ?? "expired", fenceOf(state));
}

function fenceOf(row: LeaseStateRow | undefined): bigint | undefined {
  return row === undefined ? undefined : BigInt(row.fence);
}

/**
 * Runs `fn` in a transaction that first locks the run row and checks the lease; refuses
 * with LEASE_LOST (nothing written) when the fence moved or the lease expired. Every
 * checkpoint, ledger append and seal of a leased run goes through here.
 */
export async function fencedWrite<T>(
  pool: pg.Pool,
  lease: Lease,
  fn: (tx: FencedTx) => Promise<T>,
): Promise<T> {
  return inTransaction(pool, async (client) => {
    await lockLease(client, lease);
    return fn({ client, lease });
  });
}

async function lockLease(client: pg.PoolClient, lease: Lease): Promise<void> {
  const state = (await client.query<LeaseStateRow>(`${LEASE_STATE} FOR UPDATE`, [lease.runId]))
    .rows[0];
  const reason = lossReason(lease, state);
  if (reason !== undefined) throw leaseLost(lease, reason, fenceOf(state));
}

/**
 * Lets go of the lease in the same transaction as `fn` (the decision that ends or pauses
 * the holder's work, e.g. the seal), with the run row locked: either both commit or neither.
 * `queued` hands the run to the next claimer at once; `parked` waits for `requeueParked`.
 */
export async function release<T>(
  pool: pg.Pool,
  lease: Lease,
  to: ReleaseTo,
  fn?: (tx: FencedTx) => Promise<T>,
): Promise<T | undefined> {
  return fencedWrite(pool, lease, async (tx) => {
    const result = fn === undefined ? undefined : await fn(tx);
    await tx.client.query(
      `UPDATE runs SET job_state = $2, lease_owner = NULL, lease_expires_at = NULL,
              queued_at = CASE WHEN $2 = 'queued' THEN clock_timestamp() ELSE queued_at END
        WHERE id = $1`,
      [lease.runId, to],
    );
    return result;
  });
}

/** Makes a parked run claimable again (an approval decided, an agent answered). */
export async function requeueParked(db: Queryable, runId: string): Promise<boolean> {
  const result = await db.query(
    `UPDATE runs SET job_state = 'queued', queued_at = clock_timestamp()
      WHERE id = $1 AND job_state = 'parked'`,
    [runId],
  );
  return result.rowCount === 1;
}

/** Records a cancel request for the holder (any instance) to see at its next heartbeat. */
export async function requestCancel(db: Queryable, runId: string): Promise<boolean> {
  const result = await db.query(
    `UPDATE runs SET cancel_requested_at = coalesce(cancel_requested_at, clock_timestamp())
      WHERE id = $1 AND job_state <> 'done'`,
    [runId],
  );
  return result.rowCount === 1;
}
