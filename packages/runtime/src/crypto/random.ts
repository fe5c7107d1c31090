/** Cryptographically secure randomness from node:crypto, loaded on first use (./native.ts). */
import { nodeCrypto } from "./native.js";

/** `count` random bytes. */
export function randomBytes(count: number): Buffer {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError("random: bad byte count");
  return nodeCrypto().randomBytes(count);
}

/** `count` random bytes as lowercase hex (2 × count characters). */
export function randomHex(count: number): string {
  return randomBytes(count).toString("hex");
}

/** A random (version 4) UUID in its lowercase 8-4-4-4-12 form. */
export function randomUUID(): string {
  return nodeCrypto().randomUUID();
}
