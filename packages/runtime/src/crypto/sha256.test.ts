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
});
