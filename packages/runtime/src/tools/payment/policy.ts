/**
 * The payment rails' refusal: every rule a rail enforces before money could move (caps, child
 * authority subset, quote drift, proof, challenge shape, ambiguous bounds, the ledger) fails
 * with POLICY_DENIED, so the step and the run seal `blocked` (`policy_denied` to the harness)
 * and nothing reaches the paid endpoint. `details.reason` is a stable code naming the rule.
 */
import { RuntimeError, isRuntimeError } from "../../errors.js";

/** Stable reasons a payment rail refuses for. */
export type PaymentRefusal =
  | "amount_over_cap"
  | "authority_broader_than_parent"
  | "authority_invalid"
  | "bounds_ambiguous"
  | "challenge_malformed"
  | "quote_drift"
  | "rail_without_proof"
  | "ledger_refused"
  | "binding_mismatch"
  | "refund_over_remaining"
  | "currency_mismatch"
  | "counterparty_mismatch"
  | "rail_mismatch"
  | "refund_request_invalid"
  | "duplicate_refund"
  | "plan_drift"
  | "settlement_unprovable";

/** A POLICY_DENIED refusal naming its rule and the offending field. */
export function paymentRefused(
  reason: PaymentRefusal,
  message: string,
  path: string,
): RuntimeError {
  return new RuntimeError("POLICY_DENIED", `${message} (refused; no money moved)`, {
    reason,
    path,
    money_moved: false,
  });
}

/** Classifies an authority refusal of the shared quote/reserve algebra by its message. */
function authorityReason(message: string): PaymentRefusal {
  if (/exceeds the (parent|caller)/.test(message)) return "amount_over_cap";
  if (/not a subset of the parent/.test(message)) return "authority_broader_than_parent";
  if (/exactly one payment effect limit/.test(message)) return "bounds_ambiguous";
  return "authority_invalid";
}

/**
 * Runs `task` and turns the authority algebra's INPUT_INVALID refusals and the ledger's
 * IDEMPOTENCY_CONFLICT into POLICY_DENIED; any other error passes through unchanged.
 */
export function asPolicyRefusal<T>(task: () => T): T {
  try {
    return task();
  } catch (error) {
    throw toPolicyRefusal(error);
  }
}

/** The POLICY_DENIED form of an authority or ledger refusal (other errors unchanged). */
export function toPolicyRefusal(error: unknown): unknown {
  if (!isRuntimeError(error)) return error;
  const path = typeof error.details.path === "string" ? error.details.path : "";
  if (error.code === "INPUT_INVALID") {
    return paymentRefused(authorityReason(error.message), error.message, path);
  }
  if (error.code === "IDEMPOTENCY_CONFLICT") {
    return paymentRefused("ledger_refused", `the effect ledger refused: ${error.message}`, path);
  }
  return error;
}
