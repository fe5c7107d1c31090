import { afterEach, describe, expect, it } from "vitest";
import { validateToolsPaymentRefundPlanOutput } from "../../generated/validate-tools-payment-refund-plan.output.js";
import { paymentRefundPlanTool } from "./refund-plan.js";
import {
  makeTestReceiptStore,
  paymentReceipt,
  refundParentAuthority,
  type PaymentReceiptSpec,
  type TestReceiptStore,
} from "../../testing/payment-receipts.test-kit.js";
import {
  failureCode,
  makeToolContext,
  successData,
  successOutput,
} from "../../testing/tool-context.js";
import type { JsonRecord, ToolResult } from "../types.js";
import {
  ed25519Signer,
  generateEd25519Seed,
  productionPolicy,
  ReceiptStore,
} from "../../receipts/index.js";
import { verifiedReceiptLookup } from "../../receipts/lookup.js";

const successOrFailureOutput = (result: ToolResult): JsonRecord =>
  (result.status === "success" || result.status === "failure" ? result.output : undefined) ?? {};

let stores: TestReceiptStore[] = [];
afterEach(() => {
  for (const s of stores) s.cleanup();
  stores = [];
});

/** A store holding `receipts`, and a function that runs the tool against it. */
async function storeWith(...receipts: ReturnType<typeof paymentReceipt>[]) {
  const s = makeTestReceiptStore();
  stores.push(s);
  await s.add(...receipts);
  const plan = (input: JsonRecord): Promise<ToolResult> =>
    paymentRefundPlanTool.execute(
      input,
      makeToolContext({ workspaceRoot: "/nonexistent-workspace", receipts: s.lookup }),
    );
  return { ...s, plan };
}

const chargeSpec: PaymentReceiptSpec = {
  step: "charge",
  verb: "commit",
  operation: "charge",
  amount: 125,
};
const charge = paymentReceipt(chargeSpec);
const priorRefund = paymentReceipt({
  step: "prior-refund",
  verb: "reverse",
  operation: "refund",
  amount: 25,
  links: charge.id,
});

function request(amount: number, overrides: JsonRecord = {}): JsonRecord {
  return {
    original_receipt_ref: charge.id,
    refund_request: {
      amount_minor: amount,
      reason: "operator_refund",
      requested_counterparty: "payer:demo",
    },
    settlement_family: "mock",
    parent_payment_authority: refundParentAuthority(),
    ...overrides,
  };
}

const codes = (data: JsonRecord): string[] =>
  (data.findings as JsonRecord[]).map((f) => f.code as string);

