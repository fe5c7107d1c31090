/**
 * Cryptographically secure random bytes without loading node:crypto (see ./native.ts): read
 * from the kernel's CSPRNG device, `/dev/urandom`. Where that device cannot be read (not a
 * Unix-like system, a sandbox without /dev), node:crypto supplies them.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { nodeCrypto } from "./native.js";

let deviceUsable = true;

/** `count` random bytes. */
export function randomBytes(count: number): Buffer {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError("random: bad byte count");
  if (deviceUsable) {
    try {
      return readDevice(count);
    } catch {
      deviceUsable = false;
    }
  }
  return nodeCrypto().randomBytes(count);
}

function readDevice(count: number): Buffer {
  const bytes = Buffer.alloc(count);
  const fd = openSync("/dev/urandom", "r");
  try {
    for (let filled = 0; filled < count;) {
      const read = readSync(fd, bytes, filled, count - filled, null);
      if (read <= 0) throw new Error("random: /dev/urandom returned no bytes");
      filled += read;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** `count` random bytes as lowercase hex (2 × count characters). */
export function randomHex(count: number): string {
  return randomBytes(count).toString("hex");
}

/** A random (version 4, RFC 9562) UUID in its lowercase 8-4-4-4-12 form. */
export function randomUUID(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
