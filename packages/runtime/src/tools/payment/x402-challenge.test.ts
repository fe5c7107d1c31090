import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { createFileEffectLedger, createMemoryEffectLedger } from "../effect-ledger.js";
import type { JsonRecord } from "../types.js";
import { admitX402Challenge } from "./x402-challenge.js";

const URL = "https://paid.example.test/search";
const requirement = (over: JsonRecord = {}): JsonRecord => ({
  scheme: "exact",
  network: "runx-local",
  maxAmountRequired: "125",
  asset: "USD",
  payTo: "merchant:demo",
  resource: URL,
  extra: { operation: "search.paid", settlement_proof: "x-payment-response" },
  ...over,
});

function refusal(task: () => unknown): string {
  try {
    task();
  } catch (error) {
    if (isRuntimeError(error) && error.code === "POLICY_DENIED")
      return String(error.details.reason);
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("admitX402Challenge", () => {
  it("admits one exact requirement and derives the payment signal and a stable digest", () => {
    const a = admitX402Challenge({ x402Version: 1, accepts: [requirement()] }, URL, "test");
    const b = admitX402Challenge({ x402Version: 1, accepts: [requirement()] }, URL, "test");
    expect(a.payment_signal).toMatchObject({
      amount_minor: 125,
      currency: "USD",
      rail: "x402",
      counterparty: "merchant:demo",
      operation: "search.paid",
      realm: "test",
    });
    expect(a.requirement_digest).toBe(b.requirement_digest);
    const other = admitX402Challenge(
      { x402Version: 1, accepts: [requirement({ maxAmountRequired: "126" })] },
      URL,
    );
    expect(other.requirement_digest).not.toBe(a.requirement_digest);
  });

  it.each([
    ["a wrong version", { x402Version: 2, accepts: [requirement()] }, "challenge_malformed"],
    ["no requirements", { x402Version: 1, accepts: [] }, "challenge_malformed"],
    [
      "a fractional amount",
      { x402Version: 1, accepts: [requirement({ maxAmountRequired: "1.25" })] },
      "challenge_malformed",
    ],
    [
      "a lowercase asset",
      { x402Version: 1, accepts: [requirement({ asset: "usd" })] },
      "challenge_malformed",
    ],
    [
      "another resource",
      { x402Version: 1, accepts: [requirement({ resource: "https://elsewhere.test/x" })] },
      "challenge_malformed",
    ],
    [
      "two payable prices",
      { x402Version: 1, accepts: [requirement(), requirement({ maxAmountRequired: "99" })] },
      "bounds_ambiguous",
    ],
    [
      "no settlement proof",
      { x402Version: 1, accepts: [requirement({ extra: { operation: "search.paid" } })] },
      "rail_without_proof",
    ],
  ] as Array<[string, JsonRecord, string]>)("refuses %s", (_, body, reason) => {
    expect(refusal(() => admitX402Challenge(body, URL))).toBe(reason);
  });
});

describe("effect ledger claims", () => {
  it("lets exactly one of two file ledgers on one file claim a key", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "runx-claim-")), "provider-effects.json");
    const [a, b] = [createFileEffectLedger(file), createFileEffectLedger(file)];
    const results = await Promise.all([a.claim?.("k", "d1"), b.claim?.("k", "d1")]);
    expect(results.sort()).toEqual(["claimed", "held"]);
    await expect(a.claim?.("k", "d2")).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
  });

  it("claims in memory with the same rules", async () => {
    const ledger = createMemoryEffectLedger();
    expect(await ledger.claim?.("k", "d1")).toBe("claimed");
    expect(await ledger.claim?.("k", "d1")).toBe("held");
    await expect(ledger.claim?.("k", "d2")).rejects.toMatchObject({ code: "IDEMPOTENCY_CONFLICT" });
  });
});
