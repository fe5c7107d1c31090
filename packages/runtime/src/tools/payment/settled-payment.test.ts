import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../../errors.js";
import { buildSkillReceipt, localDevelopmentSigner, sealReceipt } from "../../receipts/index.js";
import type { JsonRecord } from "../types.js";
import { paymentProof } from "./refund-proof.js";
import {
  admitPaymentEffect,
  settledPaymentFacts,
  type PaymentEffectRequest,
  type SettledPaymentFacts,
} from "./settled-payment.js";

const CHARGE_ID = `sha256:${"c".repeat(64)}`;
const GATE = `provider-effect:sha256:${"a".repeat(64)}`;

/** A `provider.mutate` step's admitted input and its output, as the graph step sees them. */
function mutation(operation: string, payload: JsonRecord, data: JsonRecord = {}) {
  const input: JsonRecord = {
    expected_provider: "fixture",
    operation,
    target: "payer:demo",
    idempotency_key: "charge:1",
    amount: { units: 1000, unit: "USD" },
    approval: { reason: "once", type: "payment_charge" },
    input: payload,
  };
  const output: JsonRecord = {
    provider_operation: {
      data: {
        provider: "fixture",
        operation,
        target: "payer:demo",
        access: "mutate",
        idempotency_key: "charge:1",
        operation_id: "fx_000001",
        status: "success",
        amount: { units: 1000, unit: "USD" },
        approval: { gate_id: GATE, gate_type: "payment_charge", approved: true },
        result: { effect_id: "fx_000001", status: "applied" },
        replayed: false,
        ...data,
      },
    },
  };
  return { input, output };
}

/** A sealed step receipt carrying `facts`, as `run/step-receipt.ts` builds it. */
function sealedWith(facts: SettledPaymentFacts) {
  return sealReceipt(
    buildSkillReceipt({
      name: "charge-mock",
      step: "settle",
      createdAt: "2026-01-01T00:00:00Z",
      disposition: "closed",
      reasonCode: "process_closed",
      ...facts,
    }),
    localDevelopmentSigner(),
  );
}

describe("settledPaymentFacts", () => {
  it("records a charge as a commit term of exactly its amount, rail, realm and payer, read back by the refund proof", () => {
    const { input, output } = mutation("payment.charge.mock", {
      settlement_family: "mock",
      realm: "test",
    });
    const facts = settledPaymentFacts(input, output);
    expect(facts?.sourceRefs).toEqual([]);
    const proof = paymentProof(sealedWith(facts!), "commit");
    expect(proof).toMatchObject({
      rail: "mock",
      operation: "charge",
      amount_minor: 1000,
      currency: "USD",
      counterparty: "payer:demo",
      realm: "test",
      proof_ref: "runx:provider_effect:fixture:fx_000001",
      idempotency_key: "charge:1",
    });
    expect(proof.money_movement_id).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records a refund as a reverse term linked to its original charge receipt", () => {
    const { input, output } = mutation(
      "payment.refund.mock",
      { settlement_family: "mock", original_receipt_ref: CHARGE_ID },
      { amount: { units: 600, unit: "USD" } },
    );
    const facts = settledPaymentFacts(input, output)!;
    expect(facts.sourceRefs).toEqual([
      { type: "receipt", uri: `runx:receipt:${CHARGE_ID}`, label: "original charge receipt" },
    ]);
    const receipt = sealedWith(facts);
    expect(paymentProof(receipt, "reverse")).toMatchObject({
      operation: "refund",
      amount_minor: 600,
    });
    expect(receipt.authority.grant_refs).toEqual(facts.grantRefs);
  });

  it("gives the same effect the same money movement and another key another one", () => {
    const payload = { settlement_family: "mock" };
    const one = mutation("payment.charge.mock", payload);
    const other = mutation("payment.charge.mock", payload, { idempotency_key: "charge:2" });
    const movement = (f: SettledPaymentFacts | undefined) => f?.verificationRefs[1]?.uri;
    expect(movement(settledPaymentFacts(one.input, one.output))).toBe(
      movement(settledPaymentFacts(one.input, one.output)),
    );
    expect(movement(settledPaymentFacts(other.input, other.output))).not.toBe(
      movement(settledPaymentFacts(one.input, one.output)),
    );
  });

  it.each([
    ["a replay of an earlier effect", { replayed: true }],
    ["a failed provider call", { status: "failure", failure: { code: "PROVIDER_FAILED" } }],
    ["an unapproved mutation", { approval: { gate_id: GATE, approved: false } }],
    ["a mutation with no approval", { approval: null }],
    ["a read", { access: "read" }],
    ["another provider operation", { operation: "record.create" }],
  ] as Array<[string, JsonRecord]>)("records no settlement for %s", (_name, data) => {
    const { input, output } = mutation("payment.charge.mock", { settlement_family: "mock" }, data);
    expect(settledPaymentFacts(input, output)).toBeUndefined();
  });
});

function refusal(request: PaymentEffectRequest): [unknown, unknown] {
  try {
    admitPaymentEffect(request);
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return [error.code, error.details.path];
  }
  return ["admitted", null];
}

describe("admitPaymentEffect", () => {
  const charge: PaymentEffectRequest = {
    operation: "payment.charge.mock",
    payload: { settlement_family: "mock", realm: "test" },
    amount: { units: 1000, unit: "USD" },
    approvalRequested: true,
  };
  const refund: PaymentEffectRequest = {
    ...charge,
    operation: "payment.refund.mock",
    payload: { settlement_family: "mock", original_receipt_ref: CHARGE_ID },
  };

  it("admits a charge and a refund its receipt can prove, and leaves other operations, upstream's rail-named ones included, alone", () => {
    expect(refusal(charge)).toEqual(["admitted", null]);
    expect(refusal(refund)).toEqual(["admitted", null]);
    for (const operation of ["record.create", "payment.charge", "payment.x402"]) {
      expect(refusal({ operation, payload: {}, approvalRequested: false })).toEqual([
        "admitted",
        null,
      ]);
    }
  });

  it.each<[string, PaymentEffectRequest, string]>([
    ["no amount", { ...charge, amount: undefined }, "amount"],
    ["a fractional amount", { ...charge, amount: { units: 1.5, unit: "USD" } }, "amount"],
    ["a unit that is no currency", { ...charge, amount: { units: 5, unit: "usd" } }, "amount.unit"],
    ["no approval", { ...charge, approvalRequested: false }, "approval"],
    [
      "another settlement family than the rail",
      { ...charge, payload: { settlement_family: "stripe" } },
      "input.settlement_family",
    ],
    [
      "a caller claim that money moved",
      { ...charge, payload: { settlement_family: "mock", money_moved: false } },
      "input.money_moved",
    ],
    [
      "a refund naming no charge receipt",
      { ...refund, payload: { settlement_family: "mock" } },
      "input.original_receipt_ref",
    ],
  ])("refuses %s before anything happens", (_name, request, path) => {
    expect(refusal(request)).toEqual(["POLICY_DENIED", path]);
  });
});
