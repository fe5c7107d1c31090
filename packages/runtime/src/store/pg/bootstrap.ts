/**
 * The first admin of a cluster. Any instance that starts while there is no operator issues a
 * bootstrap token and shows it once; only its sha256 is stored, with an expiry. Redeeming one
 * creates the first admin: under a transaction-scoped advisory lock (so redemptions of
 * different tokens, on any instances, run one at a time) the token is spent, the "no operator
 * yet" rule is checked and the admin inserted, all in one transaction. However many tokens are
 * redeemed at once, exactly one admin results; a failed redemption spends nothing.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import type pg from "pg";
import { RuntimeError } from "../../errors.js";
import type { Queryable } from "./connect.js";
import { inTransaction } from "./connect.js";
import type { operators } from "./schema.js";

/** A freshly issued token: `token` is shown once and never stored. */
export interface IssuedBootstrapToken {
  id: string;
  token: string;
  expiresAt: Date;
}

/** The admin a redemption creates (password already hashed by the operator services). */
export type BootstrapAdmin = Omit<typeof operators.$inferInsert, "role" | "disabled">;

const BOOTSTRAP_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('runx.bootstrap', 0))";

/** The stored form of a token (the same digest as API tokens). */
export function bootstrapTokenHash(token: string): string {
  return `sha256:${createHash("sha256").update(token, "utf8").digest("hex")}`;
}

/** Issues a token valid for `ttlMs`; refused (OPERATOR_EXISTS) once any operator exists. */
export async function issueBootstrapToken(
  db: Queryable,
  options: { ttlMs: number },
): Promise<IssuedBootstrapToken> {
  if (!Number.isInteger(options.ttlMs) || options.ttlMs < 1000) {
    throw new RuntimeError("USAGE", "bootstrap token ttlMs must be an integer of at least 1000", {
      path: "ttlMs",
    });
  }
  const token = randomBytes(24).toString("base64url");
  const id = `boot_${randomUUID()}`;
  const result = await db.query<{ expires_at: Date }>(
    `INSERT INTO bootstrap_tokens (id, token_hash, expires_at)
     SELECT $1, $2, clock_timestamp() + make_interval(secs => $3::double precision / 1000)
      WHERE NOT EXISTS (SELECT 1 FROM operators)
     RETURNING expires_at`,
    [id, bootstrapTokenHash(token), options.ttlMs],
  );
  const row = result.rows[0];
  if (row === undefined) throw operatorExists();
  return { id, token, expiresAt: row.expires_at };
}

function operatorExists(): RuntimeError {
  return new RuntimeError("OPERATOR_EXISTS", "an operator already exists; bootstrap is closed");
}

/**
 * Spends `token` and creates `admin` as the first admin. UNAUTHENTICATED when the token is
 * unknown, expired or spent; OPERATOR_EXISTS when some operator exists already (the token
 * stays unspent: the transaction rolls back).
 */
export async function redeemBootstrapToken(
  pool: pg.Pool,
  input: { token: string; admin: BootstrapAdmin },
): Promise<{ operatorId: string }> {
  return inTransaction(pool, async (tx) => {
    await tx.query(BOOTSTRAP_LOCK);
    const spent = await tx.query(
      `UPDATE bootstrap_tokens SET redeemed_at = clock_timestamp(), redeemed_by = $2
        WHERE token_hash = $1 AND redeemed_at IS NULL AND expires_at > clock_timestamp()`,
      [bootstrapTokenHash(input.token), input.admin.id],
    );
    if (spent.rowCount !== 1) {
      throw new RuntimeError("UNAUTHENTICATED", "the bootstrap token is invalid or already used");
    }
    const existing = await tx.query("SELECT 1 FROM operators LIMIT 1");
    if (existing.rowCount !== 0) throw operatorExists();
    const { admin } = input;
    await tx.query(
      `INSERT INTO operators (id, username, role, password_hash, password_salt, password_params,
         disabled, created_at)
       VALUES ($1, $2, 'admin', $3, $4, $5, false, $6)`,
      [
        admin.id,
        admin.username,
        admin.passwordHash,
        admin.passwordSalt,
        admin.passwordParams,
        admin.createdAt,
      ],
    );
    return { operatorId: admin.id };
  });
}
