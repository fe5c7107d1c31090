/**
 * What a charge or refund recorded through `provider.mutate` (`payment.charge.<rail>`,
 * `payment.refund.<rail>`) must prove in its step receipt, so that `refund-proof.ts` can
 * bound every later refund of the charge from verified receipts alone. Pure.
 *
 * Only the rail-suffixed operations are settlements this runtime records (the local
 * deterministic families, such as `mock`); any other operation is left to provider.mutate's
 * ordinary rules.
 *
 * Two halves, one contract:
 *
 * - {@link admitPaymentEffect} runs in `provider.mutate` before the approval and before the
 *   provider is called. A payment operation the receipt could not prove is refused there
 *   (POLICY_DENIED, `settlement_unprovable`): no typed amount, no approval, a payload
 *   `settlement_family` other than the operation's rail, a refund that names no original
 *   charge receipt, or a payload claiming `money_moved` (whether money moved is the
 *   provider's report, never the caller's). So an effect that lands can always be recorded.
 * - {@link settledPaymentFacts} turns the step's admitted input and the provider's answer
 *   into upstream's receipt fields: a bounded single-use payment authority term (`commit` for
 *   a charge, `reverse` for a refund; the `payment` effect limit's per-call ceiling is the
 *   amount, its unit the currency, its one channel the rail, its peer the counterparty, its
 *   operation `charge` or `refund`, every finality control set), the act's verification refs
 *   (one `effect_evidence` ref naming the provider's effect, its locator the idempotency key,
 *   and one `runx:money_movement:<id>` ref), a grant ref naming the approved plan and, for a
 *   refund, the original charge receipt as the act's source. Only a fresh, approved,
 *   successful mutation is a settlement: a replay (the effect was made, and proven, by an
 *   earlier step), a failure, a decline or a refusal records none, so a refund is never
 *   counted twice and a charge that did not land is never refundable.
 */
import { RECEIPT_URI_PREFIX } from "../../receipts/identity.js";
import type { AuthorityTerm, Reference } from "../../receipts/model.js";
import type { Json, JsonRecord } from "../types.js";
import { digestHex, PAYMENT_FAMILY } from "./authority.js";
import { isRecord } from "../packet.js";
import { paymentRefused } from "./policy.js";

const OPERATION = /^payment\.(charge|refund)\.([a-z0-9][a-z0-9_-]{0,63})$/;
const RECEIPT_ID = /^sha256:[0-9a-f]{64}$/;
const CURRENCY = /^[A-Z]{3}$/;
/** The prefix of a money movement reference (`refund-proof.ts` reads it back). */
export const MONEY_MOVEMENT_PREFIX = "runx:money_movement:";

/** A payment operation of `provider.mutate`: which side and on which rail. */
export interface PaymentEffect {
  side: "charge" | "refund";
  rail: string;
}

/** The payment side and rail `operation` names, or undefined for any other operation. */
export function paymentEffectOf(operation: string): PaymentEffect | undefined {
  const match = OPERATION.exec(operation);
  if (match === null) return undefined;
  return { side: match[1] as PaymentEffect["side"], rail: match[2] as string };
}

const unprovable = (message: string, path: string) =>
  paymentRefused("settlement_unprovable", `${message}: its receipt could not prove it`, path);

/** What `provider.mutate` admitted for one call (see `mutationPlan` in `provider.ts`). */
export interface PaymentEffectRequest {
  operation: string;
  payload: JsonRecord;
  amount?: { units: number; unit: string };
  approvalRequested: boolean;
}

/** Refuses a payment operation whose settlement the step receipt could not prove. */
export function admitPaymentEffect(request: PaymentEffectRequest): void {
  const effect = paymentEffectOf(request.operation);
  // Other operations (upstream's rail-named `payment.charge` on an adapter provider, reads)
  // are not settlements this runtime records; they keep provider.mutate's ordinary rules.
  if (effect === undefined) return;
  const { amount, payload } = request;
  if (amount === undefined || !Number.isSafeInteger(amount.units) || amount.units <= 0) {
    throw unprovable(`${request.operation} needs a positive whole amount in minor units`, "amount");
  }
  if (!CURRENCY.test(amount.unit)) {
    throw unprovable(
      `${request.operation} needs a three-letter currency as its unit`,
      "amount.unit",
    );
  }
  if (!request.approvalRequested) {
    throw unprovable(`${request.operation} moves money only after an approval`, "approval");
  }
  if (payload.settlement_family !== effect.rail) {
    throw unprovable(
      `${request.operation} needs input.settlement_family ${effect.rail}`,
      "input.settlement_family",
    );
  }
  if (Object.prototype.hasOwnProperty.call(payload, "money_moved")) {
    throw unprovable(
      "input.money_moved is the provider's report, not the caller's",
      "input.money_moved",
    );
  }
  const realm = payload.realm;
  if (realm !== undefined && realm !== null && (typeof realm !== "string" || realm === "")) {
    throw unprovable("input.realm must be a non-empty string or null", "input.realm");
  }
  if (effect.side === "refund") {
    const original = payload.original_receipt_ref;
    if (typeof original !== "string" || !RECEIPT_ID.test(original)) {
      throw unprovable(
        `${request.operation} needs input.original_receipt_ref, the charge receipt id`,
        "input.original_receipt_ref",
      );
    }
  }
}

