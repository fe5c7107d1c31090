/**
 * The asynchronous port of the console's identity tables: operators, API tokens and sign-in
 * sessions, plus (on a store shared by several instances) the first admin's bootstrap tokens.
 * Two adapters: SQLite over today's console store (below) and PostgreSQL
 * (./pg/identity-store.ts). Same records, orderings and errors as the synchronous
 * `ConsoleStore` (./console-store.ts), whose semantics each method keeps.
 */
import type {
  ApiTokenRecord,
  ConsoleSessionRecord,
  ConsoleStore,
  OperatorRecord,
  OperatorRole,
} from "./console-store.js";

/** The first admin a bootstrap redemption creates (password already hashed). */
export type BootstrapAdminRow = Omit<OperatorRecord, "role" | "disabled">;

/**
 * Bootstrap tokens kept in the store, so that any instance's token works on every instance
 * and exactly one first admin can exist. Only a clustered store has them; without, the
 * operator services keep the one token of their own process in memory.
 */
export interface StoredBootstrap {
  /** Issues a token valid for `ttlMs` (only its digest is stored); OPERATOR_EXISTS once any operator exists. */
  issue(ttlMs: number): Promise<{ token: string; expiresAt: Date }>;
  /**
   * Spends `token` and creates `admin` in one transaction: UNAUTHENTICATED for an unknown,
   * expired or spent token, OPERATOR_EXISTS when an operator exists (nothing is spent).
   */
  redeem(token: string, admin: BootstrapAdminRow): Promise<void>;
}

/** The identity tables; every method resolves with what the synchronous store returns. */
export interface AsyncIdentityStore {
  readonly label: string;
  countOperators(): Promise<number>;
  /** OPERATOR_EXISTS for a taken username. */
  insertOperator(row: OperatorRecord): Promise<OperatorRecord>;
  findOperatorByName(username: string): Promise<OperatorRecord | undefined>;
  getOperator(id: string): Promise<OperatorRecord | undefined>;
  /** By username, in byte order. */
  listOperators(): Promise<OperatorRecord[]>;
  /**
   * Disables or re-enables an operator atomically: LAST_ADMIN when it would leave no enabled
   * admin (two concurrent calls cannot both pass); disabling revokes their sessions and tokens.
   */
  setOperatorDisabled(
    id: string,
    disabled: boolean,
    at: string,
  ): Promise<OperatorRecord | undefined>;
  /** Changes a role atomically; LAST_ADMIN when it would leave no enabled admin. */
  setOperatorRole(id: string, role: OperatorRole): Promise<OperatorRecord | undefined>;
  /** The newest session start of each operator, among the sessions still kept. */
  lastSignIns(): Promise<Map<string, string>>;
  insertApiToken(row: ApiTokenRecord): Promise<ApiTokenRecord>;
  /** An unrevoked token by its hash. */
  findApiToken(tokenHash: string): Promise<ApiTokenRecord | undefined>;
  /** Tokens (revoked ones too) of one operator, or of everyone, oldest first. */
  listApiTokens(operatorId?: string): Promise<ApiTokenRecord[]>;
  getApiToken(id: string): Promise<ApiTokenRecord | undefined>;
  /** Sets `revoked_at` unless already set; the row afterwards (undefined when absent). */
  revokeApiToken(id: string, at: string): Promise<ApiTokenRecord | undefined>;
  /** Inserts a session and drops sessions that expired before `row.createdAt`. */
  insertSession(row: ConsoleSessionRecord): Promise<ConsoleSessionRecord>;
  getSession(id: string): Promise<ConsoleSessionRecord | undefined>;
  touchSession(id: string, at: string): Promise<void>;
  revokeSession(id: string, at: string): Promise<void>;
  /** Present on a store shared by several instances (see `StoredBootstrap`). */
  readonly bootstrap?: StoredBootstrap;
}

type Exclusive = <T>(fn: () => T) => Promise<T>;

/**
 * The SQLite adapter: each call runs the synchronous console store's method on the
 * connection's async mutex (`sqliteExclusive`, ./sqlite-async.ts), so it never lands inside
 * an async transaction another caller holds open on the same connection.
 */
export function asyncSqliteIdentityStore(
  store: ConsoleStore,
  label: string,
  exclusive: Exclusive,
): AsyncIdentityStore {
  return {
    label,
    countOperators: () => exclusive(() => store.countOperators()),
    insertOperator: (row) => exclusive(() => store.insertOperator(row)),
    findOperatorByName: (username) => exclusive(() => store.findOperatorByName(username)),
    getOperator: (id) => exclusive(() => store.getOperator(id)),
    listOperators: () => exclusive(() => store.listOperators()),
    setOperatorDisabled: (id, disabled, at) =>
      exclusive(() => store.setOperatorDisabled(id, disabled, at)),
    setOperatorRole: (id, role) => exclusive(() => store.setOperatorRole(id, role)),
    lastSignIns: () => exclusive(() => store.lastSignIns()),
    insertApiToken: (row) => exclusive(() => store.insertApiToken(row)),
    findApiToken: (hash) => exclusive(() => store.findApiToken(hash)),
    listApiTokens: (operatorId) => exclusive(() => store.listApiTokens(operatorId)),
    getApiToken: (id) => exclusive(() => store.getApiToken(id)),
    revokeApiToken: (id, at) => exclusive(() => store.revokeApiToken(id, at)),
    insertSession: (row) => exclusive(() => store.insertSession(row)),
    getSession: (id) => exclusive(() => store.getSession(id)),
    touchSession: (id, at) => exclusive(() => store.touchSession(id, at)),
    revokeSession: (id, at) => exclusive(() => store.revokeSession(id, at)),
  };
}
