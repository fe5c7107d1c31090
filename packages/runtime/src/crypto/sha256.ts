/**
 * SHA-256 through node:crypto, loaded on first use (see ./native.ts): commands that never
 * hash never load it. (A JavaScript SHA-256 for small inputs was tried: interpreted, it cost
 * a run more than loading node:crypto does.)
 */
import type * as NodeCrypto from "node:crypto";
import { nodeCrypto } from "./native.js";

type WithOneShot = typeof NodeCrypto & {
  hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string;
};

/** Lowercase hex SHA-256 of `data` (strings are hashed as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  const crypto = nodeCrypto() as WithOneShot;
  // The one-shot hash (Node >= 20.12) skips the Hash object.
  return crypto.hash !== undefined
    ? crypto.hash("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex");
}

/** An incremental SHA-256. */
export interface Sha256 {
  update(data: string | Uint8Array): Sha256;
  /** The digest as lowercase hex; the hasher cannot be used afterwards. */
  digestHex(): string;
}

/** A new incremental SHA-256. */
export function createSha256(): Sha256 {
  const hash = nodeCrypto().createHash("sha256");
  const hasher: Sha256 = {
    update(data) {
      hash.update(data);
      return hasher;
    },
    digestHex: () => hash.digest("hex"),
  };
  return hasher;
}
