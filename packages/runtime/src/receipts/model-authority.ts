/**
 * The authority block of `runx.receipt.v1`: actor, grants, terms with their bounds,
 * attenuation and the enforcement profile. Same null-versus-omitted conventions as
 * `model.ts`; bounds members are all left out when empty.
 */
import type { JsonObject, ProofKind, Reference } from "./model-base.js";

/** Where an admitted act actually ran. */
export type ExecutionBoundaryKind =
  "trusted_host_process" | "deterministic_worker" | "native_capability" | "remote_provider";

/** The enforcement profile (hashed) and the refs it applied. */
export interface Enforcement {
  profile_hash: string;
  execution_boundary?: { kind: ExecutionBoundaryKind };
  redaction_refs: Reference[];
  setup_refs: Reference[];
  teardown_refs: Reference[];
}

/** A per-effect spending limit inside authority bounds. */
export interface AuthorityEffectLimit {
  family: string;
  unit: string;
  max_per_call_units?: number;
  max_per_run_units?: number;
  max_per_period_units?: number;
  period?: string;
  channels: string[];
  realm?: string;
  peer?: string;
  operation?: string;
  preflight_ttl_ms?: number;
  approval_threshold_units?: number;
  authorization_form?: "single_use_capability" | "external_signer";
  preflight_required?: boolean;
  commitment_required?: boolean;
  idempotency_required?: boolean;
  recovery_required?: boolean;
  receipt_before_success?: boolean;
  single_use_capability?: boolean;
}

/** Guards required for an effect family. */
export interface AuthorityEffectGuard {
  family: string;
  guard_kinds?: ("receipt_before_success" | "non_replay")[];
  proof_kinds?: ProofKind[];
}

/** Limits of an authority term; every member is skipped when empty. */
export interface AuthorityBounds {
  repo_path_globs?: string[];
  branch_patterns?: string[];
  filesystem_roots?: string[];
  network_destinations?: string[];
  deployment_environments?: string[];
  token_audiences?: string[];
  max_cost_units?: number;
  effect_limits?: AuthorityEffectLimit[];
  effects?: AuthorityEffectGuard[];
  max_runtime_ms?: number;
  max_fanout?: number;
  max_child_depth?: number;
}

/** A condition attached to a term. */
export interface AuthorityCondition {
  condition_id: string;
  predicate: string;
  refs?: Reference[];
  parameters?: JsonObject;
}

/** An approval attached to a term. */
export interface AuthorityApproval {
  approval_ref: Reference;
  approved_by_ref?: Reference;
  approved_at?: string;
  criterion_ids?: string[];
}

/** One granted permission. */
export interface AuthorityTerm {
  term_id: string;
  principal_ref: Reference;
  resource_ref: Reference;
  resource_family: string;
  verbs: string[];
  bounds: AuthorityBounds;
  conditions: AuthorityCondition[];
  approvals: AuthorityApproval[];
  capabilities: string[];
  expires_at?: string;
  issued_by_ref: Reference;
  credential_ref?: Reference;
}

/** Proof that a child authority is a subset of its parent. */
export interface AuthoritySubsetProof {
  parent_authority_ref: Reference;
  comparison_algorithm: string;
  result: "subset";
  compared_terms: { child_term_id: string; parent_term_id: string; relation: "equal" | "subset" }[];
  proof_ref?: Reference;
  checked_at: string;
}

/** Parent authority and the subset proof (both null for a root authority). */
export interface Attenuation {
  parent_authority_ref: Reference | null;
  subset_proof: AuthoritySubsetProof | null;
}

/** What allowed the run. */
export interface Authority {
  actor_ref: Reference;
  grant_refs: Reference[];
  scope_refs: Reference[];
  authority_proof_refs: Reference[];
  attenuation: Attenuation;
  mandate_ref?: Reference;
  terms: AuthorityTerm[];
  enforcement: Enforcement;
}
