/**
 * SHA-256 (FIPS 180-4) without node:crypto for small inputs.
 *
 * A command's start-up path hashes a few kilobytes (canonical JSON of a receipt, a package's
 * files, a run's output); hashing them here is far cheaper than loading node:crypto (see
 * ./native.ts). But native hashing is ~10x faster per byte, so JavaScript only serves a
 * process's first {@link JS_BUDGET} bytes: a long-running process (the API server, a data
 * store writer) soon loads node:crypto and uses it from then on, as it does at once for any
 * input beyond {@link NATIVE_THRESHOLD} bytes and whenever node:crypto is already loaded. An
 * incremental hasher buffers its input until it knows which side will serve it. Both sides
 * produce the same digest; the tests compare them on random inputs and on the standard test
 * vectors.
 */
import type * as NodeCrypto from "node:crypto";
import type { Hash } from "node:crypto";
import { nodeCrypto, nodeCryptoLoaded } from "./native.js";

/** Inputs larger than this (bytes) are hashed by node:crypto. */
export const NATIVE_THRESHOLD = 64 * 1024;
/** Bytes a process hashes in JavaScript before it switches to node:crypto for good. */
export const JS_BUDGET = 256 * 1024;
let budget = JS_BUDGET;

/** Whether `size` bytes are hashed in JavaScript (and if so, charges them to the budget). */
function inJavaScript(size: number): boolean {
  if (size > NATIVE_THRESHOLD || size > budget || nodeCryptoLoaded()) return false;
  budget -= size;
  return true;
}

const firstPrimes = (count: number): number[] => {
  const primes: number[] = [];
  for (let n = 2; primes.length < count; n++) {
    if (primes.every((p) => n % p !== 0)) primes.push(n);
  }
  return primes;
};
/** The first 32 bits of the fractional part of `x`. */
const fraction32 = (x: number): number => ((x - Math.floor(x)) * 2 ** 32) | 0;
const PRIMES = firstPrimes(64);
/** Round constants: cube roots of the first 64 primes. */
const K = Int32Array.from(PRIMES, (p) => fraction32(Math.cbrt(p)));
/** Initial hash value: square roots of the first 8 primes. */
const H0 = Int32Array.from(PRIMES.slice(0, 8), (p) => fraction32(Math.sqrt(p)));

const W = new Int32Array(64);

/** Processes the 64-byte blocks of `bytes[offset, end)` into `state`. */
function compress(state: Int32Array, bytes: Uint8Array, offset: number, end: number): void {
  let h0 = state[0]!;
  let h1 = state[1]!;
  let h2 = state[2]!;
  let h3 = state[3]!;
  let h4 = state[4]!;
  let h5 = state[5]!;
  let h6 = state[6]!;
  let h7 = state[7]!;
  for (let pos = offset; pos < end; pos += 64) {
    for (let i = 0; i < 16; i++) {
      const j = pos + i * 4;
      W[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15]!;
      const y = W[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
      const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  state[0] = h0;
  state[1] = h1;
  state[2] = h2;
  state[3] = h3;
  state[4] = h4;
  state[5] = h5;
  state[6] = h6;
  state[7] = h7;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** SHA-256 of `bytes` in JavaScript, as lowercase hex (whatever the size or budget). */
export function jsSha256Hex(bytes: Uint8Array): string {
  const state = H0.slice();
  const whole = bytes.length - (bytes.length % 64);
  compress(state, bytes, 0, whole);
  // Padding: 0x80, zeros, then the message length in bits as a 64-bit big-endian integer.
  const rest = bytes.length - whole;
  const tail = new Uint8Array(rest < 56 ? 64 : 128);
  tail.set(bytes.subarray(whole));
  tail[rest] = 0x80;
  const bits = bytes.length * 8;
  const view = new DataView(tail.buffer);
  view.setUint32(tail.length - 8, Math.floor(bits / 2 ** 32));
  view.setUint32(tail.length - 4, bits >>> 0);
  compress(state, tail, 0, tail.length);
  let hex = "";
  for (const word of state) {
    hex += HEX[(word >>> 24) & 0xff]! + HEX[(word >>> 16) & 0xff]! + HEX[(word >>> 8) & 0xff]!;
    hex += HEX[word & 0xff]!;
  }
  return hex;
}

const toBytes = (data: string | Uint8Array): Uint8Array =>
  typeof data === "string" ? Buffer.from(data, "utf8") : data;

/**
 * The last few strings hashed in JavaScript and their digests: a run hashes the same canonical
 * text more than once (a receipt when it is sealed and again when the store checks it before
 * writing), and a map lookup costs far less than interpreted hashing.
 */
const recent = new Map<string, string>();
const RECENT_LIMIT = 8;

/** Lowercase hex SHA-256 of `data` (strings are hashed as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  // A string's UTF-8 length is at most 3 bytes per UTF-16 unit: no need to encode it first.
  if (!nodeCryptoLoaded() && (typeof data !== "string" || data.length * 3 <= NATIVE_THRESHOLD)) {
    if (typeof data === "string") {
      const known = recent.get(data);
      if (known !== undefined) return known;
    }
    const bytes = toBytes(data);
    if (inJavaScript(bytes.length)) {
      const hex = jsSha256Hex(bytes);
      if (typeof data === "string") {
        if (recent.size >= RECENT_LIMIT) recent.delete(recent.keys().next().value as string);
        recent.set(data, hex);
      }
      return hex;
    }
  }
  return nativeHex(data);
}

/** node:crypto's one-shot hash where it exists (Node >= 20.12), else a Hash object. */
function nativeHex(data: string | Uint8Array): string {
  const crypto = nodeCrypto() as typeof NodeCrypto & {
    hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string;
  };
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

/** A new incremental SHA-256 (JavaScript or native, as {@link sha256Hex} decides). */
export function createSha256(): Sha256 {
  let pending: Uint8Array[] = [];
  let size = 0;
  let native: Hash | undefined;
  let done = false;
  const hasher: Sha256 = {
    update(data) {
      if (done) throw new Error("sha256: update after digest");
      const bytes = toBytes(data);
      if (native !== undefined) {
        native.update(bytes);
        return hasher;
      }
      // Copied: the caller may reuse its buffer before the digest is taken.
      pending.push(Uint8Array.prototype.slice.call(bytes));
      size += bytes.length;
      if (size > NATIVE_THRESHOLD || nodeCryptoLoaded()) {
        native = nodeCrypto().createHash("sha256");
        for (const chunk of pending) native.update(chunk);
        pending = [];
      }
      return hasher;
    },
    digestHex() {
      if (done) throw new Error("sha256: digest taken twice");
      done = true;
      if (native !== undefined) return native.digest("hex");
      const bytes = pending.length === 1 ? pending[0]! : Buffer.concat(pending, size);
      return inJavaScript(size) ? jsSha256Hex(bytes) : nativeHex(bytes);
    },
  };
  return hasher;
}
