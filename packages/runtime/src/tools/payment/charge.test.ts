import { describe, expect, it } from "vitest";
import {
  paymentChargeChallengeTool,
  paymentChargePlanTool,
  paymentChargePriceTool,
  paymentChargeVerificationRequestTool,
} from "./charge.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";
import type { JsonRecord, NativeTool } from "../types.js";

// The test clock is 2026-01-01T00:00:00Z.
const ctx = () => makeToolContext({ workspaceRoot: "/nonexistent-workspace" });

const call = { tool: "search.paid", arguments: { query: "runx" } };
const policy = {
  policy_ref: "policy:provider-demo",
  price_minor: 125,
  currency: "USD",
  accepted_settlement_families: ["mock", "stripe"],
  counterparty: "provider:demo",
  realm: "test",
};

async function data(tool: NativeTool, input: JsonRecord, key: string): Promise<JsonRecord> {
  const out = successOutput(await tool.execute(input, ctx()));
  return (out[key] as { data: JsonRecord }).data;
}

async function chain(overrides: { policy?: JsonRecord; seed?: string } = {}) {
  const price = await data(
    paymentChargePriceTool,
    { mcp_tool_call: call, provider_policy: { ...policy, ...overrides.policy } },
    "charge_price_packet",
  );
  const challenge = await data(
    paymentChargeChallengeTool,
    { charge_price_packet: price, idempotency_seed: overrides.seed ?? "paid-search-001" },
    "charge_challenge_packet",
  );
  const verifyInput = {
    charge_price_packet: price,
    charge_challenge_packet: challenge,
    returned_credential: { family: "mock", credential_ref: "credential:mock:paid-search-001" },
    verify_capability_ref: "capability:charge-verify:paid-search-001",
    settlement_family: "mock",
    idempotency: challenge.idempotency as JsonRecord,
  };
  const request = await data(
    paymentChargeVerificationRequestTool,
    verifyInput,
    "charge_verification_request",
  );
  return { price, challenge, request, verifyInput };
}

describe("payment.charge_* (seller-side charge planning)", () => {
  it("prices, challenges, prepares the verifier request and plans without calling anything", async () => {
    const { price, challenge, request } = await chain();
    expect(price).toMatchObject({
      operation: "search.paid",
      amount_minor: 125,
      currency: "USD",
      counterparty: "provider:demo",
      accepted_settlement_families: ["mock", "stripe"],
      expires_at: null,
      requested_authority: { effect_limit: { max_per_call_units: 125, peer: "provider:demo" } },
    });
    expect(challenge).toMatchObject({ price_id: price.price_id, amount_minor: 125 });
    expect(request).toMatchObject({
      challenge_id: challenge.challenge_id,
      settlement_family: "mock",
      verifier_status: "not_called",
    });
    const plan = await data(
      paymentChargePlanTool,
      {
        charge_price_packet: price,
        charge_challenge_packet: challenge,
        charge_verification_request: request,
      },
      "charge_plan",
    );
    expect(plan).toMatchObject({
      decision: "ready_for_provider_verification",
      provider_status: "not_called",
      receipt_status: "not_sealed",
      forwarding_status: "not_forwarded",
      money_moved: false,
    });
  });

  it("derives the price from the policy, and the challenge from the price and seed alone", async () => {
    const a = await chain();
    const b = await chain({ policy: { price_minor: 250 } });
    const c = await chain({ seed: "paid-search-002" });
    expect(b.price.amount_minor).toBe(250);
    expect(b.price.price_id).not.toBe(a.price.price_id);
    expect(c.challenge.challenge_id).not.toBe(a.challenge.challenge_id);
    expect((await chain()).challenge.challenge_id).toBe(a.challenge.challenge_id);
  });

  it("refuses an operation the policy does not price, and an expired policy", async () => {
    const wrongOp = await paymentChargePriceTool.execute(
      { mcp_tool_call: call, provider_policy: { ...policy, operation: "search.free" } },
      ctx(),
    );
    expect(failureCode(wrongOp)).toBe("INPUT_INVALID");
    const expired = await paymentChargePriceTool.execute(
      { mcp_tool_call: call, provider_policy: { ...policy, expires_at: "2025-12-31T00:00:00Z" } },
      ctx(),
    );
    expect(failureCode(expired)).toBe("INPUT_INVALID");
  });

  it("refuses family drift, raw credential material, a tampered price and a foreign idempotency binding", async () => {
    const { price, verifyInput } = await chain();
    const attempt = (changes: JsonRecord) =>
      paymentChargeVerificationRequestTool.execute({ ...verifyInput, ...changes }, ctx());
    expect(failureCode(await attempt({ settlement_family: "mpp" }))).toBe("INPUT_INVALID");
    expect(
      failureCode(
        await attempt({
          returned_credential: { family: "stripe", credential_ref: "credential:stripe:x" },
        }),
      ),
    ).toBe("INPUT_INVALID");
    expect(
      failureCode(
        await attempt({ returned_credential: { family: "mock", credential_ref: "sk_live_123" } }),
      ),
    ).toBe("INPUT_INVALID");
    expect(
      failureCode(
        await attempt({
          returned_credential: { family: "mock", credential_ref: "credential:mock:a", token: "x" },
        }),
      ),
    ).toBe("INPUT_INVALID");
    expect(failureCode(await attempt({ charge_price_packet: { ...price, amount_minor: 1 } }))).toBe(
      "INPUT_INVALID",
    );
    expect(failureCode(await attempt({ idempotency: { key: "charge:other" } }))).toBe(
      "INPUT_INVALID",
    );
  });

  it("refuses a plan whose verifier request names another challenge", async () => {
    const a = await chain();
    const other = await chain({ seed: "paid-search-002" });
    const plan = await paymentChargePlanTool.execute(
      {
        charge_price_packet: a.price,
        charge_challenge_packet: a.challenge,
        charge_verification_request: other.request,
      },
      ctx(),
    );
    expect(failureCode(plan)).toBe("INPUT_INVALID");
  });
});
