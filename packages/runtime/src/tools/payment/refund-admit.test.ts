/**
 * payment.refund_admit against a real receipt store: it admits only what the verified receipts
 * leave refundable and refuses, with a stable reason, every refund the plan blocks, a plan that
 * drifted, and a refund already made under the same seed.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateToolsPaymentRefundAdmitOutput } from "../../generated/validate-tools-payment-refund-admit.output.js";
import { paymentRefundPlanTool } from "./refund-plan.js";
import {
  makeTestReceiptStore,
  paymentReceipt,
  refundParentAuthority,
  type TestReceiptStore,
} from "../../testing/payment-receipts.test-kit.js";
import { failureCode, makeToolContext, successData } from "../../testing/tool-context.js";
import type { JsonRecord, ToolResult } from "../types.js";
import { paymentRefundAdmitTool, refundIntentKey } from "./refund-admit.js";

let stores: TestReceiptStore[] = [];
afterEach(() => {
  for (const s of stores) s.cleanup();
  stores = [];
});

const charge = paymentReceipt({ step: "charge", verb: "commit", operation: "charge", amount: 125 });
const prior = paymentReceipt({
  step: "prior-refund",
  verb: "reverse",
  operation: "refund",
  amount: 25,
  links: charge.id,
  intentKey: refundIntentKey(charge.id, "ticket-1"),
});

function request(amount: number, overrides: JsonRecord = {}): JsonRecord {
  return {
    original_receipt_ref: charge.id,
    refund_request: { amount_minor: amount, reason: "operator_refund" },
    settlement_family: "mock",
    parent_payment_authority: refundParentAuthority(),
    ...overrides,
  };
}

async function storeWith(...receipts: ReturnType<typeof paymentReceipt>[]) {
  const s = makeTestReceiptStore();
  stores.push(s);
  await s.add(...receipts);
  const ctx = () =>
    makeToolContext({ workspaceRoot: "/nonexistent-workspace", receipts: s.lookup });
  /** Plans like the skill's plan step, then admits with the plan's digest. */
  const admit = async (input: JsonRecord, seed = "ticket-2"): Promise<ToolResult> => {
    const plan = successData(await paymentRefundPlanTool.execute(input, ctx()));
    return paymentRefundAdmitTool.execute(
      { ...input, plan_digest: plan.plan_digest as string, idempotency_seed: seed },
      ctx(),
    );
  };
  return { ...s, admit, ctx };
}

const reasonOf = (result: ToolResult): unknown =>
  result.status === "failure" ? (result.output?.details as JsonRecord | undefined)?.reason : null;

describe("payment.refund_admit", () => {
  it("admits the remaining refundable amount with a key bound to the charge and the seed", async () => {
    const { admit } = await storeWith(charge, prior);
    const result = await admit(request(100));
    const data = successData(result);
    expect(validateToolsPaymentRefundAdmitOutput(data)).toBe(true);
    const intent = refundIntentKey(charge.id, "ticket-2");
    expect(data).toMatchObject({
      decision: "admitted",
      original_receipt_ref: charge.id,
      target: "payer:demo",
      amount: { units: 100, unit: "USD" },
      refundable_after_minor: 0,
      intent_key: intent,
      idempotency_key: `refund:${intent.slice("sha256:".length)}`,
      refund_history_receipt_refs: [prior.id],
      money_moved: false,
    });
  });

  it.each([
    ["over the refundable remainder", request(101), "refund_over_remaining"],
    [
      "an authority in another currency",
      request(50, { parent_payment_authority: refundParentAuthority({ unit: "EUR" }) }),
      "currency_mismatch",
    ],
    [
      "another payer",
      request(50, {
        refund_request: {
          amount_minor: 50,
          reason: "operator_refund",
          requested_counterparty: "payer:other",
        },
      }),
      "counterparty_mismatch",
    ],
    ["another rail", request(50, { settlement_family: "stripe" }), "rail_mismatch"],
    ["a zero amount", request(0), "refund_request_invalid"],
  ])("refuses %s", async (_label, input, reason) => {
    const { admit } = await storeWith(charge, prior);
    const result = await admit(input);
    expect(failureCode(result)).toBe("POLICY_DENIED");
    expect(reasonOf(result)).toBe(reason);
  });

  it("refuses a refund already made under the same seed, whatever its amount", async () => {
    const { admit } = await storeWith(charge, prior);
    const result = await admit(request(10), "ticket-1");
    expect(failureCode(result)).toBe("POLICY_DENIED");
    expect(reasonOf(result)).toBe("duplicate_refund");
  });

  it("refuses a plan whose refund history moved after it was built", async () => {
    const s = await storeWith(charge);
    const plan = successData(await paymentRefundPlanTool.execute(request(100), s.ctx()));
    expect((plan.original_charge as JsonRecord).refunded_minor).toBe(0);
    await s.add(prior);
    const result = await paymentRefundAdmitTool.execute(
      { ...request(100), plan_digest: plan.plan_digest as string, idempotency_seed: "ticket-2" },
      s.ctx(),
    );
    expect(failureCode(result)).toBe("POLICY_DENIED");
    expect(reasonOf(result)).toBe("plan_drift");
  });

  it("fails on a tampered prior refund instead of trusting its amount", async () => {
    const s = await storeWith(charge, prior);
    s.tamper(prior.id, (text) => text.replace('"max_per_call_units":25', '"max_per_call_units":1'));
    const result = await paymentRefundAdmitTool.execute(
      { ...request(100), plan_digest: `sha256:${"0".repeat(64)}`, idempotency_seed: "ticket-2" },
      s.ctx(),
    );
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
  });
});

describe("the refund skill's seeded receipts", () => {
  it("are the test helper's charge and prior refund, so they can be rebuilt from it", () => {
    const dir = join(import.meta.dirname, "../../../../../skills/refund/fixtures/receipts");
    const id = (file: string) =>
      (JSON.parse(readFileSync(join(dir, file), "utf8")) as { id: string }).id;
    const skillPrior = paymentReceipt({
      step: "prior-refund",
      verb: "reverse",
      operation: "refund",
      amount: 25,
      links: charge.id,
      intentKey: refundIntentKey(charge.id, "refund-ticket-0001"),
    });
    expect(id("charge-125-usd.json")).toBe(charge.id);
    expect(id("refund-25-ticket-0001.json")).toBe(skillPrior.id);
  });
});
