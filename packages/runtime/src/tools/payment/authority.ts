/**
 * Payment authority algebra shared by `payment.quote`, `payment.reserve` and
 * `payment.invoice_plan`. Pure: no I/O, the clock is passed in.
 *
 * A parent `runx.authority_term.v1` is spendable only when it is a bounded single-use payment
 * authority: effect family, `prepare` + `commit`, the single-use capability, exactly one
 * `payment` effect limit with a per-call ceiling, an aggregate (run or period) ceiling, rails,
 * a concrete peer and operation (no wildcards), and an expiry (when it has one) in the future.
 * A child term is a subset when it widens no dimension: same resource, verbs / capabilities
 * within the parent's, the parent's conditions and approvals kept, expiry no later, every
 * effect limit within the parent limit of its family, and every other bound unchanged.
 */
import { RuntimeError } from "../../errors.js";
import { canonicalJson, hashCanonical } from "../../receipts/canonical.js";
import type { Json, JsonRecord } from "../types.js";

/** The effect family payment limits use. */
export const PAYMENT_FAMILY = "payment";
/** Names the subset rule a proof was checked under. */
export const PAYMENT_SUBSET_ALGORITHM = "runx.payment.bounds_subset.v1";

/** A typed reference `{type, uri, …}`. */
export type Reference = JsonRecord & { type: string; uri: string };

/** One effect limit of an authority term's bounds. */
export interface EffectLimit {
  family: string;
  unit: string;
  max_per_call_units?: number;
  max_per_run_units?: number;
  max_per_period_units?: number;
  period?: string;
  channels?: string[];
  realm?: string;
  peer?: string;
  operation?: string;
  authorization_form?: string;
  idempotency_required?: boolean;
  recovery_required?: boolean;
  receipt_before_success?: boolean;
  single_use_capability?: boolean;
}

/** `runx.authority_term.v1` after schema validation. */
export interface AuthorityTerm {
  term_id: string;
  principal_ref: Reference;
  resource_ref: Reference;
  resource_family: string;
  verbs: string[];
  bounds: { effect_limits: EffectLimit[] } & Record<string, Json | EffectLimit[]>;
  conditions: JsonRecord[];
  approvals: JsonRecord[];
  capabilities: string[];
  expires_at?: string;
  issued_by_ref: Reference;
  credential_ref?: Reference;
}

/** A refusal of the authority (the input does not satisfy the payment contract). */
export function authorityDenied(message: string, path: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", message, { path });
}

/** `sha256:`-less hex digest of the canonical JSON of a value. */
export function digestHex(value: unknown): string {
  return hashCanonical(value).slice("sha256:".length);
}

const isWildcard = (value: string): boolean => value.includes("*");

/** The single payment effect limit of a term. */
export function paymentLimit(term: AuthorityTerm, path: string): EffectLimit {
  const limits = term.bounds.effect_limits.filter((limit) => limit.family === PAYMENT_FAMILY);
  if (limits.length !== 1) {
    throw authorityDenied(
      limits.length === 0
        ? `${path} has no payment effect limit`
        : `${path} must contain exactly one payment effect limit`,
      `${path}.bounds.effect_limits`,
    );
  }
  return limits[0] as EffectLimit;
}

/** Refuses a term whose expiry is not after `now`. */
export function checkNotExpired(term: AuthorityTerm, now: Date, path: string): void {
  if (term.expires_at === undefined) return;
  const expires = Date.parse(term.expires_at);
  if (Number.isNaN(expires)) {
    throw authorityDenied(`${path}.expires_at is not a valid timestamp`, `${path}.expires_at`);
  }
  if (expires <= now.getTime()) {
    throw authorityDenied(
      `${path} expired at ${term.expires_at} (now ${now.toISOString()})`,
      `${path}.expires_at`,
    );
  }
}

