/**
 * The `runx.receipt.v1` data model. Optional members come in two kinds and the
 * difference changes the bytes (and so the id and digest):
 *
 * - `T | null` members are always written, as `null` when empty;
 * - `?` members are left out entirely when absent.
 *
 * Arrays are always written, even when empty, unless the type says `?` (a few authority
 * bounds are skipped when empty). `serializeReceipt` writes the stored file form: compact
 * JSON in upstream struct field order (see `shape.ts`).
 */
import type { Authority } from "./model-authority.js";
import type { JsonObject, Reference } from "./model-base.js";

export type * from "./model-base.js";
export type * from "./model-authority.js";

/** The receipt schema name. */
export const RECEIPT_SCHEMA = "runx.receipt.v1";

/** How a run, act or decision ended. */
export type ClosureDisposition =
  "closed" | "deferred" | "superseded" | "declined" | "blocked" | "failed" | "killed" | "timed_out";

/** The outcome of an act or decision. */
export interface Closure {
  disposition: ClosureDisposition;
  reason_code: string;
  summary: string;
  closed_at: string;
}

/** A declared success criterion. */
export interface SuccessCriterion {
  criterion_id: string;
  statement: string;
  required: boolean;
}

/** Why something is done and what counts as done. */
export interface Intent {
  purpose: string;
  legitimacy: string;
  success_criteria: SuccessCriterion[];
  constraints: string[];
  derived_from: Reference[];
}

/** The state of one criterion. */
export type CriterionStatus = "verified" | "failed" | "pending" | "not_applicable" | "unknown";

/** Evidence that binds a criterion to an outcome. */
export interface CriterionBinding {
  criterion_id: string;
  status: CriterionStatus;
  evidence_refs: Reference[];
  verification_refs: Reference[];
  summary?: string;
}

/** A planner choice. */
export type DecisionChoice =
  "open" | "continue" | "spawn_child" | "escalate" | "defer" | "close" | "decline" | "monitor";

/** What a decision looked at. */
export interface DecisionInputs {
  signal_refs: Reference[];
  target_ref: Reference | null;
  opportunity_refs: Reference[];
  selection_ref: Reference | null;
}

/** Why a decision was taken. */
export interface DecisionJustification {
  summary: string;
  evidence_refs: Reference[];
}

/** One step of reasoning, inline in the receipt. */
export interface Decision {
  decision_id: string;
  choice: DecisionChoice;
  inputs: DecisionInputs;
  proposed_intent: Intent;
  selected_act_id: string | null;
  selected_harness_ref: Reference | null;
  justification: DecisionJustification;
  closure: Closure | null;
  artifact_refs: Reference[];
}

/** The shape of an act. */
export type ActForm = "revision" | "reply" | "review" | "observation" | "verification";

/** Which agent produced an act; each member may be unknown. */
export interface RunnerProvenance {
  provider: string | null;
  model: string | null;
  prompt_version: string | null;
}

/** A surface an act changes or reads. */
export interface TargetSurface {
  surface_ref: Reference;
  mutating: boolean;
  rationale?: string;
}

/** What a revision was asked to change. */
export interface ChangeRequest {
  request_id: string;
  summary: string;
  target_surfaces: TargetSurface[];
  success_criteria: SuccessCriterion[];
}

/** How a revision planned to change it. */
export interface ChangePlan {
  plan_id: string;
  summary: string;
  steps: string[];
  risks: string[];
}

/** Outcome of a verification. */
export type VerificationStatus = "passed" | "failed" | "pending" | "not_applicable" | "missing";

/** One verification check. */
export interface VerificationCheck {
  check_id: string;
  criterion_ids: string[];
  status: VerificationStatus;
  summary?: string;
  checked_refs: Reference[];
  evidence_refs: Reference[];
  verified_at?: string;
}

/** A verification result. */
export interface Verification {
  schema?: string;
  verification_id?: string;
  status: VerificationStatus;
  checks: VerificationCheck[];
  verified_at?: string;
  evidence_refs: Reference[];
}

/** Details carried only by `revision` acts. */
export interface RevisionDetails {
  change_request: ChangeRequest;
  change_plan: ChangePlan;
  target_surfaces: TargetSurface[];
  invariants: string[];
  verification?: Verification;
  handoff_refs: Reference[];
  revision_refs: Reference[];
}

/** Details carried only by `verification` acts. */
export interface VerificationDetails {
  criterion_ids: string[];
  verification: Verification;
  deployment_ref?: Reference;
}

/** What was done. */
export interface Act {
  id: string;
  form: ActForm;
  intent: Intent;
  summary: string;
  criterion_bindings: CriterionBinding[];
  by?: RunnerProvenance;
  source_refs: Reference[];
  target_refs: Reference[];
  artifact_refs: Reference[];
  context_ref?: Reference;
  closure: Closure;
  revision?: RevisionDetails;
  verification?: VerificationDetails;
}

/** The single outcome of the run. */
export interface Seal {
  disposition: ClosureDisposition;
  reason_code: string;
  summary: string;
  closed_at: string;
  last_observed_at: string;
  criteria: CriterionBinding[];
}

/** A fan-out gate decision. */
export interface SyncPoint {
  group_id: string;
  strategy: "all" | "any" | "quorum";
  decision: "proceed" | "halt" | "pause" | "escalate";
  rule_fired: string;
  reason: string;
  branch_count: number;
  success_count: number;
  failure_count: number;
  required_successes: number;
  branch_receipts: string[];
  gate?: JsonObject;
}

/** Links to other receipts. Children are `{type: receipt, uri: runx:receipt:<id>, locator: <digest>}`. */
export interface Lineage {
  parent?: Reference;
  previous?: Reference;
  children: Reference[];
  sync: SyncPoint[];
  resume_ref?: Reference;
}

/** Who sealed the receipt. */
export type IssuerType = "local" | "hosted" | "ci" | "verifier";

/** The sealing identity: `public_key_sha256` is `sha256:` + hex of the raw 32-byte key. */
export interface Issuer {
  type: IssuerType;
  kid: string;
  public_key_sha256: string;
}

/** `value` is `base64:<base64url>` or the local pseudo form `sig:<body digest>`. */
export interface Signature {
  alg: "Ed25519";
  value: string;
}

/** Deduplication keys (every value starts with `sha256:`). */
export interface Idempotency {
  intent_key: string;
  trigger_fingerprint: string;
  content_hash: string;
}

/** Which bytes a commitment hashes. */
export type CommitmentScope = "input" | "output" | "stdout" | "stderr" | "error";

/** A hash commitment over one stream or value. */
export interface Commitment {
  scope: CommitmentScope;
  algorithm: "sha256";
  value: string;
  canonicalization: string;
}

/** Where the run's input came from. */
export interface InputContext {
  source: string;
  preview: string;
  value_hash: string;
}

/** What ran. */
export interface Subject {
  kind: string;
  ref: Reference;
  input_context?: InputContext;
  commitments: Commitment[];
}

/** A sealed (or, before sealing, unsealed) `runx.receipt.v1`. */
export interface Receipt {
  schema: typeof RECEIPT_SCHEMA;
  id: string;
  created_at: string;
  canonicalization: string;
  issuer: Issuer;
  signature: Signature;
  digest: string;
  idempotency: Idempotency;
  subject: Subject;
  authority: Authority;
  signals: Reference[];
  decisions: Decision[];
  acts: Act[];
  seal: Seal;
  lineage?: Lineage;
  /** Unsigned runtime read aid; never part of the id or digest. */
  metadata?: JsonObject;
}
