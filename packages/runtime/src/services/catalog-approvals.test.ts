/** The catalog lists the approvals a bundled payment skill pauses on, before any run. */
import { afterEach, describe, expect, it } from "vitest";
import { EFFECT_FACT_LABELS } from "../console/effect-facts.js";
import { createRuntime } from "../create-runtime.js";
import { makeWorkspace } from "../testing/cli.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

describe("catalog approvals", () => {
  it("shows the payment gates of the spend, charge and refund skills", async () => {
    const ws = makeWorkspace("runx-catalog-approvals-");
    ws.addBundledSkill("spend");
    ws.addBundledSkill("charge");
    ws.addBundledSkill("refund");
    ws.addBundledSkill("echo");
    const runtime = createRuntime({ workspaceRoot: ws.root, runxHome: ws.home, env: {} });
    cleanups.push(() => {
      runtime.close();
      ws.cleanup();
    });
    const hits = await runtime.catalog.search({ query: "" });
    const approvals = (name: string) =>
      hits.find((h) => h.name === name)?.runners.flatMap((r) => r.approvals);
    expect(approvals("spend")).toEqual([
      {
        step_id: "pay",
        kind: "payment_spend",
        headline: "an x402 payment for the resource_url input, at the price the resource quotes",
        gate_type: "payment_spend",
        shows: ["Amount", "Resource", "Payee", "Operation", "Payment ref", "Idempotency key"],
      },
    ]);
    expect(approvals("charge")).toMatchObject([
      { step_id: "settle", kind: "provider_effect", gate_type: expect.any(String) },
    ]);
    expect(approvals("charge")?.[0]?.headline).toContain("payment.charge.mock");
    expect(approvals("refund")).toEqual([
      {
        step_id: "refund",
        kind: "provider_effect",
        headline: "payment.refund.mock on a value from step admit at fixture",
        gate_type: "payment_refund",
        shows: [
          ...EFFECT_FACT_LABELS,
          "Provider grant",
          "Grant held by",
          "Payload: Plan digest",
          "Payload: Original receipt ref",
          "Payload: Refundable after minor",
          "Payload: Realm",
          "Payload: Settlement family",
        ],
      },
    ]);
    expect(approvals("echo")).toEqual([]);
  });
});
