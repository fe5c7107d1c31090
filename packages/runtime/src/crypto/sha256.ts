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

/** Bytes an incremental SHA-256 collects before it starts a native hash object. */
const COLLECT_LIMIT = 1024 * 1024;

/**
 * A new incremental SHA-256. Short inputs (up to 1 MiB in all) are collected and hashed in one
 * call at the end: node:crypto's Hash object costs a process its first-use set-up (a stream
 * class and its machinery), which a CLI command hashing a few kilobytes need not pay. Longer
 * inputs are hashed as they arrive.
 */
export function createSha256(): Sha256 {
  let parts: Uint8Array[] | undefined = [];
  let collected = 0;
  let hash: NodeCrypto.Hash | undefined;
  const finished = (): Error => new Error("this SHA-256 has already been digested");
  const hasher: Sha256 = {
    update(data) {
      if (hash !== undefined) {
        hash.update(data);
        return hasher;
      }
      if (parts === undefined) throw finished();
      // A copy: the caller may reuse its buffer once update() returns.
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
      if (collected + bytes.length <= COLLECT_LIMIT) {
        parts.push(bytes);
        collected += bytes.length;
        return hasher;
      }
      hash = nodeCrypto().createHash("sha256");
      for (const part of parts) hash.update(part);
      parts = undefined;
      hash.update(bytes);
      return hasher;
    },
    digestHex: () => {
      if (hash !== undefined) return hash.digest("hex");
      if (parts === undefined) throw finished();
      const all = Buffer.concat(parts, collected);
      parts = undefined;
      return sha256Hex(all);
    },
  };
  return hasher;
}