/** The receipt fields one settled payment adds to its step receipt. */
export interface SettledPaymentFacts {
  authorityTerms: AuthorityTerm[];
  grantRefs: Reference[];
  verificationRefs: Reference[];
  sourceRefs: Reference[];
}

const text = (value: Json | undefined): string => (typeof value === "string" ? value : "");

/** The money movement id of one provider effect: stable for the effect, unique per key. */
export function moneyMovementId(facts: {
  provider: string;
  operation: string;
  target: string;
  idempotency_key: string;
  operation_id: string;
}): string {
  return digestHex({ schema: "runx.money_movement.v1", ...facts });
}

/**
 * The receipt fields of a fresh, approved, successful payment mutation, read from the
 * `provider.mutate` step's admitted input and its output; undefined for anything else.
 */
export function settledPaymentFacts(
  input: JsonRecord,
  output: JsonRecord | undefined,
): SettledPaymentFacts | undefined {
  const named = output?.provider_operation;
  const data = isRecord(named) && isRecord(named.data) ? named.data : undefined;
  if (data === undefined || data.access !== "mutate" || data.status !== "success") return undefined;
  if (data.replayed === true || data.failure !== undefined) return undefined;
  const operation = text(data.operation);
  const effect = paymentEffectOf(operation);
  const approval = isRecord(data.approval) ? data.approval : undefined;
  const amount = isRecord(data.amount) ? data.amount : undefined;
  const payload = isRecord(input.input) ? input.input : {};
  const provider = text(data.provider);
  const target = text(data.target);
  const key = text(data.idempotency_key);
  const effectId = text(data.operation_id);
  const gate = text(approval?.gate_id);
  if (effect === undefined || approval?.approved !== true || amount === undefined) return undefined;
  if ([provider, target, key, effectId, gate].includes("")) return undefined;
  const units = amount.units;
  if (typeof units !== "number" || !Number.isSafeInteger(units) || units <= 0) return undefined;
  const realm = typeof payload.realm === "string" && payload.realm !== "" ? payload.realm : null;
  const movement = moneyMovementId({
    provider,
    operation,
    target,
    idempotency_key: key,
    operation_id: effectId,
  });
  const term: AuthorityTerm = {
    term_id: `payment-${effect.side}-${movement.slice(0, 32)}`,
    principal_ref: { type: "principal", uri: "runx:principal:local_runtime" },
    resource_ref: { type: "target", uri: target },
    resource_family: "effect",
    verbs: [effect.side === "charge" ? "commit" : "reverse"],
    bounds: {
      effect_limits: [
        {
          family: PAYMENT_FAMILY,
          unit: text(amount.unit),
          max_per_call_units: units,
          max_per_run_units: units,
          channels: [effect.rail],
          ...(realm !== null ? { realm } : {}),
          peer: target,
          operation: effect.side,
          authorization_form: "single_use_capability",
          idempotency_required: true,
          recovery_required: true,
          receipt_before_success: true,
          single_use_capability: true,
        },
      ],
    },
    conditions: [],
    // The approval is named by the grant that issued the term (the approved plan's gate);
    // the approvers themselves are signed in by whoever attested them (console releases).
    approvals: [],
    capabilities: ["effect_single_use_capability"],
    issued_by_ref: {
      type: "grant",
      uri: `runx:grant:${gate}`,
      label: "the approved provider plan",
    },
  };
  const original = payload.original_receipt_ref;
  return {
    authorityTerms: [term],
    grantRefs: [{ type: "grant", uri: `runx:grant:${gate}`, label: "the approved provider plan" }],
    verificationRefs: [
      {
        type: "verification",
        uri: `runx:provider_effect:${provider}:${effectId}`,
        provider,
        locator: key,
        label: "provider effect result",
        proof_kind: "effect_evidence",
      },
      {
        type: "target",
        uri: `${MONEY_MOVEMENT_PREFIX}${movement}`,
        provider: effect.rail,
        label: "recorded payment movement",
        proof_kind: "effect_finality",
      },
    ],
    sourceRefs:
      effect.side === "refund" && typeof original === "string"
        ? [
            {
              type: "receipt",
              uri: `${RECEIPT_URI_PREFIX}${original}`,
              label: "original charge receipt",
            },
          ]
        : [],
  };
}
