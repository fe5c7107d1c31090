/**
 * The seller-side planning tools of the `charge` skill. None of them calls a provider, verifies
 * a credential, seals settlement evidence or forwards the paid call; each binds the previous
 * stage's packet by digest and refuses any drift.
 *
 * - `payment.charge_price` binds one requested operation (`mcp_tool_call`) to the provider's
 *   policy: amount, currency, counterparty, operation, accepted settlement families, expiry and
 *   the authority a payer would need (`runx.payment.charge_price.v1`).
 * - `payment.charge_challenge` turns that price into a deterministic, replay-safe challenge whose
 *   idempotency binding requires a receipt before forwarding (`runx.payment.charge_challenge.v1`).
 * - `payment.charge_verification_request` checks an opaque returned credential reference and a
 *   single-use verifier capability against that exact challenge, and prepares the verifier
 *   request (`runx.payment.charge_verification_request.v1`); nothing is verified here.
 * - `payment.charge_plan` assembles price, challenge and verifier request into the adapter
 *   handoff (`runx.payment.charge_plan.v1`), recording that verification, receipt sealing and
 *   forwarding are all still outstanding.
 */
import challengeInputSchema from "../../../schemas/tools/payment-charge-challenge.input.schema.json" with { type: "json" };
import challengeOutputSchema from "../../../schemas/tools/payment-charge-challenge.output.schema.json" with { type: "json" };
import planInputSchema from "../../../schemas/tools/payment-charge-plan.input.schema.json" with { type: "json" };
import planOutputSchema from "../../../schemas/tools/payment-charge-plan.output.schema.json" with { type: "json" };
import priceInputSchema from "../../../schemas/tools/payment-charge-price.input.schema.json" with { type: "json" };
import priceOutputSchema from "../../../schemas/tools/payment-charge-price.output.schema.json" with { type: "json" };
import verifyInputSchema from "../../../schemas/tools/payment-charge-verification-request.input.schema.json" with { type: "json" };
import verifyOutputSchema from "../../../schemas/tools/payment-charge-verification-request.output.schema.json" with { type: "json" };
import { validateToolsPaymentChargeChallengeInput } from "../../generated/validate-tools-payment-charge-challenge.input.js";
import { validateToolsPaymentChargePlanInput } from "../../generated/validate-tools-payment-charge-plan.input.js";
import { validateToolsPaymentChargePriceInput } from "../../generated/validate-tools-payment-charge-price.input.js";
import { validateToolsPaymentChargeVerificationRequestInput } from "../../generated/validate-tools-payment-charge-verification-request.input.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { isRecord } from "../packet.js";
import { PAYMENT_FAMILY, authorityDenied, digestHex } from "./authority.js";
import type { JsonRecord, NativeTool } from "../types.js";

export const CHARGE_PRICE_PACKET = "runx.payment.charge_price.v1";
export const CHARGE_CHALLENGE_PACKET = "runx.payment.charge_challenge.v1";
export const CHARGE_VERIFICATION_PACKET = "runx.payment.charge_verification_request.v1";
export const CHARGE_PLAN_PACKET = "runx.payment.charge_plan.v1";

/** `payment.charge_price` input after schema validation. */
export interface ChargePriceInput {
  mcp_tool_call: { tool: string; arguments?: JsonRecord };
  provider_policy: {
    policy_ref?: string;
    price_minor: number;
    currency: string;
    accepted_settlement_families: string[];
    counterparty: string;
    operation?: string;
    realm?: string;
    expires_at?: string;
  };
}

/** The fields of a charge price every later stage relies on. */
interface ChargePrice {
  price_id: string;
  operation: string;
  amount_minor: number;
  currency: string;
  counterparty: string;
  accepted_settlement_families: string[];
  expires_at: string | null;
}

/** The fields of a charge challenge every later stage relies on. */
interface ChargeChallenge {
  challenge_id: string;
  price_id: string;
  price_digest: string;
  idempotency: JsonRecord & { key: string };
}