/** Checks a parent term is a bounded, unexpired single-use payment authority; returns its limit. */
export function validateParent(term: AuthorityTerm, now: Date, path: string): EffectLimit {
  const limit = paymentLimit(term, path);
  const problems: string[] = [];
  if (term.resource_family !== "effect") problems.push("resource_family must be effect");
  for (const verb of ["prepare", "commit"]) {
    if (!term.verbs.includes(verb)) problems.push(`verbs must include ${verb}`);
  }
  if (!term.capabilities.includes("effect_single_use_capability")) {
    problems.push("capabilities must include effect_single_use_capability");
  }
  if (
    limit.authorization_form !== "single_use_capability" ||
    limit.single_use_capability !== true
  ) {
    problems.push("the payment limit must be a single_use_capability authorization");
  }
  if (limit.max_per_call_units === undefined) problems.push("max_per_call_units is required");
  if (limit.max_per_run_units === undefined && limit.max_per_period_units === undefined) {
    problems.push("an aggregate ceiling (max_per_run_units or max_per_period_units) is required");
  }
  const channels = limit.channels ?? [];
  if (channels.length === 0 || channels.some(isWildcard)) {
    problems.push("channels must name concrete rails");
  }
  if (limit.peer === undefined || isWildcard(limit.peer)) problems.push("peer must be concrete");
  if (limit.operation === undefined || isWildcard(limit.operation)) {
    problems.push("operation must be concrete");
  }
  if (problems.length > 0) {
    throw authorityDenied(
      `${path} is not a bounded single-use payment authority: ${problems.join("; ")}`,
      path,
    );
  }
  checkNotExpired(term, now, path);
  return limit;
}

/** The exact payment a quote binds. */
export interface QuotedPayment {
  amount_minor: number;
  currency: string;
  rail: string;
  counterparty: string;
  operation: string;
  realm: string | null;
}

/** The single-use child authority a quote requests beneath `parent`. */
export function requestedAuthority(
  parent: AuthorityTerm,
  parentLimit: EffectLimit,
  payment: QuotedPayment,
  idempotencySeed: string,
): AuthorityTerm {
  const limit: EffectLimit = {
    ...parentLimit,
    unit: payment.currency,
    max_per_call_units: payment.amount_minor,
    max_per_run_units: payment.amount_minor,
    channels: [payment.rail],
    peer: payment.counterparty,
    operation: payment.operation,
    authorization_form: "single_use_capability",
    idempotency_required: true,
    recovery_required: true,
    receipt_before_success: true,
    single_use_capability: true,
  };
  if (payment.realm === null) delete limit.realm;
  else limit.realm = payment.realm;
  // A per-period ceiling of the parent stays, clamped to this one payment.
  if (limit.max_per_period_units !== undefined) limit.max_per_period_units = payment.amount_minor;
  const bounds = { ...parent.bounds, effect_limits: [limit] };
  const term: AuthorityTerm = {
    term_id: `payment-request-${digestHex({
      parent_term_id: parent.term_id,
      bounds,
      idempotency_seed: idempotencySeed,
    })}`,
    principal_ref: parent.principal_ref,
    resource_ref: parent.resource_ref,
    resource_family: "effect",
    verbs: ["prepare", "commit"],
    bounds,
    conditions: parent.conditions,
    approvals: parent.approvals,
    capabilities: ["effect_single_use_capability"],
    issued_by_ref: parent.issued_by_ref,
  };
  if (parent.expires_at !== undefined) term.expires_at = parent.expires_at;
  if (parent.credential_ref !== undefined) term.credential_ref = parent.credential_ref;
  return term;
}

const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b);

/** Why a child effect limit widens its parent limit, or undefined when it does not. */
function limitViolation(child: EffectLimit, parent: EffectLimit): string | undefined {
  const label = `${child.family} limit`;
  if (child.unit !== parent.unit) return `${label} unit ${child.unit} is not ${parent.unit}`;
  for (const key of ["max_per_call_units", "max_per_run_units", "max_per_period_units"] as const) {
    const ceiling = parent[key];
    if (ceiling === undefined) continue;
    const value = child[key];
    if (value === undefined) return `${label} drops the parent ${key} ceiling`;
    if (value > ceiling) return `${label} ${key} ${value} exceeds the parent ceiling ${ceiling}`;
  }
  if (parent.channels !== undefined) {
    const channels = child.channels ?? [];
    if (channels.length === 0) return `${label} drops the parent rail restriction`;
    const outside = channels.filter((rail) => !(parent.channels ?? []).includes(rail));
    if (outside.length > 0) return `${label} rails ${outside.join(", ")} are outside the parent`;
  }
  for (const key of ["realm", "peer", "operation", "period", "authorization_form"] as const) {
    const bound = parent[key];
    if (bound !== undefined && child[key] !== bound) {
      return `${label} ${key} ${String(child[key] ?? "(none)")} is not the parent's ${bound}`;
    }
  }
  for (const key of [
    "idempotency_required",
    "recovery_required",
    "receipt_before_success",
    "single_use_capability",
  ] as const) {
    if (parent[key] === true && child[key] !== true) return `${label} drops ${key}`;
  }
  return undefined;
}

