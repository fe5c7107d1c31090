import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { NATIVE_THRESHOLD, createSha256, jsSha256Hex, sha256Hex } from "./sha256.js";

const native = (data: string | Uint8Array): string =>
  createHash("sha256").update(data).digest("hex");

/** Deterministic pseudo-random bytes (xorshift32), so a failure can be replayed. */
function bytesOf(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("sha256", () => {
  // FIPS 180-2 appendix B and the usual extra vectors.
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    [
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
    ],
    [
      "The quick brown fox jumps over the lazy dog",
      "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592",
    ],
  ])("matches the standard vector for %j", (input, digest) => {
    expect(jsSha256Hex(Buffer.from(input))).toBe(digest);
    expect(sha256Hex(input)).toBe(digest);
    expect(createSha256().update(input).digestHex()).toBe(digest);
  });

  it("matches the one-million-'a' vector on both sides", () => {
    const million = "a".repeat(1_000_000);
    expect(jsSha256Hex(Buffer.from(million))).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
    );
    expect(sha256Hex(million)).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
    );
    const hasher = createSha256();
    for (let i = 0; i < 1000; i++) hasher.update("a".repeat(1000));
    expect(hasher.digestHex()).toBe(
      "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
    );
  });

  it("agrees with node:crypto at every length around the padding and block boundaries", () => {
    for (let length = 0; length <= 300; length++) {
      const data = bytesOf(length, length + 7);
      expect(jsSha256Hex(data), `length ${length}`).toBe(native(data));
      expect(sha256Hex(data), `length ${length}`).toBe(native(data));
    }
  });

  it("agrees with node:crypto on random inputs split at random points, on both sides of the native threshold", () => {
    let seed = 12345;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed % n;
    };
    const lengths = [1000, 4096, NATIVE_THRESHOLD - 1, NATIVE_THRESHOLD, NATIVE_THRESHOLD + 1];
    for (let i = 0; i < 40; i++) lengths.push(next(3 * NATIVE_THRESHOLD));
    for (const [k, length] of lengths.entries()) {
      const data = bytesOf(length, k + 99);
      const hasher = createSha256();
      for (let at = 0; at < length;) {
        const step = Math.min(length - at, 1 + next(20_000));
        hasher.update(data.subarray(at, at + step));
        at += step;
      }
      const expected = native(data);
      expect(hasher.digestHex(), `length ${length}`).toBe(expected);
      expect(sha256Hex(data), `length ${length}`).toBe(expected);
      expect(jsSha256Hex(data), `length ${length}`).toBe(expected);
    }
  });

  it("hashes strings as UTF-8, including astral and lone-surrogate-free multibyte text", () => {
    for (const text of [
      "é",
      "日本語のテキスト",
      "😀 emoji 🎉",
      "mixed ascii and ünïcödé".repeat(50),
    ]) {
      expect(sha256Hex(text)).toBe(native(text));
      expect(jsSha256Hex(Buffer.from(text))).toBe(native(text));
      expect(createSha256().update(text.slice(0, 3)).update(text.slice(3)).digestHex()).toBe(
        native(text),
      );
    }
  });

  it("does not see later changes to a buffer it was given", () => {
    const buffer = Buffer.from("first");
    const hasher = createSha256().update(buffer);
    buffer.write("xxxxx");
    expect(hasher.digestHex()).toBe(native("first"));
  });

  it("refuses use after the digest was taken", () => {
    const hasher = createSha256().update("x");
    hasher.digestHex();
    expect(() => hasher.update("y")).toThrow(/after digest/);
    expect(() => hasher.digestHex()).toThrow(/twice/);
  });
});

describe("sha256 side selection", () => {
  it("serves small inputs in JavaScript until the process budget is spent, then loads node:crypto", async () => {
    // A fresh module instance: its budget is untouched and node:crypto not loaded through it.
    vi.resetModules();
    const native = await import("./native.js");
    const fresh = await import("./sha256.js");
    expect(native.nodeCryptoLoaded()).toBe(false);
    // Distinct texts: a repeated one is answered from the recent-input memo, not hashed.
    const text = (n: number): string => String(n).padEnd(1000, "x");
    let used = 0;
    for (; used + 1000 <= fresh.JS_BUDGET; used += 1000) {
      expect(fresh.sha256Hex(text(used))).toBe(
        createHash("sha256").update(text(used)).digest("hex"),
      );
    }
    expect(native.nodeCryptoLoaded()).toBe(false);
    expect(fresh.sha256Hex(text(used))).toBe(createHash("sha256").update(text(used)).digest("hex"));
    expect(native.nodeCryptoLoaded()).toBe(true);
  });

  it("hands an input beyond the threshold to node:crypto at once", async () => {
    vi.resetModules();
    const native = await import("./native.js");
    const fresh = await import("./sha256.js");
    const big = new Uint8Array(fresh.NATIVE_THRESHOLD + 1);
    expect(fresh.sha256Hex(big)).toBe(createHash("sha256").update(big).digest("hex"));
    expect(native.nodeCryptoLoaded()).toBe(true);
  });
});

describe("sha256 of repeated text", () => {
  it("gives the same digest for repeated and interleaved inputs (the recent-input memo)", () => {
    const texts = Array.from({ length: 12 }, (_, i) => `text ${i} `.repeat(50 + i));
    for (let round = 0; round < 3; round++) {
      for (const text of texts) expect(sha256Hex(text)).toBe(native(text));
    }
  });
});