function text(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

/** Reads a price packet's data back, refusing one that lost a binding field. */
function readPrice(value: JsonRecord, path: string): ChargePrice {
  const families = value.accepted_settlement_families;
  if (
    !text(value.price_id) ||
    !text(value.operation) ||
    !Number.isSafeInteger(value.amount_minor) ||
    (value.amount_minor as number) <= 0 ||
    !text(value.currency) ||
    !text(value.counterparty) ||
    !Array.isArray(families) ||
    families.length === 0 ||
    !families.every(text) ||
    !(value.expires_at === null || text(value.expires_at))
  ) {
    throw authorityDenied(
      `${path} is not a ${CHARGE_PRICE_PACKET} price (price_id, operation, amount_minor, currency, counterparty, accepted_settlement_families, expires_at)`,
      path,
    );
  }
  return value as unknown as ChargePrice;
}

/** Reads a challenge packet's data back and checks it binds exactly this price. */
function readChallenge(value: JsonRecord, price: JsonRecord, path: string): ChargeChallenge {
  const idempotency = value.idempotency;
  if (
    !text(value.challenge_id) ||
    !text(value.price_id) ||
    !text(value.price_digest) ||
    !isRecord(idempotency) ||
    !text(idempotency.key)
  ) {
    throw authorityDenied(
      `${path} is not a ${CHARGE_CHALLENGE_PACKET} challenge (challenge_id, price_id, price_digest, idempotency.key)`,
      path,
    );
  }
  if (value.price_id !== price.price_id || value.price_digest !== hashCanonical(price)) {
    throw authorityDenied(
      `${path} was issued for another price than charge_price_packet`,
      `${path}.price_digest`,
    );
  }
  return value as unknown as ChargeChallenge;
}

function checkNotExpired(price: ChargePrice, now: Date, path: string): void {
  if (price.expires_at !== null && Date.parse(price.expires_at) <= now.getTime()) {
    throw authorityDenied(`the charge price expired at ${price.expires_at}`, path);
  }
}

/** Builds the `runx.payment.charge_price.v1` data. */
export function chargePrice(input: ChargePriceInput, now: Date): JsonRecord {
  const call = input.mcp_tool_call;
  const policy = input.provider_policy;
  const operation = call.tool;
  if (policy.operation !== undefined && policy.operation !== operation) {
    throw authorityDenied(
      `mcp_tool_call.tool ${operation} is not the operation ${policy.operation} the provider policy prices`,
      "mcp_tool_call.tool",
    );
  }
  let expiresAt: string | null = null;
  if (policy.expires_at !== undefined) {
    const at = Date.parse(policy.expires_at);
    if (Number.isNaN(at)) {
      throw authorityDenied(
        "provider_policy.expires_at is not an RFC 3339 date-time",
        "provider_policy.expires_at",
      );
    }
    if (at <= now.getTime()) {
      throw authorityDenied(
        `the provider policy expired at ${policy.expires_at}`,
        "provider_policy.expires_at",
      );
    }
    expiresAt = new Date(at).toISOString();
  }
  const argumentsDigest = hashCanonical(call.arguments ?? {});
  const policyDigest = hashCanonical(policy);
  const realm = policy.realm ?? null;
  const bound = {
    operation,
    arguments_digest: argumentsDigest,
    amount_minor: policy.price_minor,
    currency: policy.currency,
    counterparty: policy.counterparty,
    realm,
    accepted_settlement_families: policy.accepted_settlement_families,
    policy_digest: policyDigest,
    expires_at: expiresAt,
  };
  return {
    price_id: `charge-price-${digestHex(bound)}`,
    ...bound,
    policy_ref: policy.policy_ref ?? null,
    requested_authority: {
      resource_family: "effect",
      verbs: ["prepare", "commit"],
      effect_limit: {
        family: PAYMENT_FAMILY,
        unit: policy.currency,
        max_per_call_units: policy.price_minor,
        channels: policy.accepted_settlement_families,
        peer: policy.counterparty,
        operation,
        ...(realm !== null ? { realm } : {}),
        authorization_form: "single_use_capability",
        receipt_before_success: true,
      },
    },
    priced_at: now.toISOString(),
  };
}

/** Builds the `runx.payment.charge_challenge.v1` data. */
export function chargeChallenge(
  input: { charge_price_packet: JsonRecord; idempotency_seed: string },
  now: Date,
): JsonRecord {
  const price = readPrice(input.charge_price_packet, "charge_price_packet");
  checkNotExpired(price, now, "charge_price_packet.expires_at");
  const priceDigest = hashCanonical(input.charge_price_packet);
  // Derived from the price's identity (not its clock), so a retry yields the same challenge.
  const digest = digestHex({ price_id: price.price_id, idempotency_seed: input.idempotency_seed });
  return {
    challenge_id: `ch_${digest.slice(0, 32)}`,
    price_id: price.price_id,
    price_digest: priceDigest,
    amount_minor: price.amount_minor,
    currency: price.currency,
    counterparty: price.counterparty,
    operation: price.operation,
    accepted_settlement_families: price.accepted_settlement_families,
    expires_at: price.expires_at,
    idempotency: {
      key: `charge:${digest}`,
      seed_digest: hashCanonical(input.idempotency_seed),
      receipt_before_forward_required: true,
      replay: "unresolved_until_sealed_provider_result",
    },
    issued_at: now.toISOString(),
  };
}

/** The unexpired price and the challenge bound to it, as the later charge stages take them. */
function readPricedChallenge(
  input: { charge_price_packet: JsonRecord; charge_challenge_packet: JsonRecord },
  now: Date,
): { price: ChargePrice; challenge: ChargeChallenge } {
  const price = readPrice(input.charge_price_packet, "charge_price_packet");
  checkNotExpired(price, now, "charge_price_packet.expires_at");
  const challenge = readChallenge(
    input.charge_challenge_packet,
    input.charge_price_packet,
    "charge_challenge_packet",
  );
  return { price, challenge };
}

/** `payment.charge_verification_request` input after schema validation. */
export interface ChargeVerificationInput {
  charge_price_packet: JsonRecord;
  charge_challenge_packet: JsonRecord;
  returned_credential: { family: string; credential_ref: string };
  verify_capability_ref: string;
  settlement_family: string;
  idempotency: JsonRecord;
}

/** Builds the `runx.payment.charge_verification_request.v1` data. */
export function chargeVerificationRequest(input: ChargeVerificationInput, now: Date): JsonRecord {
  const { price, challenge } = readPricedChallenge(input, now);
  const family = input.settlement_family;
  if (!price.accepted_settlement_families.includes(family)) {
    throw authorityDenied(
      `settlement family ${family} is not accepted by the price (${price.accepted_settlement_families.join(", ")})`,
      "settlement_family",
    );
  }
  const credential = input.returned_credential;
  if (credential.family !== family) {
    throw authorityDenied(
      `returned credential family ${credential.family} is not the settlement family ${family}`,
      "returned_credential.family",
    );
  }
  // An opaque reference, `credential:<family>:<id>`: never raw rail material.
  const parts = credential.credential_ref.split(":");
  if (parts.length < 3 || parts[0] !== "credential" || parts[1] !== family || parts[2] === "") {
    throw authorityDenied(
      `returned_credential.credential_ref must be an opaque credential:${family}:<id> reference`,
      "returned_credential.credential_ref",
    );
  }
  if (hashCanonical(input.idempotency) !== hashCanonical(challenge.idempotency)) {
    throw authorityDenied(
      "idempotency does not match the challenge's idempotency binding",
      "idempotency",
    );
  }
  const request = {
    challenge_id: challenge.challenge_id,
    price_id: price.price_id,
    settlement_family: family,
    credential_ref: credential.credential_ref,
    verify_capability_ref: input.verify_capability_ref,
    amount_minor: price.amount_minor,
    currency: price.currency,
    counterparty: price.counterparty,
    operation: price.operation,
    idempotency: challenge.idempotency,
  };
  const requestDigest = hashCanonical(request);
  return {
    request_id: `charge-verify-${requestDigest.slice("sha256:".length)}`,
    ...request,
    verifier_status: "not_called",
    request_digest: requestDigest,
  };
}

/** Builds the `runx.payment.charge_plan.v1` data. */
export function chargePlan(
  input: {
    charge_price_packet: JsonRecord;
    charge_challenge_packet: JsonRecord;
    charge_verification_request: JsonRecord;
  },
  now: Date,
): JsonRecord {
  const { price, challenge } = readPricedChallenge(input, now);
  const request = input.charge_verification_request;
  const {
    request_id: requestId,
    verifier_status: _status,
    request_digest: digest,
    ...bound
  } = request;
  if (
    !text(requestId) ||
    bound.challenge_id !== challenge.challenge_id ||
    bound.price_id !== price.price_id ||
    bound.amount_minor !== price.amount_minor ||
    bound.currency !== price.currency ||
    bound.counterparty !== price.counterparty ||
    bound.operation !== price.operation ||
    digest !== hashCanonical(bound)
  ) {
    throw authorityDenied(
      "charge_verification_request does not bind this challenge and price",
      "charge_verification_request",
    );
  }
  const plan = {
    price: input.charge_price_packet,
    challenge: input.charge_challenge_packet,
    verification_request: request,
  };
  const planDigest = hashCanonical(plan);
  // Upstream's packet fields: the plan never forwards the paid call itself
  // (`runtime_forwarding_enabled: false`) and no approval has been asked for yet.
  return {
    schema: CHARGE_PLAN_PACKET,
    plan_id: `charge-plan-${planDigest.slice("sha256:".length)}`,
    decision: "ready_for_provider_verification",
    ...plan,
    idempotency: challenge.idempotency,
    credential_binding: {
      family: request.settlement_family ?? null,
      credential_ref: request.credential_ref ?? null,
    },
    provider_status: "not_called",
    receipt_status: "not_sealed",
    forwarding_status: "not_forwarded",
    approval_status: "not_requested",
    runtime_forwarding_enabled: false,
    money_moved: false,
    findings: [],
    plan_digest: planDigest,
    next_action:
      "route through the selected settlement-family verifier; seal its receipt before forwarding",
  };
}

export const paymentChargePriceTool: NativeTool = defineTool<ChargePriceInput, JsonRecord>({
  name: "payment.charge_price",
  description:
    "Bind one requested paid operation to the provider's price policy (amount, currency, counterparty, settlement families, expiry, requested authority); calls no provider.",
  mutating: false,
  scopes: [],
  inputSchema: priceInputSchema,
  outputSchema: priceOutputSchema,
  validate: validateToolsPaymentChargePriceInput,
  run(input, ctx) {
    const price = chargePrice(input, ctx.now());
    return Promise.resolve({
      output: { charge_price_packet: artifactEnvelope(price) },
      summary: `priced ${price.operation as string} at ${price.amount_minor as number} ${price.currency as string}`,
    });
  },
});

export const paymentChargeChallengeTool: NativeTool = defineTool<
  { charge_price_packet: JsonRecord; idempotency_seed: string },
  JsonRecord
>({
  name: "payment.charge_challenge",
  description:
    "Turn a native charge price into a deterministic, replay-safe payment challenge that requires a receipt before forwarding; calls no provider.",
  mutating: false,
  scopes: [],
  inputSchema: challengeInputSchema,
  outputSchema: challengeOutputSchema,
  validate: validateToolsPaymentChargeChallengeInput,
  run(input, ctx) {
    const challenge = chargeChallenge(input, ctx.now());
    return Promise.resolve({
      output: { charge_challenge_packet: artifactEnvelope(challenge) },
      summary: `challenge ${challenge.challenge_id as string}`,
    });
  },
});

export const paymentChargeVerificationRequestTool: NativeTool = defineTool<
  ChargeVerificationInput,
  JsonRecord
>({
  name: "payment.charge_verification_request",
  description:
    "Check an opaque returned credential reference and a single-use verifier capability against one charge challenge and prepare the provider-verifier request; verifies nothing.",
  mutating: false,
  scopes: [],
  inputSchema: verifyInputSchema,
  outputSchema: verifyOutputSchema,
  validate: validateToolsPaymentChargeVerificationRequestInput,
  run(input, ctx) {
    const request = chargeVerificationRequest(input, ctx.now());
    return Promise.resolve({
      output: {
        charge_verification_request: artifactEnvelope(request),
      },
      summary: `verifier request ${request.request_id as string} (not called)`,
    });
  },
});

export const paymentChargePlanTool: NativeTool = defineTool<
  Parameters<typeof chargePlan>[0],
  JsonRecord
>({
  name: "payment.charge_plan",
  description:
    "Assemble a charge's price, challenge and verifier request into the adapter handoff; records that verification, receipt sealing and forwarding are outstanding.",
  mutating: false,
  scopes: [],
  inputSchema: planInputSchema,
  outputSchema: planOutputSchema,
  validate: validateToolsPaymentChargePlanInput,
  run(input, ctx) {
    const plan = chargePlan(input, ctx.now());
    return Promise.resolve({
      output: { charge_plan: artifactEnvelope(plan) },
      summary: `charge plan ${plan.plan_id as string}: ${plan.decision as string}`,
    });
  },
});

/** The seller-side charge planning tools. */
export function paymentChargeTools(): NativeTool[] {
  return [
    paymentChargePriceTool,
    paymentChargeChallengeTool,
    paymentChargeVerificationRequestTool,
    paymentChargePlanTool,
  ];
}
