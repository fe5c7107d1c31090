/**
 * The PostgreSQL adapter of the identity port (../identity-port.ts): operators, API tokens
 * and sessions shared by every instance, and the bootstrap tokens of ./bootstrap.ts.
 *
 * The "last enabled admin" rule reads other rows than the one it changes, which READ
 * COMMITTED row locks cannot protect (two admins disabling each other would both see the
 * other still enabled). Role and enablement changes therefore take one transaction-scoped
 * advisory lock, so they run one at a time across instances, as SQLite's write lock makes
 * them run one at a time across processes. Usernames order with `COLLATE "C"` (SQLite's
 * byte order).
 */
import { RuntimeError } from "../../errors.js";
import type {
  ApiTokenRecord,
  ConsoleSessionRecord,
  OperatorRecord,
  OperatorRole,
} from "../console-store.js";
import type { AsyncIdentityStore } from "../identity-port.js";
import type { PgState, Queryable } from "./connect.js";
import { inTransaction, sqlState, toPgStoreError } from "./connect.js";
import { issueBootstrapToken, redeemBootstrapToken } from "./bootstrap.js";

const OPERATOR_COLUMNS = `id, username, role, password_hash AS "passwordHash",
  password_salt AS "passwordSalt", password_params AS "passwordParams", disabled,
  created_at AS "createdAt"`;
const TOKEN_COLUMNS = `id, operator_id AS "operatorId", name, token_hash AS "tokenHash",
  created_at AS "createdAt", revoked_at AS "revokedAt"`;
const SESSION_COLUMNS = `id, operator_id AS "operatorId", created_at AS "createdAt",
  last_seen_at AS "lastSeenAt", expires_at AS "expiresAt", revoked_at AS "revokedAt"`;

const OPERATORS_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('runx.operators', 0))";

/** LAST_ADMIN when `row` is an enabled admin and no other enabled admin exists. */
async function refuseLastAdmin(
  tx: Queryable,
  row: OperatorRecord,
  action: "disable" | "demote",
): Promise<void> {
  if (row.role !== "admin" || row.disabled) return;
  const others = await tx.query(
    "SELECT 1 FROM operators WHERE role = 'admin' AND NOT disabled AND id <> $1 LIMIT 1",
    [row.id],
  );
  if (others.rowCount !== 0) return;
  throw new RuntimeError(
    "LAST_ADMIN",
    action === "disable"
      ? `${row.username} is the last enabled admin; add or enable another admin first`
      : `${row.username} is the last enabled admin and keeps the admin role; add or enable another admin first`,
    { username: row.username },
  );
}

