/**
 * Operator accounts, sign-in sessions and API tokens. Passwords are hashed with scrypt
 * (node:crypto) under a per-user random salt, and the cost parameters are stored beside the
 * hash. API tokens are random, shown once, and stored only as their sha256. A failed sign-in
 * never says whether the user exists. Sessions are rows of the state store, so they end on the
 * server (sign-out, disabling the operator), not only when a cookie expires.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { RuntimeError } from "../errors.js";
import type { ApiTokenRecord, OperatorRecord, OperatorRole } from "../store/console-store.js";
import type { AsyncIdentityStore } from "../store/identity-port.js";

/** What callers see of an operator (never the hash). */
export interface Operator {
  id: string;
  username: string;
  role: OperatorRole;
  disabled: boolean;
  createdAt: string;
}

/** An operator as the admin page lists them. */
export interface OperatorListing extends Operator {
  /**
   * When they last signed in, while that session is kept (sessions are pruned once expired):
   * null when unknown.
   */
  lastSignInAt: string | null;
}

/** scrypt cost of new hashes (16 MiB, ~50 ms); stored per user so it can be raised later. */
export const SCRYPT_PARAMS = { N: 16384, r: 8, p: 1, keylen: 64 } as const;

interface ScryptParams {
  N: number;
  r: number;
  p: number;
  keylen: number;
}

const ROLE_RANK: Record<OperatorRole, number> = { viewer: 0, approver: 1, admin: 2 };

/** True when `role` is at least `required`. */
export function roleAtLeast(role: OperatorRole, required: OperatorRole): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[required];
}

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize("NFC"),
      salt,
      params.keylen,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r },
      (err, key) => (err === null ? resolve(key) : reject(err)),
    );
  });
}

/** Hashes a password with a fresh salt; returns the columns to store. */
export async function hashPassword(
  password: string,
): Promise<Pick<OperatorRecord, "passwordHash" | "passwordSalt" | "passwordParams">> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT_PARAMS);
  return {
    passwordHash: key.toString("base64"),
    passwordSalt: salt.toString("base64"),
    passwordParams: JSON.stringify(SCRYPT_PARAMS),
  };
}

/** Checks a password against stored columns in constant time. */
export async function checkPassword(
  password: string,
  stored: Pick<OperatorRecord, "passwordHash" | "passwordSalt" | "passwordParams">,
): Promise<boolean> {
  const params = JSON.parse(stored.passwordParams) as ScryptParams;
  const expected = Buffer.from(stored.passwordHash, "base64");
  const key = await derive(password, Buffer.from(stored.passwordSalt, "base64"), params);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** sha256 of an API token (what the store keeps). */
export function tokenDigest(token: string): string {
  return `sha256:${createHash("sha256").update(token, "utf8").digest("hex")}`;
}

/** The public view of a stored operator. */
export function operatorView(row: OperatorRecord): Operator {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    disabled: row.disabled,
    createdAt: row.createdAt,
  };
}

/** What callers see of an API token (never the token or its hash). */
export interface ApiTokenView {
  id: string;
  name: string;
  username: string;
  createdAt: string;
  revokedAt: string | null;
}

/** How long a bootstrap token issued on a shared store stays redeemable (one day). */
export const BOOTSTRAP_TTL_MS = 24 * 60 * 60 * 1000;

/** A session's `last_seen_at` is written at most this often. */
const TOUCH_INTERVAL_MS = 60_000;

const unauthenticated = (message = "invalid username or password"): RuntimeError =>
  new RuntimeError("UNAUTHENTICATED", message);

/** The refusal for a username no operator has (an admin's typo, or one renamed away). */
const operatorNotFound = (username: string): RuntimeError =>
  new RuntimeError("OPERATOR_NOT_FOUND", `there is no operator named ${username}`, {
    username,
    path: "username",
    named: true,
  });

/** A hash to compare against when the user does not exist, so timing does not tell. */
let decoy:
  Promise<Pick<OperatorRecord, "passwordHash" | "passwordSalt" | "passwordParams">> | undefined;

