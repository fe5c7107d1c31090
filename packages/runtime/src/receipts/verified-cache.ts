/**
 * The verified-digest cache of `runx verify`: the sha256 digests of receipt files' bytes
 * that the last verification of a store found clean under a policy, kept in the
 * workspace's `.runx/cache/`, one file per store directory and policy (mode and key ring).
 * A cached digest only ever stands for the exact bytes that were checked, so a receipt
 * changed after it was verified has other bytes, misses and is checked in full; the tree
 * checks (child digests, orphans, parents) are never cached. A cache file that does not
 * read back as digests is ignored.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { sha256Prefixed } from "./canonical.js";
import { writeFileAtomic } from "./store-files.js";
import type { SignaturePolicy } from "./verifier.js";
import { ensureStateDir } from "../workspace.js";

const HEADER = "runx.verified_receipt_cache.v1";
const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** Where the cache of one store and policy lives under `runxDir`. */
export function verifiedCacheFile(
  runxDir: string,
  storeDir: string,
  policy: SignaturePolicy,
): { dir: string; name: string } {
  const keys = (policy.verifier?.keys ?? []).map((key) => [key.kid, sha256Prefixed(key.publicKey)]);
  // A verifier that is not a key ring cannot be named, so its results are never cached.
  const nameable = policy.verifier === undefined || policy.verifier.keys !== undefined;
  const fingerprint = sha256Prefixed(
    JSON.stringify({ store: resolve(storeDir), mode: policy.mode, keys, nameable }),
  ).slice("sha256:".length, "sha256:".length + 32);
  return { dir: join(runxDir, "cache"), name: `verified-receipts-${fingerprint}.txt` };
}

/** The cached digests (empty when there is no cache or it does not read back). */
export function loadVerifiedCache(file: { dir: string; name: string }): Set<string> {
  let text: string;
  try {
    text = readFileSync(join(file.dir, file.name), "utf8");
  } catch {
    return new Set();
  }
  const lines = text.split("\n");
  if (lines.shift() !== HEADER || lines.pop() !== "") return new Set();
  return lines.every((line) => DIGEST.test(line)) ? new Set(lines) : new Set();
}

/**
 * Replaces the cache with `digests` (atomically). Written only into an existing `.runx`
 * (verifying never creates a workspace); a failure to write leaves verification unaffected.
 */
export function saveVerifiedCache(
  runxDir: string,
  file: { dir: string; name: string },
  digests: readonly string[],
): void {
  if (!existsSync(runxDir)) return;
  try {
    ensureStateDir(file.dir);
    writeFileAtomic(file.dir, file.name, `${[HEADER, ...digests].join("\n")}\n`, false);
  } catch {
    // The cache only saves time.
  }
}

/** Most digests a listing cache keeps (the newest); bounded so a listing reads O(page). */
export const LISTING_CACHE_MAX = 4096;

/**
 * The verified-digest cache of receipt listings (`runx history`, `receipt.query`): the same
 * format and store-and-policy naming as `runx verify`'s, in a file of its own
 * (`verified-listing-<store and policy>.txt`) that keeps only the newest
 * {@link LISTING_CACHE_MAX} digests, so a listing never reads a file that grows with the
 * store. `save` writes it back only when a listing added digests. A policy whose verifier
 * is not a key ring gets a cache that holds nothing.
 */
export class ListingCache {
  private readonly digests: Set<string>;
  private readonly file: { dir: string; name: string } | undefined;
  private added = false;

  constructor(
    private readonly runxDir: string,
    storeDir: string,
    policy: SignaturePolicy,
  ) {
    const nameable = policy.verifier === undefined || policy.verifier.keys !== undefined;
    const verify = verifiedCacheFile(runxDir, storeDir, policy);
    this.file = nameable
      ? { dir: verify.dir, name: verify.name.replace("verified-receipts-", "verified-listing-") }
      : undefined;
    this.digests = this.file === undefined ? new Set() : loadVerifiedCache(this.file);
  }

  has(key: string): boolean {
    return this.digests.has(key);
  }

  add(key: string): void {
    if (this.file === undefined || this.digests.has(key)) return;
    this.digests.add(key);
    this.added = true;
  }

  /** Writes the newest digests back when this listing added any. */
  save(): void {
    if (this.file === undefined || !this.added) return;
    saveVerifiedCache(this.runxDir, this.file, [...this.digests].slice(-LISTING_CACHE_MAX));
    this.added = false;
  }
}
