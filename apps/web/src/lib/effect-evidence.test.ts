import { describe, expect, it } from "vitest";
import { evidenceToShow } from "./effect-evidence";

const evidence = [
  { path: "provider", label: "Provider", value: "x402" },
  { path: "operation", label: "Operation", value: "search.paid" },
  { path: "target", label: "Target", value: "merchant:demo" },
  { path: "amount", label: "Amount", value: "$1.25 (125 USD)" },
  { path: "idempotency_key", label: "Idempotency key", value: "payment:1" },
  { path: "plan_digest", label: "Plan digest", value: "sha256:p" },
];

describe("evidenceToShow", () => {
  it("names once what the payload and the amount line already show", () => {
    const { lines, shownAbove } = evidenceToShow(
      evidence,
      [{ value: "merchant:demo" }, { value: "search.paid" }, { value: "payment:1" }],
      true,
    );
    expect(lines.map((l) => l.label)).toEqual(["Provider", "Plan digest"]);
    expect(shownAbove.map((l) => l.label)).toEqual([
      "Operation",
      "Target",
      "Amount",
      "Idempotency key",
    ]);
  });

  it("shows every line when the payload shares none and no amount heads the card", () => {
    const { lines, shownAbove } = evidenceToShow(evidence, [{ value: "hello" }], false);
    expect(lines).toEqual(evidence);
    expect(shownAbove).toEqual([]);
  });
});