/** Why `child` is not a subset of `parent`, or undefined when it is. */
export function subsetViolation(child: AuthorityTerm, parent: AuthorityTerm): string | undefined {
  if (child.resource_family !== parent.resource_family) return "resource family differs";
  if (
    child.resource_ref.type !== parent.resource_ref.type ||
    child.resource_ref.uri !== parent.resource_ref.uri
  ) {
    return "resource reference differs";
  }
  const extraVerbs = child.verbs.filter((verb) => !parent.verbs.includes(verb));
  if (extraVerbs.length > 0) return `verbs ${extraVerbs.join(", ")} are outside the parent`;
  const extraCaps = child.capabilities.filter((cap) => !parent.capabilities.includes(cap));
  if (extraCaps.length > 0) return `capabilities ${extraCaps.join(", ")} are outside the parent`;
  const kept = (items: JsonRecord[], parents: JsonRecord[]): boolean =>
    parents.every((p) => items.some((c) => sameJson(c, p)));
  if (!kept(child.conditions, parent.conditions)) return "a parent condition is dropped";
  if (!kept(child.approvals, parent.approvals)) return "a parent approval is dropped";
  if (parent.expires_at !== undefined) {
    if (child.expires_at === undefined) return "the child has no expiry but the parent does";
    if (Date.parse(child.expires_at) > Date.parse(parent.expires_at)) {
      return "the child outlives the parent";
    }
  }
  const keys = new Set([...Object.keys(child.bounds), ...Object.keys(parent.bounds)]);
  keys.delete("effect_limits");
  for (const key of keys) {
    if (!sameJson(child.bounds[key] ?? null, parent.bounds[key] ?? null)) {
      return `bound ${key} differs from the parent`;
    }
  }
  for (const limit of child.bounds.effect_limits) {
    const candidates = parent.bounds.effect_limits.filter((p) => p.family === limit.family);
    if (candidates.length !== 1) return `no single parent ${limit.family} limit bounds the child`;
    const violation = limitViolation(limit, candidates[0] as EffectLimit);
    if (violation !== undefined) return violation;
  }
  return undefined;
}

/** A proof that a minted child is a subset of its parent. */
export function subsetProof(
  child: AuthorityTerm,
  parent: AuthorityTerm,
  checkedAt: string,
): JsonRecord {
  return {
    parent_authority_ref: parent.resource_ref,
    comparison_algorithm: PAYMENT_SUBSET_ALGORITHM,
    result: "subset",
    compared_terms: [
      { child_term_id: child.term_id, parent_term_id: parent.term_id, relation: "subset" },
    ],
    checked_at: checkedAt,
  };
}

/**
 * Mints the child term `requested` asks for beneath `parent` — the parent's conditions,
 * approvals and issuer are kept whatever the request says — and proves it a subset; throws
 * (INPUT_INVALID) when it would widen the parent.
 */
export function mintChild(
  parent: AuthorityTerm,
  requested: AuthorityTerm,
  checkedAt: string,
): { child: AuthorityTerm; proof: JsonRecord } {
  const content = {
    parent_term_id: parent.term_id,
    principal_ref: requested.principal_ref,
    resource_ref: requested.resource_ref,
    resource_family: requested.resource_family,
    verbs: requested.verbs,
    capabilities: requested.capabilities,
    bounds: requested.bounds,
    expires_at: requested.expires_at ?? null,
  };
  const child: AuthorityTerm = {
    term_id: `mint-${digestHex(content)}`,
    principal_ref: requested.principal_ref,
    resource_ref: requested.resource_ref,
    resource_family: requested.resource_family,
    verbs: requested.verbs,
    bounds: requested.bounds,
    conditions: parent.conditions,
    approvals: parent.approvals,
    capabilities: requested.capabilities,
    issued_by_ref: parent.issued_by_ref,
  };
  if (requested.expires_at !== undefined) child.expires_at = requested.expires_at;
  if (parent.credential_ref !== undefined) child.credential_ref = parent.credential_ref;
  const violation = subsetViolation(child, parent);
  if (violation !== undefined) {
    throw authorityDenied(
      `requested payment authority is not a subset of the parent authority: ${violation}`,
      "payment_quote_packet.requested_payment_authority",
    );
  }
  return { child, proof: subsetProof(child, parent, checkedAt) };
}
