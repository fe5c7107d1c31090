import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localDevelopmentPolicy, ReceiptStore } from "../receipts/index.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { paymentReceipt } from "../testing/payment-receipts.test-kit.js";

// A live `runx skill` run: payment.refund_plan reads the workspace's own receipt store
// (.runx/receipts) through the tool context, verified under the run's signature policy.
const PACKAGE = `skill: refund-live
runners:
  plan:
    default: true
    type: graph
    inputs:
      original_receipt_ref: {type: string, required: true, description: Charge receipt id.}
      amount_minor: {type: number, required: true, description: Refund amount.}
    graph:
      name: refund-live-plan
      result_from: [prepare]
      steps:
        - id: prepare
          tool: payment.refund_plan
          inputs:
            original_receipt_ref: $input.original_receipt_ref
            refund_request:
              amount_minor: $input.amount_minor
              reason: operator_refund
              requested_counterparty: payer:demo
            settlement_family: mock
            parent_payment_authority:
              term_id: refund-parent
              principal_ref: {type: principal, uri: "runx:principal:operator"}
              resource_ref: {type: target, uri: "payer:demo"}
              resource_family: effect
              verbs: [reverse]
              bounds:
                effect_limits:
                  - family: payment
                    unit: USD
                    max_per_call_units: 125
                    max_per_run_units: 125
                    channels: [mock]
                    realm: test
                    peer: "payer:demo"
                    operation: refund
                    authorization_form: single_use_capability
                    idempotency_required: true
                    recovery_required: true
                    receipt_before_success: true
                    single_use_capability: true
              conditions: []
              approvals: []
              capabilities: [effect_single_use_capability]
              issued_by_ref: {type: grant, uri: "runx:grant:payment"}
`;

const charge = paymentReceipt({ step: "charge", verb: "commit", operation: "charge", amount: 125 });
const prior = paymentReceipt({
  step: "prior-refund",
  verb: "reverse",
  operation: "refund",
  amount: 40,
  links: charge.id,
});

let ws: Workspace;
beforeEach(async () => {
  ws = makeWorkspace("runx-refund-plan-");
  ws.write("skills/refund-live/SKILL.md", "---\nname: refund-live\n---\nPlan a refund.\n");
  ws.write("skills/refund-live/X.yaml", PACKAGE);
  const store = new ReceiptStore({
    dir: join(ws.root, ".runx", "receipts"),
    policy: localDevelopmentPolicy(),
  });
  await store.writeAll([charge, prior]);
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  result: { refund_plan: { data: Record<string, unknown> } } | null;
}

async function plan(ref: string, amount: number) {
  return runx(ws, [
    "skill",
    "skills/refund-live",
    "--original_receipt_ref",
    ref,
    "--amount_minor",
    String(amount),
    "--json",
  ]);
}

describe("payment.refund_plan in a live run", () => {
  it("plans against the verified receipts in the workspace store", async () => {
    const r = await plan(charge.id, 85);
    expect(r.code).toBe(0);
    const data = r.json<Envelope>().result?.refund_plan.data;
    expect(data?.decision).toBe("ready_for_refund_adapter");
    expect(data?.refundable_bounds).toEqual({ remaining_minor: 85, currency: "USD" });
    expect(data?.original_charge).toMatchObject({ refunded_minor: 40 });
  });

  it("blocks a refund above what the stored receipts leave refundable", async () => {
    const r = await plan(charge.id, 86);
    expect(r.code).toBe(0);
    const data = r.json<Envelope>().result?.refund_plan.data;
    expect(data?.decision).toBe("blocked");
    expect(data?.findings).toEqual([expect.objectContaining({ code: "refund.over_limit" })]);
  });

  it("fails the run for a charge receipt the store does not hold", async () => {
    const r = await plan(`sha256:${"0".repeat(64)}`, 10);
    expect(r.code).not.toBe(0);
    const envelope = r.json<{ outcome: string; closure: { summary: string } }>();
    expect(envelope.outcome).toBe("failed");
    expect(envelope.closure.summary).toContain("RECEIPT_NOT_FOUND");
  });
});
