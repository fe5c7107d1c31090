/**
 * Throttling of credential guessing: password sign-in (per account and per client address),
 * the bootstrap token and Bearer tokens (per client address). A key gets a few free failures;
 * every failure after those blocks it for a window that doubles each time (1 s, 2 s, 4 s, …,
 * capped), answered 429 with Retry-After and a line on the API's log (the account and address,
 * never what was guessed). A blocked key is refused before any password or token is checked,
 * whether or not the account exists, so a blocked answer tells nothing either.
 *
 * The state is in this process's memory: it is lost on restart and not shared between API
 * instances (running several behind one address needs a shared store). Memory is bounded:
 * past `MAX_ENTRIES` keys the least recently failed are forgotten first.
 */
import { RuntimeError, isRuntimeError } from "@runx/runtime";

/** How one family of keys is throttled. */
export interface ThrottlePolicy {
  /** Failures allowed before the first block. */
  freeFailures: number;
  /** The first block's length; each further failure doubles it. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A key with no failure for this long starts afresh. */
  forgetAfterMs: number;
}

/** Keys remembered per throttle (about 100 bytes each). */
export const MAX_ENTRIES = 10_000;

interface Entry {
  failures: number;
  lastFailure: number;
  blockedUntil: number;
}

/** Failure counts and blocks of one family of keys (a Map kept in least-recently-failed order). */
export class Throttle {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly policy: ThrottlePolicy,
    private readonly now: () => number = Date.now,
    private readonly maxEntries: number = MAX_ENTRIES,
  ) {}

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined && this.now() - entry.lastFailure > this.policy.forgetAfterMs) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  /** Milliseconds `key` stays blocked (0: not blocked). */
  blockedFor(key: string): number {
    const entry = this.live(key);
    return entry === undefined ? 0 : Math.max(0, entry.blockedUntil - this.now());
  }

  /** Records a failure; returns the block it starts (0 while failures are still free). */
  fail(key: string): number {
    const now = this.now();
    const entry = this.live(key) ?? { failures: 0, lastFailure: now, blockedUntil: 0 };
    entry.failures += 1;
    entry.lastFailure = now;
    const over = entry.failures - this.policy.freeFailures;
    const delay =
      over <= 0
        ? 0
        : Math.min(this.policy.maxDelayMs, this.policy.baseDelayMs * 2 ** Math.min(over - 1, 30));
    entry.blockedUntil = now + delay;
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value!);
    }
    return delay;
  }

  /** Forgets `key` (a successful sign-in of that account). */
  forget(key: string): void {
    this.entries.delete(key);
  }

  /** Keys remembered now (for tests and the memory bound). */
  get size(): number {
    return this.entries.size;
  }
}

/** What is being guessed. */
export type CredentialKind = "sign-in" | "bootstrap" | "api-token";

/** The throttles of one API process. */
export interface AuthThrottle {
  /** Throws RATE_LIMITED (with `retryAfterSeconds`) when the account or address is blocked. */
  check(kind: CredentialKind, address: string, account?: string): void;
  /** Records a failed attempt (and logs a block it starts). */
  failed(kind: CredentialKind, address: string, account?: string): void;
  /** A successful sign-in clears its account's failures (not its address's). */
  succeeded(kind: CredentialKind, address: string, account?: string): void;
}

/** Per-account policy: 5 free failures, then 1 s doubling to 15 min. */
export const ACCOUNT_POLICY: ThrottlePolicy = {
  freeFailures: 5,
  baseDelayMs: 1_000,
  maxDelayMs: 15 * 60_000,
  forgetAfterMs: 15 * 60_000,
};

/**
 * Per-address policy: 20 free failures (a shared office or the console's proxy is one
 * address), then 1 s doubling to 5 min.
 */
export const ADDRESS_POLICY: ThrottlePolicy = {
  freeFailures: 20,
  baseDelayMs: 1_000,
  maxDelayMs: 5 * 60_000,
  forgetAfterMs: 15 * 60_000,
};

/** The throttles, logging each block through `log` (one line, no secret). */
export function authThrottle(
  log: (line: string) => void,
  now: () => number = Date.now,
): AuthThrottle {
  const accounts = new Throttle(ACCOUNT_POLICY, now);
  const addresses = new Throttle(ADDRESS_POLICY, now);
  const keys = (kind: CredentialKind, address: string, account?: string) => ({
    address: `${kind}\u0000${address}`,
    account: account === undefined ? undefined : `${kind}\u0000${account}`,
  });
  const refuse = (ms: number): never => {
    const retryAfterSeconds = Math.max(1, Math.ceil(ms / 1000));
    throw new RuntimeError(
      "RATE_LIMITED",
      `too many failed attempts; try again in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  };
  return {
    check(kind, address, account) {
      const k = keys(kind, address, account);
      const ms = Math.max(
        addresses.blockedFor(k.address),
        k.account === undefined ? 0 : accounts.blockedFor(k.account),
      );
      if (ms > 0) refuse(ms);
    },
    failed(kind, address, account) {
      const k = keys(kind, address, account);
      const byAddress = addresses.fail(k.address);
      if (byAddress > 0) {
        log(
          `runx throttle: ${kind} from address ${address} blocked for ${Math.ceil(byAddress / 1000)} s after repeated failures`,
        );
      }
      if (k.account === undefined) return;
      const byAccount = accounts.fail(k.account);
      if (byAccount > 0) {
        log(
          `runx throttle: ${kind} for account ${JSON.stringify(account)} (from address ${address}) blocked for ${Math.ceil(byAccount / 1000)} s after repeated failures`,
        );
      }
    },
    succeeded(kind, _address, account) {
      if (account !== undefined) accounts.forget(keys(kind, "", account).account!);
    },
  };
}

/**
 * Runs one credential check under `throttle`: refused while blocked (before `check` runs, so
 * no password is hashed and nothing is looked up), an UNAUTHENTICATED answer counted as a
 * failure, a success clearing the account's failures.
 */
export async function throttled<T>(
  throttle: AuthThrottle,
  kind: CredentialKind,
  address: string,
  account: string | undefined,
  check: () => Promise<T>,
): Promise<T> {
  throttle.check(kind, address, account);
  try {
    const result = await check();
    throttle.succeeded(kind, address, account);
    return result;
  } catch (error) {
    if (isRuntimeError(error) && error.code === "UNAUTHENTICATED") {
      throttle.failed(kind, address, account);
    }
    throw error;
  }
}
