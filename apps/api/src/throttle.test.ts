import { isRuntimeError } from "@runx/runtime";
import { describe, expect, it } from "vitest";
import { ACCOUNT_POLICY, Throttle, authThrottle, throttled } from "./throttle.js";

function clock() {
  let t = 1_000_000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function retryAfter(fn: () => void): number | null {
  try {
    fn();
    return null;
  } catch (error) {
    if (isRuntimeError(error) && error.code === "RATE_LIMITED") {
      return error.details.retryAfterSeconds as number;
    }
    throw error;
  }
}

describe("Throttle", () => {
  it("allows the free failures, then blocks for windows that double up to the cap", () => {
    const c = clock();
    const t = new Throttle(ACCOUNT_POLICY, c.now);
    for (let i = 0; i < 5; i++) expect(t.fail("k")).toBe(0);
    expect(t.blockedFor("k")).toBe(0);
    const delays = [];
    for (let i = 0; i < 12; i++) {
      delays.push(t.fail("k"));
      c.advance(1);
    }
    expect(delays.slice(0, 4)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(Math.max(...delays)).toBe(ACCOUNT_POLICY.maxDelayMs);
    expect(t.blockedFor("k")).toBeGreaterThan(0);
  });

  it("forgets a key after a quiet period, and on forget()", () => {
    const c = clock();
    const t = new Throttle(ACCOUNT_POLICY, c.now);
    for (let i = 0; i < 6; i++) t.fail("k");
    expect(t.blockedFor("k")).toBe(1_000);
    c.advance(ACCOUNT_POLICY.forgetAfterMs + 1);
    expect(t.blockedFor("k")).toBe(0);
    expect(t.fail("k")).toBe(0);
    t.forget("k");
    expect(t.size).toBe(0);
  });

  it("keeps at most maxEntries keys, dropping the least recently failed", () => {
    const c = clock();
    const t = new Throttle(ACCOUNT_POLICY, c.now, 100);
    for (let i = 0; i < 1_000; i++) t.fail(`k${i}`);
    expect(t.size).toBe(100);
    for (let i = 0; i < 6; i++) t.fail("k999");
    expect(t.blockedFor("k999")).toBeGreaterThan(0);
    expect(t.blockedFor("k0")).toBe(0);
  });
});

describe("authThrottle", () => {
  it("blocks an account and an address independently, and logs without secrets", () => {
    const c = clock();
    const lines: string[] = [];
    const a = authThrottle((l) => lines.push(l), c.now);
    for (let i = 0; i < 6; i++) a.failed("sign-in", "10.0.0.1", "alice");
    expect(retryAfter(() => a.check("sign-in", "10.0.0.9", "alice"))).toBe(1);
    // Another account from the same address is not blocked yet (20 free per address).
    expect(retryAfter(() => a.check("sign-in", "10.0.0.1", "bob"))).toBeNull();
    expect(lines.some((l) => l.includes('"alice"') && l.includes("10.0.0.1"))).toBe(true);
    for (let i = 0; i < 15; i++) a.failed("sign-in", "10.0.0.1", `u${i}`);
    expect(retryAfter(() => a.check("sign-in", "10.0.0.1", "carol"))).toBeGreaterThan(0);
    // Kinds are separate: Bearer guessing is not blocked by password guessing.
    expect(retryAfter(() => a.check("api-token", "10.0.0.1"))).toBeNull();
  });

  it("a success clears the account's failures but not the address's", async () => {
    const c = clock();
    const a = authThrottle(() => undefined, c.now);
    for (let i = 0; i < 5; i++) a.failed("sign-in", "10.0.0.1", "alice");
    await throttled(a, "sign-in", "10.0.0.1", "alice", () => Promise.resolve("ok"));
    a.failed("sign-in", "10.0.0.1", "alice");
    expect(retryAfter(() => a.check("sign-in", "10.0.0.1", "alice"))).toBeNull();
  });

  it("throttled() counts UNAUTHENTICATED only, and refuses before the check runs when blocked", async () => {
    const a = authThrottle(() => undefined, clock().now);
    let calls = 0;
    const wrong = () => {
      calls += 1;
      return Promise.reject(new (class extends Error {})("not a runtime error"));
    };
    await expect(throttled(a, "bootstrap", "10.0.0.1", undefined, wrong)).rejects.toThrow();
    for (let i = 0; i < 21; i++) a.failed("bootstrap", "10.0.0.1");
    calls = 0;
    await expect(throttled(a, "bootstrap", "10.0.0.1", undefined, wrong)).rejects.toMatchObject({
      code: "RATE_LIMITED",
    });
    expect(calls).toBe(0);
  });
});
