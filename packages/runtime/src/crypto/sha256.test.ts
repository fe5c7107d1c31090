import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createSha256, sha256Hex } from "./sha256.js";

describe("sha256", () => {
  // FIPS 180-2 appendix B and the usual extra vectors.
  it.each([
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    ["é", createHash("sha256").update("é", "utf8").digest("hex")],
  ])("hashes %j (strings as UTF-8) one-shot and incrementally", (input, digest) => {
    expect(sha256Hex(input)).toBe(digest);
    expect(sha256Hex(Buffer.from(input, "utf8"))).toBe(digest);
    const half = Math.floor(input.length / 2);
    expect(createSha256().update(input.slice(0, half)).update(input.slice(half)).digestHex()).toBe(
      digest,
    );
  });

  it("hashes incremental input below, across and beyond the one-shot collection limit", () => {
    const block = Buffer.alloc(300 * 1024);
    for (let i = 0; i < block.length; i++) block[i] = (i * 7 + (i >> 10)) & 0xff;
    for (const parts of [1, 3, 4, 9]) {
      const hasher = createSha256();
      const whole = createHash("sha256");
      for (let i = 0; i < parts; i++) {
        // Buffers and strings (hashed as UTF-8) in turn.
        if (i % 2 === 0) {
          hasher.update(block);
          whole.update(block);
        } else {
          const text = `part ${i} é ${"x".repeat(200 * 1024)}`;
          hasher.update(text);
          whole.update(Buffer.from(text, "utf8"));
        }
      }
      expect(hasher.digestHex()).toBe(whole.digest("hex"));
    }
  });

  it("keeps what it was given, not the caller's buffer", () => {
    const buffer = Buffer.from("first");
    const hasher = createSha256().update(buffer);
    buffer.write("xxxxx");
    expect(hasher.update("second").digestHex()).toBe(sha256Hex("firstsecond"));
  });

  it("refuses use after its digest", () => {
    const small = createSha256().update("abc");
    small.digestHex();
    expect(() => small.update("more")).toThrow();
    expect(() => small.digestHex()).toThrow();
    const large = createSha256().update(Buffer.alloc(2 * 1024 * 1024));
    large.digestHex();
    expect(() => large.update("more")).toThrow();
  });
});
