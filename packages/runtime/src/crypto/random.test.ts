import { describe, expect, it } from "vitest";
import { randomBytes, randomHex, randomUUID } from "./random.js";

describe("random", () => {
  it("returns the requested number of bytes, different every call", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const bytes = randomBytes(16);
      expect(bytes.length).toBe(16);
      seen.add(bytes.toString("hex"));
    }
    expect(seen.size).toBe(200);
    expect(randomBytes(0).length).toBe(0);
    expect(randomBytes(100_000).length).toBe(100_000);
  });

  it("covers all byte values roughly uniformly", () => {
    const counts = new Array<number>(256).fill(0);
    for (const b of randomBytes(256 * 400)) counts[b]! += 1;
    // Expected 400 per value; a CSPRNG stays far inside these bounds.
    expect(Math.min(...counts)).toBeGreaterThan(250);
    expect(Math.max(...counts)).toBeLessThan(550);
  });

  it("formats hex and version-4 UUIDs", () => {
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    for (let i = 0; i < 50; i++) {
      expect(randomUUID()).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
    }
  });

  it("refuses a negative or fractional count", () => {
    expect(() => randomBytes(-1)).toThrow(RangeError);
    expect(() => randomBytes(1.5)).toThrow(RangeError);
  });
});
