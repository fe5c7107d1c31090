import { describe, expect, it } from "vitest";
import { isoTimestamp, secondsTimestamp } from "./time.js";

describe("isoTimestamp", () => {
  it("writes what toISOString writes", () => {
    const samples = [
      0,
      Date.UTC(2026, 10, 30, 9, 5, 3, 7),
      Date.UTC(2026, 0, 1, 0, 0, 0, 0),
      Date.UTC(1999, 11, 31, 23, 59, 59, 999),
      Date.UTC(2024, 1, 29, 12, 30, 45, 10),
      -62135596800000, // 0001-01-01T00:00:00.000Z
      -62167219200000, // 0000-01-01T00:00:00.000Z
      253402300799999, // 9999-12-31T23:59:59.999Z
      -1, // 1969-12-31T23:59:59.999Z
    ];
    // and a spread of instants across four centuries, every millisecond digit count
    for (let i = 0; i < 2000; i++) {
      samples.push(Math.floor(Math.sin(i + 1) * 6e12) + (i % 1000));
    }
    for (const ms of samples) {
      const date = new Date(ms);
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }
  });

  it("writes instants of the same second, of the next and of an earlier one alike", () => {
    // The text up to the seconds is kept for the last second written: every step here either
    // reuses it or must replace it (milliseconds up and down, a second and a day boundary
    // crossed both ways, before 1970 where the second rounds down).
    const base = Date.UTC(2026, 11, 31, 23, 59, 59, 0);
    const steps = [0, 1, 9, 10, 99, 100, 999, 1000, 998, 1001, 0, -1, 86_400_000, 5, -86_400_000];
    for (const origin of [base, -1000, 0, Date.UTC(1969, 11, 31, 23, 59, 59, 500)]) {
      for (const step of steps) {
        const date = new Date(origin + step);
        expect(isoTimestamp(date)).toBe(date.toISOString());
      }
    }
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
    expect(isoTimestamp(new Date(base))).toBe("2026-12-31T23:59:59.000Z");
  });

  it("leaves years beyond four digits and invalid dates to toISOString", () => {
    for (const ms of [253402300800000, -62167219200001, 8.64e15, -8.64e15]) {
      const date = new Date(ms);
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });

  it("does not depend on the local time zone", () => {
    const saved = process.env.TZ;
    try {
      for (const tz of ["Pacific/Chatham", "America/St_Johns", "Asia/Kathmandu"]) {
        // Node resets V8's zone cache when TZ is assigned.
        process.env.TZ = tz;
        const date = new Date(Date.UTC(2026, 5, 1, 23, 45, 0, 5));
        expect(date.getHours()).not.toBe(date.getUTCHours());
        expect(isoTimestamp(date)).toBe("2026-06-01T23:45:00.005Z");
        for (let i = 0; i < 200; i++) {
          const other = new Date(Math.floor(Math.cos(i + 1) * 4e12));
          expect(isoTimestamp(other)).toBe(other.toISOString());
        }
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it("writes the same instant to the second", () => {
    expect(secondsTimestamp(new Date(Date.UTC(2026, 10, 30, 9, 5, 3, 7)))).toBe(
      "2026-11-30T09:05:03Z",
    );
    expect(secondsTimestamp(new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999)))).toBe(
      "1999-12-31T23:59:59Z",
    );
  });
});
