import { describe, expect, it } from "vitest";
import type { JsonRecord } from "../types.js";
import { effectReceiptFacts } from "./receipt-facts.js";

/** A `provider.mutate` output for `operation` with the provider's `result`. */
function mutated(operation: string, data: JsonRecord = {}): JsonRecord {
  return {
    provider_operation: {
      data: {
        provider: "fixture",
        operation,
        target: "payer:demo",
        access: "mutate",
        status: "success",
        result: { effect_id: "fx_000001", status: "applied" },
        replayed: false,
        ...data,
      },
    },
  };
}

const movedOf = (output: JsonRecord): unknown =>
  (effectReceiptFacts(output).effect as JsonRecord | undefined)?.money_moved;

describe("effectReceiptFacts", () => {
  it("records money_moved false for a payment the provider did not report moving money", () => {
    expect(movedOf(mutated("payment.charge.mock"))).toBe(false);
    expect(movedOf(mutated("payment.refund.mock"))).toBe(false);
  });

  it("records money_moved true only when the provider answered with success and says so", () => {
    const moved = { result: { effect_id: "fx_1", money_moved: true } };
    expect(movedOf(mutated("payment.charge.card", moved))).toBe(true);
    expect(movedOf(mutated("payment.charge.card", { ...moved, status: "failure" }))).toBe(false);
  });

  it("ignores a payload echo that claims money moved", () => {
    const echoed = { result: { status: "applied", payload: { money_moved: true } } };
    expect(movedOf(mutated("payment.charge.mock", echoed))).toBe(false);
  });

  it("states nothing about money for an operation that is no payment", () => {
    expect(effectReceiptFacts(mutated("record.create")).effect).not.toHaveProperty("money_moved");
  });
});
