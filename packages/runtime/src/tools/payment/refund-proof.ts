/**
 * What verified receipts prove about a charge and its refunds (`payment.refund_plan`). The
 * receipts come from the run's receipt store through `ToolContext.receipts`, which has already
 * checked each one's content address and signature; this module reads their payment meaning.
 *
 * A payment receipt is closed (`seal.disposition: closed`) and carries a bounded single-use
 * payment authority term with the verb of its side (`commit` for a charge, `reverse` for a
 * refund): a `payment` effect limit whose per-call ceiling is the amount moved (a single-use
 * term is minted for exactly that amount; with several candidates the narrowest wins), exactly
 * one rail, a peer (the payer) and an operation, and every finality control
 * (`receipt_before_success`, `idempotency_required`, `recovery_required`,
 * `single_use_capability`). Its acts' verification refs hold exactly one provider effect proof
 * (`proof_kind: effect_evidence`) and exactly one `runx:money_movement:<id>` reference.
 *
 * The refund history of a charge is every receipt in the store whose acts reference the
 * charge receipt and that carries a `reverse` payment term for operation `refund`; each must
 * be a complete payment receipt of the charge's rail, currency and payer, or the history is
 * refused. Other receipts that merely mention the charge (audits, reports) are not refunds.
 * The runtime's own charge and refund step receipts are written to this contract by
 * `settled-payment.ts`; the proof ref's locator, when present, is the provider idempotency key.
 */
import { RuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import type { AuthorityEffectLimit, Receipt, Reference } from "../../receipts/model.js";
import type { ReceiptLookup } from "../types.js";
import { PAYMENT_FAMILY } from "./authority.js";
import { MONEY_MOVEMENT_PREFIX } from "./settled-payment.js";

/** The operation a refund receipt's authority names. */
export const REFUND_OPERATION = "refund";

/** The payment a receipt proves. */
export interface PaymentProof {
  rail: string;
  operation: string;
  amount_minor: number;
  currency: string;
  counterparty: string;
  /** The realm the payment authority was bounded to, when it names one. */
  realm?: string;
  proof_ref: string;
  /** The idempotency key the provider effect was made under (the proof ref's locator). */
  idempotency_key?: string;
  money_movement_id: string;
}

/** What names one counted refund: how a second refund under the same name is recognised. */
export interface CountedRefund {
  receipt_id: string;
  /** The refund receipt's `idempotency.intent_key`. */
  intent_key: string;
  /** The provider idempotency key its effect was made under, when its proof names one. */
  idempotency_key?: string;
}

/** A charge, as its receipt and the verified refunds linked to it prove it. */
export interface VerifiedCharge extends PaymentProof {
  receipt_id: string;
  refunded_minor: number;
  /** Ids of the counted refund receipts, sorted. */
  history_receipt_refs: string[];
  /** The counted refunds, in the order of `history_receipt_refs`. */
  refunds: CountedRefund[];
  /** Digest binding the charge receipt, its proof and every counted refund receipt. */
  proof_digest: string;
}

/** Why a receipt is not the payment proof it is used as. */
function notProof(receipt: Receipt, why: string, path: string): RuntimeError {
  return new RuntimeError("RECEIPT_INVALID", `payment receipt ${receipt.id} ${why}`, {
    receipt_id: receipt.id,
    path,
  });
}

function paymentLimitOf(limits: readonly AuthorityEffectLimit[] | undefined) {
  return (limits ?? []).find((limit) => limit.family === PAYMENT_FAMILY);
}

/** The receipt's payment limit for `verb` (the narrowest per-call ceiling), or undefined. */
function limitFor(receipt: Receipt, verb: string): AuthorityEffectLimit | undefined {
  const candidates = receipt.authority.terms
    .filter((term) => term.verbs.includes(verb))
    .map((term) => paymentLimitOf(term.bounds.effect_limits))
    .filter((limit): limit is AuthorityEffectLimit => limit !== undefined);
  candidates.sort(
    (a, b) =>
      (a.max_per_call_units ?? Number.MAX_SAFE_INTEGER) -
        (b.max_per_call_units ?? Number.MAX_SAFE_INTEGER) || a.channels.length - b.channels.length,
  );
  return candidates[0];
}

function verificationRefs(receipt: Receipt): Reference[] {
  return receipt.acts.flatMap((act) =>
    act.criterion_bindings.flatMap((binding) => binding.verification_refs),
  );
}

function single(receipt: Receipt, refs: Reference[], label: string): string {
  const uris = [...new Set(refs.map((ref) => ref.uri))];
  if (uris.length !== 1) {
    throw notProof(
      receipt,
      `must contain exactly one ${label} reference (found ${uris.length})`,
      "acts.criterion_bindings.verification_refs",
    );
  }
  return uris[0] as string;
}

/** What a closed payment receipt proves under its `verb` term; throws RECEIPT_INVALID otherwise. */
export function paymentProof(receipt: Receipt, verb: string): PaymentProof {
  if (receipt.seal.disposition !== "closed") {
    throw notProof(
      receipt,
      `is ${receipt.seal.disposition}, not closed: it proves no settled payment`,
      "seal.disposition",
    );
  }
  const limit = limitFor(receipt, verb);
  if (limit === undefined) {
    throw notProof(receipt, `has no bounded ${verb} payment authority`, "authority.terms");
  }
  const missing = (
    [
      "receipt_before_success",
      "idempotency_required",
      "recovery_required",
      "single_use_capability",
    ] as const
  ).filter((key) => limit[key] !== true);
  if (missing.length > 0) {
    throw notProof(
      receipt,
      `lacks the payment finality controls ${missing.join(", ")}`,
      "authority.terms.bounds.effect_limits",
    );
  }
  if (limit.max_per_call_units === undefined) {
    throw notProof(receipt, "has no per-call amount bound", "authority.terms.bounds.effect_limits");
  }
  if (limit.channels.length !== 1) {
    throw notProof(receipt, "must bind exactly one rail", "authority.terms.bounds.effect_limits");
  }
  for (const key of ["operation", "peer"] as const) {
    if (limit[key] === undefined || limit[key] === "") {
      throw notProof(receipt, `has no ${key} binding`, "authority.terms.bounds.effect_limits");
    }
  }
  const refs = verificationRefs(receipt);
  const proofs = refs.filter((ref) => ref.proof_kind === "effect_evidence");
  const proofRef = single(receipt, proofs, "provider effect proof");
  const locator = proofs[0]?.locator;
  const movement = single(
    receipt,
    refs.filter((ref) => ref.uri.startsWith(MONEY_MOVEMENT_PREFIX)),
    "money movement",
  );
  const movementId = movement.slice(MONEY_MOVEMENT_PREFIX.length);
  if (movementId === "") {
    throw notProof(
      receipt,
      "has an empty money movement reference",
      "acts.criterion_bindings.verification_refs",
    );
  }
  return {
    rail: limit.channels[0] as string,
    operation: limit.operation as string,
    amount_minor: limit.max_per_call_units,
    currency: limit.unit,
    counterparty: limit.peer as string,
    ...(limit.realm !== undefined ? { realm: limit.realm } : {}),
    proof_ref: proofRef,
    ...(locator !== undefined && locator !== "" ? { idempotency_key: locator } : {}),
    money_movement_id: movementId,
  };
}

/** True when the receipt claims a refund: a `reverse` payment term for operation `refund`. */
function claimsRefund(receipt: Receipt): boolean {
  return receipt.authority.terms.some(
    (term) =>
      term.verbs.includes("reverse") &&
      paymentLimitOf(term.bounds.effect_limits)?.operation === REFUND_OPERATION,
  );
}

/**
 * Reads the charge receipt `receiptId` and its refund history from the run's receipt store,
 * verified. Throws RECEIPT_NOT_FOUND / RECEIPT_INVALID (from the lookup) for a missing or
 * unverifiable receipt, and RECEIPT_INVALID when the receipts do not prove a charge or a
 * linked refund does not match it.
 */
export async function verifiedCharge(
  receipts: ReceiptLookup,
  receiptId: string,
): Promise<VerifiedCharge> {
  const original = await receipts.read(receiptId);
  const charge = paymentProof(original, "commit");
  if (charge.operation === REFUND_OPERATION) {
    throw notProof(original, "is a refund, not a charge", "authority.terms");
  }
  const history: Array<[string, string, number]> = [];
  const refunds: CountedRefund[] = [];
  let refunded = 0;
  for (const receipt of await receipts.referencing(original.id)) {
    if (!claimsRefund(receipt)) continue;
    const refund = paymentProof(receipt, "reverse");
    const drift = (["rail", "currency", "counterparty"] as const).filter(
      (key) => refund[key] !== charge[key],
    );
    if (drift.length > 0) {
      throw new RuntimeError(
        "RECEIPT_INVALID",
        `refund receipt ${receipt.id} links charge ${original.id} but its ${drift.join(", ")} differ from the charge`,
        { receipt_id: receipt.id, charge_receipt_id: original.id },
      );
    }
    refunded += refund.amount_minor;
    if (!Number.isSafeInteger(refunded)) {
      throw new RuntimeError("RECEIPT_INVALID", `refund history of ${original.id} overflows`, {
        receipt_id: original.id,
      });
    }
    history.push([receipt.id, receipt.digest, refund.amount_minor]);
    refunds.push({
      receipt_id: receipt.id,
      intent_key: receipt.idempotency.intent_key,
      ...(refund.idempotency_key !== undefined ? { idempotency_key: refund.idempotency_key } : {}),
    });
  }
  const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  history.sort((a, b) => byId(a[0], b[0]));
  refunds.sort((a, b) => byId(a.receipt_id, b.receipt_id));
  return {
    ...charge,
    receipt_id: original.id,
    refunded_minor: refunded,
    history_receipt_refs: history.map(([id]) => id),
    refunds,
    proof_digest: hashCanonical({
      original_receipt_ref: original.id,
      original_receipt_digest: original.digest,
      money_movement_id: charge.money_movement_id,
      provider_proof_ref: charge.proof_ref,
      history,
    }),
  };
}
