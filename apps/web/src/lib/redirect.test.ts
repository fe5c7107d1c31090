import { describe, expect, it } from "vitest";
import { loginHref, safeNext } from "./redirect";

const ORIGIN = "http://127.0.0.1:3000";
const EVIL = "127.0.0.1:3399";

describe("safeNext", () => {
  it("keeps same-origin paths with their query and hash", () => {
    expect(safeNext("/runs", ORIGIN)).toBe("/runs");
    expect(safeNext("/runs?status=sealed#top", ORIGIN)).toBe("/runs?status=sealed#top");
    expect(safeNext("/skills/a%20b", ORIGIN)).toBe("/skills/a%20b");
    // Normalised the way the browser will follow it.
    expect(safeNext("/a/./b/../c", ORIGIN)).toBe("/a/c");
    expect(safeNext("/%2F%2Fx", ORIGIN)).toBe("/%2F%2Fx");
  });

  it("refuses every form that leaves the origin, and goes to /", () => {
    const hostile = [
      `/\t/${EVIL}/landing.html`,
      `/\n/${EVIL}/landing.html`,
      `/\r/${EVIL}/landing.html`,
      `/\r\n/${EVIL}/landing.html`,
      `/\t\\${EVIL}/landing.html`,
      `\t//${EVIL}/landing.html`,
      `//${EVIL}/landing.html`,
      `///${EVIL}/landing.html`,
      `/\\${EVIL}/landing.html`,
      `\\/${EVIL}/landing.html`,
      `\\\\${EVIL}/landing.html`,
      `/..//${EVIL}/landing.html`,
      `/.%2e//${EVIL}/landing.html`,
      `/a/../..//${EVIL}`,
      `//user:pw@${EVIL}/landing.html`,
      `/\t/user@${EVIL}/landing.html`,
      `http://${EVIL}/landing.html`,
      `http:${EVIL}/landing.html`,
      `https:${EVIL}/landing.html`,
      `${ORIGIN}/runs`,
      "javascript:alert(1)",
      "\njavascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "data:text/html,<script>alert(1)</script>",
      "runs",
      "",
      `/${"a".repeat(3000)}`,
    ];
    for (const next of hostile) expect(safeNext(next, ORIGIN), JSON.stringify(next)).toBe("/");
    expect(safeNext(undefined, ORIGIN)).toBe("/");
    expect(safeNext(null, ORIGIN)).toBe("/");
  });

  it("builds the sign-in link from a safe path only", () => {
    expect(loginHref("/runs?x=1", ORIGIN)).toBe("/login?next=%2Fruns%3Fx%3D1");
    expect(loginHref(`//${EVIL}/x`, ORIGIN)).toBe("/login");
  });
});