/** Operator and token services over the console store. */
export function operatorServices(deps: {
  identity: () => Promise<AsyncIdentityStore>;
  now: () => Date;
  randomHex: (bytes: number) => string;
}) {
  /** The process's own bootstrap token (a store without `bootstrap` keeps none of its own). */
  let bootstrapToken: string | undefined;

  async function add(input: { username: string; role: OperatorRole; password: string }) {
    const hashed = await hashPassword(input.password);
    const row = await (
      await deps.identity()
    ).insertOperator({
      id: `op_${deps.randomHex(8)}`,
      username: input.username,
      role: input.role,
      disabled: false,
      createdAt: deps.now().toISOString(),
      ...hashed,
    });
    return operatorView(row);
  }

  return {
    add,
    async list(): Promise<OperatorListing[]> {
      const store = await deps.identity();
      const signIns = await store.lastSignIns();
      return (await store.listOperators()).map((row) => ({
        ...operatorView(row),
        lastSignInAt: signIns.get(row.id) ?? null,
      }));
    },
    async count(): Promise<number> {
      return (await deps.identity()).countOperators();
    },
    /** Verifies a username and password; UNAUTHENTICATED on any mismatch or a disabled account. */
    async authenticate(username: string, password: string): Promise<Operator> {
      const row = await (await deps.identity()).findOperatorByName(username);
      if (row === undefined) {
        await checkPassword(password, await (decoy ??= hashPassword("decoy-password")));
        throw unauthenticated();
      }
      if (!(await checkPassword(password, row)) || row.disabled) throw unauthenticated();
      return operatorView(row);
    },
    /**
     * Disables or re-enables an operator. Disabling ends every session and API token of theirs
     * (re-enabling revives neither); LAST_ADMIN when it would leave no enabled admin.
     */
    async setDisabled(username: string, disabled: boolean): Promise<Operator> {
      const store = await deps.identity();
      const row = await store.findOperatorByName(username);
      if (row === undefined) {
        throw operatorNotFound(username);
      }
      const at = deps.now().toISOString();
      return operatorView((await store.setOperatorDisabled(row.id, disabled, at)) ?? row);
    },
    /**
     * Changes an operator's role; LAST_ADMIN when it would leave no enabled admin. Their
     * sessions and API tokens stay open: each request reads the role from the store, so the
     * new role applies from their next request.
     */
    async setRole(username: string, role: OperatorRole): Promise<Operator> {
      const store = await deps.identity();
      const row = await store.findOperatorByName(username);
      if (row === undefined) {
        throw operatorNotFound(username);
      }
      return operatorView((await store.setOperatorRole(row.id, role)) ?? row);
    },
    /** Records a new session of `operatorId` lasting `ttlSeconds`; its id goes in the cookie. */
    async openSession(
      operatorId: string,
      ttlSeconds: number,
    ): Promise<{ id: string; expiresAt: string }> {
      const now = deps.now();
      const row = await (
        await deps.identity()
      ).insertSession({
        id: `ses_${randomBytes(16).toString("hex")}`,
        operatorId,
        createdAt: now.toISOString(),
        lastSeenAt: now.toISOString(),
        expiresAt: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
        revokedAt: null,
      });
      return { id: row.id, expiresAt: row.expiresAt };
    },
    /**
     * The operator of a live session: UNAUTHENTICATED when the session is unknown, revoked,
     * expired, not theirs, or the operator is gone or disabled.
     */
    async sessionOperator(sessionId: string, operatorId: string): Promise<Operator> {
      const store = await deps.identity();
      const session = await store.getSession(sessionId);
      const now = deps.now();
      if (
        session === undefined ||
        session.operatorId !== operatorId ||
        session.revokedAt !== null ||
        Date.parse(session.expiresAt) <= now.getTime()
      ) {
        throw unauthenticated("the session has ended; sign in again");
      }
      const row = await store.getOperator(operatorId);
      if (row === undefined || row.disabled) {
        throw unauthenticated("the session's operator no longer exists or is disabled");
      }
      if (now.getTime() - Date.parse(session.lastSeenAt) >= TOUCH_INTERVAL_MS) {
        await store.touchSession(sessionId, now.toISOString());
      }
      return operatorView(row);
    },
    /** Ends a session (sign-out); ending an ended or unknown session does nothing. */
    async closeSession(sessionId: string): Promise<void> {
      await (await deps.identity()).revokeSession(sessionId, deps.now().toISOString());
    },
    /**
     * API tokens of `username` (default: the caller's own), revoked ones included. Only an
     * admin may list another operator's.
     */
    async listTokens(caller: Operator, username?: string): Promise<ApiTokenView[]> {
      const store = await deps.identity();
      let owner: OperatorRecord | undefined;
      if (username === undefined || username === caller.username) {
        owner = await store.getOperator(caller.id);
      } else {
        if (!roleAtLeast(caller.role, "admin")) {
          throw new RuntimeError("FORBIDDEN", "only an admin may list another operator's tokens", {
            path: "username",
          });
        }
        owner = await store.findOperatorByName(username);
      }
      if (owner === undefined) {
        throw new RuntimeError("OPERATOR_NOT_FOUND", `no operator ${username ?? caller.username}`, {
          path: "username",
        });
      }
      const ownerName = owner.username;
      return (await store.listApiTokens(owner.id)).map((t) => tokenView(t, ownerName));
    },
    /**
     * Revokes an API token of the caller's, or anyone's for an admin. TOKEN_NOT_FOUND for an
     * unknown id and for someone else's token (a non-admin learns nothing about it).
     */
    async revokeToken(caller: Operator, tokenId: string): Promise<ApiTokenView> {
      const store = await deps.identity();
      const token = await store.getApiToken(tokenId);
      if (
        token === undefined ||
        (token.operatorId !== caller.id && !roleAtLeast(caller.role, "admin"))
      ) {
        throw new RuntimeError("TOKEN_NOT_FOUND", `no API token ${tokenId}`, { path: "tokenId" });
      }
      const revoked = (await store.revokeApiToken(tokenId, deps.now().toISOString())) ?? token;
      const owner = await store.getOperator(token.operatorId);
      return tokenView(revoked, owner?.username ?? "");
    },
    /** Creates an API token for `operatorId`; the token is returned once and never stored. */
    async createToken(
      operatorId: string,
      name: string,
    ): Promise<{ id: string; token: string; name: string }> {
      const token = `runx_${randomBytes(32).toString("base64url")}`;
      const id = `tok_${deps.randomHex(8)}`;
      await (
        await deps.identity()
      ).insertApiToken({
        id,
        operatorId,
        name,
        tokenHash: tokenDigest(token),
        createdAt: deps.now().toISOString(),
        revokedAt: null,
      });
      return { id, token, name };
    },
    /** The operator an API token belongs to; UNAUTHENTICATED when unknown, revoked or disabled. */
    async authenticateToken(token: string): Promise<Operator> {
      const store = await deps.identity();
      const row = await store.findApiToken(tokenDigest(token));
      if (row === undefined) throw unauthenticated("invalid API token");
      const op = await store.getOperator(row.operatorId);
      if (op === undefined || op.disabled) throw unauthenticated("invalid API token");
      return operatorView(op);
    },
    /**
     * A one-time token that lets the first admin be created; null once any operator exists.
     * On a store shared by several instances (`bootstrap` present) the token is issued there:
     * only its digest is stored, it expires after BOOTSTRAP_TTL_MS, and any instance redeems
     * it. Otherwise it lives only in this process's memory.
     */
    async bootstrapToken(): Promise<string | null> {
      const store = await deps.identity();
      if ((await store.countOperators()) > 0) return null;
      if (store.bootstrap === undefined) {
        return (bootstrapToken ??= randomBytes(24).toString("base64url"));
      }
      if (bootstrapToken !== undefined) return bootstrapToken;
      try {
        bootstrapToken = (await store.bootstrap.issue(BOOTSTRAP_TTL_MS)).token;
      } catch (error) {
        // An operator appeared between the count and the issue (another instance's admin).
        if (error instanceof RuntimeError && error.code === "OPERATOR_EXISTS") return null;
        throw error;
      }
      return bootstrapToken;
    },
    /**
     * Creates the first admin with a bootstrap token (refused once any operator exists). On
     * a shared store the token is spent and the admin created in one locked transaction, so
     * exactly one first admin results however many instances are raced.
     */
    async redeemBootstrap(input: {
      token: string;
      username: string;
      password: string;
    }): Promise<Operator> {
      const store = await deps.identity();
      if (store.bootstrap !== undefined) {
        const hashed = await hashPassword(input.password);
        const admin = {
          id: `op_${deps.randomHex(8)}`,
          username: input.username,
          createdAt: deps.now().toISOString(),
          ...hashed,
        };
        try {
          await store.bootstrap.redeem(input.token, admin);
        } catch (error) {
          if (error instanceof RuntimeError && error.code === "OPERATOR_EXISTS") {
            throw unauthenticated("the bootstrap token is invalid or already used");
          }
          throw error;
        }
        if (input.token === bootstrapToken) bootstrapToken = undefined;
        const created = await store.getOperator(admin.id);
        if (created === undefined)
          throw unauthenticated("the bootstrap token is invalid or already used");
        return operatorView(created);
      }
      const expected = bootstrapToken;
      const given = Buffer.from(input.token);
      if (
        expected === undefined ||
        given.length !== Buffer.byteLength(expected) ||
        !timingSafeEqual(given, Buffer.from(expected))
      ) {
        throw unauthenticated("the bootstrap token is invalid or already used");
      }
      // Spent before the first await, so a concurrent redemption of the same token fails.
      bootstrapToken = undefined;
      if ((await store.countOperators()) > 0) {
        throw unauthenticated("the bootstrap token is invalid or already used");
      }
      return add({ username: input.username, role: "admin", password: input.password });
    },
  };
}

function tokenView(row: ApiTokenRecord, username: string): ApiTokenView {
  return {
    id: row.id,
    name: row.name,
    username,
    createdAt: row.createdAt,
    revokedAt: row.revokedAt,
  };
}

/** The operator services' surface. */
export type OperatorServices = ReturnType<typeof operatorServices>;
