import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RuntimeError } from "../../errors.js";
import type { PgState } from "./connect.js";
import type { BootstrapAdmin } from "./bootstrap.js";
import { bootstrapTokenHash, issueBootstrapToken, redeemBootstrapToken } from "./bootstrap.js";
import { pollFor, scratchPgState } from "./test-kit.js";
import type { ScratchPgState } from "./test-kit.js";

let scratch: ScratchPgState;
let instances: PgState[];

beforeAll(async () => {
  scratch = await scratchPgState();
  instances = await Promise.all([scratch.open(8), scratch.open(8), scratch.open(8)]);
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);
beforeEach(async () => {
  await instances[0]?.pool.query("DELETE FROM operators; DELETE FROM bootstrap_tokens");
});

function admin(n: number): BootstrapAdmin {
  return {
    id: `op_${String(n).padStart(16, "0")}`,
    username: `admin${n}`,
    passwordHash: "hash",
    passwordSalt: "salt",
    passwordParams: '{"N":16384,"r":8,"p":1,"keylen":64}',
    createdAt: "2026-05-18T00:00:00.000Z",
  };
}

/** Redeems concurrently, spreading the calls over the instances; returns each outcome. */
async function race(calls: { token: string; n: number }[]) {
  return Promise.all(
    calls.map(({ token, n }, i) =>
      redeemBootstrapToken((instances[i % instances.length] as PgState).pool, {
        token,
        admin: admin(n),
      }).then(
        (ok) => ({ ok: ok.operatorId }),
        (err: unknown) => {
          if (err instanceof RuntimeError) return { code: err.code };
          throw err;
        },
      ),
    ),
  );
}

async function admins(): Promise<string[]> {
  const r = await (instances[0] as PgState).pool.query<{ id: string }>(
    "SELECT id FROM operators WHERE role = 'admin'",
  );
  return r.rows.map((row) => row.id);
}

describe("bootstrap tokens in PostgreSQL", () => {
  it("keeps only the token's hash", async () => {
    const issued = await issueBootstrapToken((instances[0] as PgState).pool, { ttlMs: 60_000 });
    const rows = await (instances[1] as PgState).pool.query("SELECT * FROM bootstrap_tokens");
    expect(JSON.stringify(rows.rows)).not.toContain(issued.token);
    expect(rows.rows[0]).toMatchObject({ token_hash: bootstrapTokenHash(issued.token) });
  });

  it("lets exactly one of many concurrent redemptions of one token create the admin", async () => {
    const { token } = await issueBootstrapToken((instances[0] as PgState).pool, { ttlMs: 60_000 });
    const outcomes = await race(Array.from({ length: 12 }, (_, n) => ({ token, n })));
    const winners = outcomes.filter((o) => "ok" in o);
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((o) => "code" in o && o.code === "UNAUTHENTICATED")).toHaveLength(11);
    expect(await admins()).toEqual([(winners[0] as { ok: string }).ok]);
    // Spent: a later redemption is refused too.
    const again = await race([{ token, n: 99 }]);
    expect(again).toEqual([{ code: "UNAUTHENTICATED" }]);
  });

  it("creates exactly one first admin when different tokens are redeemed at once on several instances", async () => {
    const tokens = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        issueBootstrapToken((instances[i % 3] as PgState).pool, { ttlMs: 60_000 }),
      ),
    );
    const outcomes = await race(tokens.map((t, n) => ({ token: t.token, n })));
    expect(outcomes.filter((o) => "ok" in o)).toHaveLength(1);
    expect(outcomes.filter((o) => "code" in o && o.code === "OPERATOR_EXISTS")).toHaveLength(11);
    expect(await admins()).toHaveLength(1);
    // The losers' tokens were not spent (their transactions rolled back), but bootstrap is closed.
    const spent = await (instances[0] as PgState).pool.query(
      "SELECT count(*)::int AS n FROM bootstrap_tokens WHERE redeemed_at IS NOT NULL",
    );
    expect(spent.rows[0]).toEqual({ n: 1 });
    const late = issueBootstrapToken((instances[2] as PgState).pool, { ttlMs: 60_000 });
    await expect(late).rejects.toMatchObject({ code: "OPERATOR_EXISTS" });
  });

  it("refuses an expired or unknown token", async () => {
    const { token } = await issueBootstrapToken((instances[0] as PgState).pool, { ttlMs: 1000 });
    expect(await race([{ token: `${token}x`, n: 1 }])).toEqual([{ code: "UNAUTHENTICATED" }]);
    await pollFor(async () => {
      const r = await (instances[0] as PgState).pool.query<{ lapsed: boolean }>(
        "SELECT bool_and(expires_at <= clock_timestamp()) AS lapsed FROM bootstrap_tokens",
      );
      return r.rows[0]?.lapsed === true ? true : undefined;
    });
    expect(await race([{ token, n: 2 }])).toEqual([{ code: "UNAUTHENTICATED" }]);
    expect(await admins()).toEqual([]);
  });
});
