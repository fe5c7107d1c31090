/**
 * Reading an x402 challenge: the body of a paid resource's `402 Payment Required` answer.
 * Pure (values in, values out). The shape follows the x402 wire format (`x402Version`,
 * `accepts[]` of payment requirements); runx admits a challenge only when it names exactly one
 * requirement it can pay and bound:
 *
 * - `scheme` `exact`, a `network`, a whole positive `maxAmountRequired` in minor units, an
 *   ISO 4217 `asset`, a `payTo` payee reference, the `resource` that was asked for, and
 *   `extra.operation` (the authority's operation);
 * - `extra.settlement_proof: "x-payment-response"`: the resource promises to answer a paid
 *   request with a settlement proof header. A rail that offers no proof is refused before
 *   paying, since a payment runx could never verify must not start.
 *
 * More than one payable requirement is ambiguous (runx does not choose a price for the
 * payer) and refused; so is anything malformed. The admitted requirement is digested; the
 * pay step re-reads the challenge and refuses when that digest drifted.
 */
import { hashCanonical } from "../../receipts/canonical.js";
import type { Json, JsonRecord } from "../types.js";
import { isRecord } from "../packet.js";
import { paymentRefused } from "./policy.js";

/** The x402 protocol version runx speaks. */
export const X402_VERSION = 1;
/** The only proof form runx accepts: the resource's `X-PAYMENT-RESPONSE` header. */
export const X402_PROOF = "x-payment-response";

/** One admitted payment requirement. */
export interface X402Requirement {
  scheme: "exact";
  network: string;
  amount_minor: number;
  currency: string;
  pay_to: string;
  resource: string;
  operation: string;
  settlement_proof: typeof X402_PROOF;
}

/** An admitted challenge: its requirement, the requirement's digest and the payment signal. */
export interface X402Challenge {
  requirement: X402Requirement;
  requirement_digest: string;
  /** `runx.payment.signal.v1` for the quote. */
  payment_signal: JsonRecord;
}

const text = (value: Json | undefined): string | undefined =>
  typeof value === "string" && value.trim() !== "" && value.length <= 512
    ? value.trim()
    : undefined;

function malformed(message: string, path: string): never {
  throw paymentRefused("challenge_malformed", `the x402 challenge is malformed: ${message}`, path);
}

/** Parses a 402 body (bytes) into JSON, refusing anything that is not one JSON object. */
export function challengeBody(body: Uint8Array): JsonRecord {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    malformed("the 402 body is not UTF-8 JSON", "challenge");
  }
  if (!isRecord(parsed)) malformed("the 402 body is not a JSON object", "challenge");
  return parsed;
}

function amountOf(value: Json | undefined, path: string): number {
  const raw = typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
  if (!/^[1-9][0-9]{0,15}$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    malformed("maxAmountRequired must be a whole positive amount in minor units", path);
  }
  return Number(raw);
}

function admitRequirement(entry: JsonRecord, path: string, resource: string): X402Requirement {
  const network = text(entry.network) ?? malformed("network is required", `${path}.network`);
  const currency = text(entry.asset);
  if (currency === undefined || !/^[A-Z]{3}$/.test(currency)) {
    malformed("asset must be an uppercase ISO 4217 code", `${path}.asset`);
  }
  const payTo = text(entry.payTo);
  if (payTo === undefined || /\s/.test(payTo)) {
    malformed("payTo must be a payee reference", `${path}.payTo`);
  }
  if (text(entry.resource) !== resource) {
    malformed(`resource must be the requested resource ${resource}`, `${path}.resource`);
  }
  const extra = isRecord(entry.extra) ? entry.extra : {};
  const operation = text(extra.operation) ?? malformed("extra.operation is required", path);
  if (extra.settlement_proof !== X402_PROOF) {
    throw paymentRefused(
      "rail_without_proof",
      `the x402 requirement offers no settlement proof (extra.settlement_proof must be ${X402_PROOF})`,
      `${path}.extra.settlement_proof`,
    );
  }
  return {
    scheme: "exact",
    network,
    amount_minor: amountOf(entry.maxAmountRequired, `${path}.maxAmountRequired`),
    currency,
    pay_to: payTo,
    resource,
    operation,
    settlement_proof: X402_PROOF,
  };
}

/**
 * Admits the challenge a resource answered with. `resource` is the canonical URL that was
 * requested; `realm` is copied into the payment signal when given.
 */
export function admitX402Challenge(
  body: JsonRecord,
  resource: string,
  realm?: string,
): X402Challenge {
  if (body.x402Version !== X402_VERSION) {
    malformed(`x402Version must be ${X402_VERSION}`, "challenge.x402Version");
  }
  const accepts = body.accepts;
  if (!Array.isArray(accepts) || accepts.length === 0 || accepts.length > 16) {
    malformed("accepts must list 1 to 16 payment requirements", "challenge.accepts");
  }
  const payable = accepts
    .map((entry, index) => ({ entry, path: `challenge.accepts[${index}]` }))
    .filter(({ entry }) => isRecord(entry) && entry.scheme === "exact");
  if (payable.length === 0) {
    malformed("no requirement uses the exact scheme", "challenge.accepts");
  }
  if (payable.length > 1) {
    throw paymentRefused(
      "bounds_ambiguous",
      `the x402 challenge offers ${payable.length} payable requirements; runx pays exactly one bounded price`,
      "challenge.accepts",
    );
  }
  const only = payable[0] as { entry: JsonRecord; path: string };
  const requirement = admitRequirement(only.entry, only.path, resource);
  const requirementDigest = hashCanonical(requirement);
  const signal: JsonRecord = {
    signal_type: "effect_required",
    challenge_id: `x402:${requirementDigest.slice("sha256:".length, "sha256:".length + 32)}`,
    amount_minor: requirement.amount_minor,
    currency: requirement.currency,
    rail: "x402",
    counterparty: requirement.pay_to,
    operation: requirement.operation,
  };
  if (realm !== undefined) signal.realm = realm;
  return { requirement, requirement_digest: requirementDigest, payment_signal: signal };
}
