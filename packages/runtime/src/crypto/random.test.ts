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
  });

  it("formats hex and version-4 UUIDs", () => {
    expect(randomHex(8)).toMatch(/^[0-9a-f]{16}$/);
    expect(randomUUID()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
  });

  it("refuses a negative or fractional count", () => {
    expect(() => randomBytes(-1)).toThrow(RangeError);
    expect(() => randomBytes(1.5)).toThrow(RangeError);
  });
});