describe("payment.refund_plan", () => {
  it("plans the remaining refundable amount from the verified charge and prior refund", async () => {
    const { plan } = await storeWith(charge, priorRefund);
    const result = await plan(request(100));
    const output = successOutput(result);
    expect(validateToolsPaymentRefundPlanOutput(successData(result))).toBe(true);
    expect(Object.keys(output)).toEqual(["refund_plan"]);
    expect(Object.keys(output.refund_plan as JsonRecord)).toEqual(["data"]);
    const data = successData(result);
    expect(data.decision).toBe("ready_for_refund_adapter");
    expect(data.findings).toEqual([]);
    expect(data.original_charge).toMatchObject({
      receipt_ref: charge.id,
      amount_minor: 125,
      refunded_minor: 25,
      currency: "USD",
      settlement_family: "mock",
      payer_ref: "payer:demo",
      money_movement_id: "charge",
      proof_ref: "proof:charge",
      refund_history_receipt_refs: [priorRefund.id],
    });
    expect(data.refundable_bounds).toEqual({ remaining_minor: 100, currency: "USD" });
    const key = (data.idempotency as JsonRecord).key;
    expect(data.adapter_handoff).toEqual({
      settlement_family: "mock",
      original_receipt_ref: charge.id,
      original_money_movement_id: "charge",
      original_proof_ref: "proof:charge",
      amount_minor: 100,
      currency: "USD",
      counterparty: "payer:demo",
      idempotency_key: key,
      authority_term_id: "refund-parent",
    });
    expect(data).toMatchObject({
      provider_status: "not_called",
      refund_status: "not_started",
      money_moved: false,
    });
    // The idempotency key is stable for the same request and binds the amount.
    expect((successData(await plan(request(100))).idempotency as JsonRecord).key).toBe(key);
    expect((successData(await plan(request(99))).idempotency as JsonRecord).key).not.toBe(key);
  });

  it("blocks a refund above the remaining amount after verified prior refunds", async () => {
    const { plan } = await storeWith(charge, priorRefund);
    const data = successData(await plan(request(101)));
    expect(validateToolsPaymentRefundPlanOutput(data)).toBe(true);
    expect(data.decision).toBe("blocked");
    expect(codes(data)).toEqual(["refund.over_limit"]);
    expect(data.adapter_handoff).toBeNull();
    expect(data.refundable_bounds).toEqual({ remaining_minor: 100, currency: "USD" });
    expect(data.money_moved).toBe(false);
  });

  it("allows the full charge when no refund receipt links it", async () => {
    const { plan } = await storeWith(charge);
    const data = successData(await plan(request(125)));
    expect(data.decision).toBe("ready_for_refund_adapter");
    expect((data.original_charge as JsonRecord).refunded_minor).toBe(0);
    expect(data.refundable_bounds).toEqual({ remaining_minor: 125, currency: "USD" });
  });

  it("refuses a tampered prior refund receipt instead of trusting its amount", async () => {
    const s = await storeWith(charge, priorRefund);
    s.tamper(priorRefund.id, (text) =>
      text.replace('"max_per_call_units":25', '"max_per_call_units":1'),
    );
    const result = await s.plan(request(100));
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
    expect(result.status === "failure" && result.output?.details).toMatchObject({
      receipt_id: priorRefund.id,
    });
  });

  it("refuses a tampered charge receipt", async () => {
    const s = await storeWith(charge, priorRefund);
    s.tamper(charge.id, (text) =>
      text.replace('"max_per_call_units":125', '"max_per_call_units":1250'),
    );
    expect(failureCode(await s.plan(request(100)))).toBe("RECEIPT_INVALID");
  });

  it("refuses a forged charge receipt signed by a key the run does not trust, naming it", async () => {
    const trusted = ed25519Signer({
      kid: "runx-key",
      issuerType: "hosted",
      seed: generateEd25519Seed(),
    });
    const forger = ed25519Signer({
      kid: "runx-key",
      issuerType: "hosted",
      seed: generateEd25519Seed(),
    });
    const forged = paymentReceipt({ ...chargeSpec, amount: 100_000 }, forger);
    const s = makeTestReceiptStore(productionPolicy(forger.verifier));
    stores.push(s);
    await s.add(forged);
    const strict = verifiedReceiptLookup(
      () => new ReceiptStore({ dir: s.store.dir, policy: productionPolicy(trusted.verifier) }),
    );
    const result = await paymentRefundPlanTool.execute(
      request(100, { original_receipt_ref: forged.id }),
      makeToolContext({ workspaceRoot: "/nonexistent-workspace", receipts: strict }),
    );
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
    const details = (successOrFailureOutput(result).details ?? {}) as JsonRecord;
    expect(details.receipt_id).toBe(forged.id);
    expect((details.findings as JsonRecord[]).map((f) => f.code)).toEqual([
      "signature_key_hash_mismatch",
    ]);
  });

  it("refuses a charge receipt id that is not in the store", async () => {
    const { plan } = await storeWith(priorRefund);
    expect(failureCode(await plan(request(100)))).toBe("RECEIPT_NOT_FOUND");
    const opaque = await plan(request(100, { original_receipt_ref: "receipt:charge:demo-001" }));
    expect(failureCode(opaque)).toBe("RECEIPT_NOT_FOUND");
  });

  it("does not count a refund of a different charge", async () => {
    const other = paymentReceipt({ ...chargeSpec, step: "other-charge" });
    const otherRefund = paymentReceipt({
      step: "other-refund",
      verb: "reverse",
      operation: "refund",
      amount: 60,
      links: other.id,
    });
    const { plan } = await storeWith(charge, priorRefund, other, otherRefund);
    const mine = successData(await plan(request(100)));
    expect((mine.original_charge as JsonRecord).refunded_minor).toBe(25);
    expect((mine.original_charge as JsonRecord).refund_history_receipt_refs).toEqual([
      priorRefund.id,
    ]);
    const theirs = successData(await plan(request(100, { original_receipt_ref: other.id })));
    expect(theirs.decision).toBe("blocked");
    expect(codes(theirs)).toEqual(["refund.over_limit"]);
    expect(theirs.refundable_bounds).toEqual({ remaining_minor: 65, currency: "USD" });
  });

  it("refuses a refund receipt linked to the charge for another payer", async () => {
    const stray = paymentReceipt({
      step: "stray-refund",
      verb: "reverse",
      operation: "refund",
      amount: 10,
      payer: "payer:someone-else",
      links: charge.id,
    });
    const { plan } = await storeWith(charge, stray);
    expect(failureCode(await plan(request(100)))).toBe("RECEIPT_INVALID");
  });

  it("refuses a refund receipt as the original charge", async () => {
    const { plan } = await storeWith(charge, priorRefund);
    const result = await plan(request(10, { original_receipt_ref: priorRefund.id }));
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
  });

  it("refuses a charge receipt that did not close", async () => {
    const failed = paymentReceipt({ ...chargeSpec, step: "failed-charge", disposition: "failed" });
    const { plan } = await storeWith(failed);
    const result = await plan(request(10, { original_receipt_ref: failed.id }));
    expect(failureCode(result)).toBe("RECEIPT_INVALID");
  });

  it("blocks an authority that does not bound this refund", async () => {
    const { plan } = await storeWith(charge, priorRefund);
    const cases: JsonRecord[] = [
      refundParentAuthority({ peer: "payer:other" }),
      refundParentAuthority({ channels: ["stripe"] }),
      refundParentAuthority({ unit: "EUR" }),
      refundParentAuthority({ operation: "charge" }),
      refundParentAuthority({ max_per_call_units: 50 }),
      refundParentAuthority({ single_use_capability: false }),
      refundParentAuthority({ realm: "live" }),
      refundParentAuthority({}, { verbs: ["commit"] }),
      refundParentAuthority({}, { expires_at: "2025-12-31T00:00:00Z" }),
    ];
    for (const parent of cases) {
      const data = successData(await plan(request(100, { parent_payment_authority: parent })));
      expect(data.decision).toBe("blocked");
      expect(codes(data)).toEqual(["refund.authority"]);
      expect(data.adapter_handoff).toBeNull();
    }
  });

  it("blocks a wrong settlement family, payer, empty amount or extra request field", async () => {
    const { plan } = await storeWith(charge, priorRefund);
    const family = successData(
      await plan(
        request(100, {
          settlement_family: "stripe",
          parent_payment_authority: refundParentAuthority({ channels: ["mock", "stripe"] }),
        }),
      ),
    );
    expect(codes(family)).toEqual(["refund.family"]);
    const payer = successData(
      await plan(
        request(100, {
          refund_request: {
            amount_minor: 100,
            reason: "operator_refund",
            requested_counterparty: "payer:other",
          },
        }),
      ),
    );
    expect(codes(payer)).toEqual(["refund.counterparty_mismatch"]);
    const empty = successData(await plan(request(0)));
    expect(codes(empty)).toEqual(["refund.empty"]);
    const extra = successData(
      await plan(
        request(10, {
          refund_request: { amount_minor: 10, reason: "operator_refund", refunded_minor: 0 },
        }),
      ),
    );
    expect(codes(extra)).toEqual(["refund_request.raw_fields"]);
  });

  it("refuses input outside its contract before reading any receipt", async () => {
    const { plan } = await storeWith(charge);
    const bad = await plan({ ...request(10), original_receipt: { id: charge.id } });
    expect(failureCode(bad)).toBe("INPUT_INVALID");
    const negative = await plan(request(-1));
    expect(failureCode(negative)).toBe("INPUT_INVALID");
  });
});