/** The identity tables over an open PostgreSQL state (the caller closes the pool). */
export function pgIdentityStore(state: PgState): AsyncIdentityStore {
  const { pool, label } = state;
  const guard = async <T>(action: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw toPgStoreError(err, label, action);
    }
  };
  const one = async <T>(text: string, values: unknown[]): Promise<T | undefined> =>
    (await pool.query(text, values)).rows[0] as T | undefined;
  const all = async <T>(text: string, values: unknown[] = []): Promise<T[]> =>
    (await pool.query(text, values)).rows as T[];

  /** Locks the operator table's rules, reads the row and applies `change` in one transaction. */
  const changeOperator = (
    id: string,
    change: (tx: Queryable, row: OperatorRecord) => Promise<OperatorRecord | undefined>,
  ) =>
    guard("update operator", () =>
      inTransaction(pool, async (tx) => {
        await tx.query(OPERATORS_LOCK);
        const r = await tx.query(`SELECT ${OPERATOR_COLUMNS} FROM operators WHERE id = $1`, [id]);
        const row = r.rows[0] as OperatorRecord | undefined;
        return row === undefined ? undefined : change(tx, row);
      }),
    );

  return {
    label,
    countOperators: () =>
      guard("count operators", async () => {
        const r = await pool.query<{ n: string }>("SELECT count(*) AS n FROM operators");
        return Number(r.rows[0]?.n ?? 0);
      }),
    insertOperator: (row) =>
      guard("create operator", async () => {
        try {
          const created = await one<OperatorRecord>(
            `INSERT INTO operators (id, username, role, password_hash, password_salt,
               password_params, disabled, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${OPERATOR_COLUMNS}`,
            [
              row.id,
              row.username,
              row.role,
              row.passwordHash,
              row.passwordSalt,
              row.passwordParams,
              row.disabled,
              row.createdAt,
            ],
          );
          return created as OperatorRecord;
        } catch (err) {
          if (sqlState(err) !== "23505") throw err;
          throw new RuntimeError("OPERATOR_EXISTS", `operator ${row.username} already exists`, {
            label,
            reason: "operator_exists",
          });
        }
      }),
    findOperatorByName: (username) =>
      guard("read operator", () =>
        one<OperatorRecord>(`SELECT ${OPERATOR_COLUMNS} FROM operators WHERE username = $1`, [
          username,
        ]),
      ),
    getOperator: (id) =>
      guard("read operator", () =>
        one<OperatorRecord>(`SELECT ${OPERATOR_COLUMNS} FROM operators WHERE id = $1`, [id]),
      ),
    listOperators: () =>
      guard("list operators", () =>
        all<OperatorRecord>(
          `SELECT ${OPERATOR_COLUMNS} FROM operators ORDER BY username COLLATE "C"`,
        ),
      ),
    setOperatorDisabled: (id, disabled, at) =>
      changeOperator(id, async (tx, row) => {
        if (disabled) await refuseLastAdmin(tx, row, "disable");
        const r = await tx.query(
          `UPDATE operators SET disabled = $2 WHERE id = $1 RETURNING ${OPERATOR_COLUMNS}`,
          [id, disabled],
        );
        if (disabled) {
          await tx.query(
            "UPDATE console_sessions SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL",
            [id, at],
          );
          await tx.query(
            "UPDATE api_tokens SET revoked_at = $2 WHERE operator_id = $1 AND revoked_at IS NULL",
            [id, at],
          );
        }
        return r.rows[0] as OperatorRecord | undefined;
      }),
    setOperatorRole: (id, role: OperatorRole) =>
      changeOperator(id, async (tx, row) => {
        if (role !== "admin") await refuseLastAdmin(tx, row, "demote");
        const r = await tx.query(
          `UPDATE operators SET role = $2 WHERE id = $1 RETURNING ${OPERATOR_COLUMNS}`,
          [id, role],
        );
        return r.rows[0] as OperatorRecord | undefined;
      }),
    lastSignIns: () =>
      guard("read sessions", async () => {
        const rows = await all<{ operatorId: string; at: string }>(
          `SELECT operator_id AS "operatorId", max(created_at COLLATE "C") AS at
             FROM console_sessions GROUP BY operator_id`,
        );
        return new Map(rows.map((r) => [r.operatorId, r.at]));
      }),
    insertApiToken: (row) =>
      guard(
        "create api token",
        async () =>
          (await one<ApiTokenRecord>(
            `INSERT INTO api_tokens (id, operator_id, name, token_hash, created_at, revoked_at)
             VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${TOKEN_COLUMNS}`,
            [row.id, row.operatorId, row.name, row.tokenHash, row.createdAt, row.revokedAt],
          )) as ApiTokenRecord,
      ),
    findApiToken: (tokenHash) =>
      guard("read api token", () =>
        one<ApiTokenRecord>(
          `SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE token_hash = $1 AND revoked_at IS NULL`,
          [tokenHash],
        ),
      ),
    listApiTokens: (operatorId) =>
      guard("list api tokens", () =>
        all<ApiTokenRecord>(
          `SELECT ${TOKEN_COLUMNS} FROM api_tokens
            ${operatorId === undefined ? "" : "WHERE operator_id = $1"}
            ORDER BY created_at COLLATE "C", id COLLATE "C"`,
          operatorId === undefined ? [] : [operatorId],
        ),
      ),
    getApiToken: (id) =>
      guard("read api token", () =>
        one<ApiTokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = $1`, [id]),
      ),
    revokeApiToken: (id, at) =>
      guard("revoke api token", async () => {
        await pool.query(
          "UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
          [id, at],
        );
        return one<ApiTokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM api_tokens WHERE id = $1`, [id]);
      }),
    insertSession: (row) =>
      guard("create session", async () => {
        await pool.query('DELETE FROM console_sessions WHERE expires_at COLLATE "C" < $1', [
          row.createdAt,
        ]);
        return (await one<ConsoleSessionRecord>(
          `INSERT INTO console_sessions (id, operator_id, created_at, last_seen_at, expires_at,
             revoked_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${SESSION_COLUMNS}`,
          [row.id, row.operatorId, row.createdAt, row.lastSeenAt, row.expiresAt, row.revokedAt],
        )) as ConsoleSessionRecord;
      }),
    getSession: (id) =>
      guard("read session", () =>
        one<ConsoleSessionRecord>(`SELECT ${SESSION_COLUMNS} FROM console_sessions WHERE id = $1`, [
          id,
        ]),
      ),
    touchSession: (id, at) =>
      guard("touch session", async () => {
        await pool.query("UPDATE console_sessions SET last_seen_at = $2 WHERE id = $1", [id, at]);
      }),
    revokeSession: (id, at) =>
      guard("revoke session", async () => {
        await pool.query(
          "UPDATE console_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
          [id, at],
        );
      }),
    bootstrap: {
      issue: (ttlMs) =>
        guard("issue bootstrap token", async () => {
          const issued = await issueBootstrapToken(pool, { ttlMs });
          return { token: issued.token, expiresAt: issued.expiresAt };
        }),
      redeem: (token, admin) =>
        guard("redeem bootstrap token", async () => {
          await redeemBootstrapToken(pool, { token, admin });
        }),
    },
  };
}
