/**
 * Unsealed receipts for one executed skill run or graph step, and for graph runs, in the
 * exact upstream layout (one decision `dec_<step>`, one observation act `act_<step>`, a
 * `step_outcome` criterion rolled up into the seal). Pure: facts in, receipt out.
 */
import { hashCanonical, RECEIPT_CANONICALIZATION, sha256Prefixed } from "./canonical.js";
import { childReceiptReference } from "./identity.js";
import type {
  AuthorityTerm,
  ClosureDisposition,
  Commitment,
  CriterionBinding,
  ExecutionBoundaryKind,
  InputContext,
  Lineage,
  JsonObject,
  Receipt,
  Reference,
  SyncPoint,
} from "./model.js";
import { RECEIPT_SCHEMA } from "./model.js";
import type { UnsealedReceipt } from "./seal.js";
import { decodeJsonObject } from "./shape.js";

/**
 * The enforcement profile hash of the local runtime: sha256 over
 * `{profile_id: "runx.runtime.enforcement.profile.v1"}` with empty redaction, setup and
 * teardown refs. Upstream writes this value into every runtime receipt.
 */
export const DEFAULT_ENFORCEMENT_PROFILE_HASH =
  "sha256:635fdb0a7eef93911e3c6bd0b25b5e635edba32e0259133042b3a5f1fb19394e";

/** The principal every local run acts as. */
export const LOCAL_RUNTIME_ACTOR: Readonly<Reference> = Object.freeze({
  type: "principal",
  uri: "runx:principal:local_runtime",
});

/** Optional lineage beyond children: resume chaining and fanout sync points. */
export interface LineageExtras {
  previous?: Reference;
  resume_ref?: Reference;
  sync?: readonly SyncPoint[];
}

function lineageOf(children: Reference[], extras: LineageExtras | undefined): Lineage {
  return {
    ...(extras?.previous !== undefined ? { previous: extras.previous } : {}),
    children,
    sync: [...(extras?.sync ?? [])],
    ...(extras?.resume_ref !== undefined ? { resume_ref: extras.resume_ref } : {}),
  };
}

/** Why a run was refused before it started (spec B.7), kept in unsigned metadata. */
export interface RefusalFailure {
  code: string;
  message: string;
  prepared_context_digest: string;
  stage: string;
}

/** What the runtime observed about one executed skill run or graph step. */
export interface SkillReceiptFacts {
  /** Skill or graph name (`hrn_<name>_<step>`). */
  name: string;
  /** Step (node / runner) id; the act is `act_<step>`. */
  step: string;
  createdAt: string;
  disposition: ClosureDisposition;
  /** Seal reason code, e.g. `process_closed`, `process_failed`, `preflight_refused`. */
  reasonCode: string;
  /** Seal summary; defaults to `step <step> completed`. */
  sealSummary?: string;
  /** Whether the step outcome criterion verified; defaults to `disposition === "closed"`. */
  succeeded?: boolean;
  /** Outcome text on the act and criterion; required wording comes from the runner on failure. */
  outcomeSummary?: string;
  /** The declared outputs the step claims (its identity), `{}` when none. */
  claim?: JsonObject;
  commitments?: readonly Commitment[];
  /** Child receipts this step commits (ids into its identity, digests into lineage). */
  children?: readonly Receipt[];
  subjectKind?: string;
  inputContext?: InputContext;
  signals?: readonly Reference[];
  grantRefs?: readonly Reference[];
  scopeRefs?: readonly Reference[];
  executionBoundary?: ExecutionBoundaryKind;
  /** Unsigned runtime read aid. */
  metadata?: JsonObject;
  /**
   * Real idempotency commitments for a live invocation. Absent → upstream's deterministic
   * placeholders (`sha256:<name>-<step>-intent|trigger|content`), which harness replays pin.
   */
  idempotency?: Receipt["idempotency"];
  /** Resume chaining and fanout sync points (`lineage.previous`, `resume_ref`, `sync`). */
  lineage?: LineageExtras;
  /** A refusal before execution; stored as `metadata.failure`. */
  failure?: RefusalFailure;
  /** Signed authority terms, e.g. host-attested human approvals that released this work. */
  authorityTerms?: readonly AuthorityTerm[];
  /** The step outcome's verification refs (provider effect proof, money movement). */
  verificationRefs?: readonly Reference[];
  /** What the act worked from (a refund's original charge receipt). */
  sourceRefs?: readonly Reference[];
}

/** The step identity (`subject.ref.locator`): status, claimed outputs and child ids. */
export function stepIdentityDigest(input: {
  succeeded: boolean;
  claim?: JsonObject;
  childIds?: readonly string[];
}): string {
  const material: Record<string, unknown> = {
    status: input.succeeded ? "success" : "failure",
    claim: input.claim ?? {},
  };
  if (input.childIds !== undefined && input.childIds.length > 0) {
    material.children = input.childIds.map((id) => `runx:receipt:${id}`);
  }
  return hashCanonical(material);
}

function authorityOf(facts: {
  authorityTerms?: readonly AuthorityTerm[];
  grantRefs?: readonly Reference[];
  scopeRefs?: readonly Reference[];
  executionBoundary?: ExecutionBoundaryKind;
}): Receipt["authority"] {
  return {
    actor_ref: { ...LOCAL_RUNTIME_ACTOR },
    grant_refs: [...(facts.grantRefs ?? [])],
    scope_refs: [...(facts.scopeRefs ?? [])],
    authority_proof_refs: [],
    attenuation: { parent_authority_ref: null, subset_proof: null },
    terms: [...(facts.authorityTerms ?? [])],
    enforcement: {
      profile_hash: DEFAULT_ENFORCEMENT_PROFILE_HASH,
      ...(facts.executionBoundary === undefined
        ? {}
        : { execution_boundary: { kind: facts.executionBoundary } }),
      redaction_refs: [],
      setup_refs: [],
      teardown_refs: [],
    },
  };
}

function idempotencyOf(name: string, node: string): Receipt["idempotency"] {
  return {
    intent_key: `sha256:${name}-${node}-intent`,
    trigger_fingerprint: `sha256:${name}-${node}-trigger`,
    content_hash: `sha256:${name}-${node}-content`,
  };
}

function metadataOf(facts: SkillReceiptFacts): JsonObject | undefined {
  if (facts.metadata === undefined && facts.failure === undefined) return undefined;
  const metadata: JsonObject = { ...(facts.metadata ?? {}) };
  if (facts.failure !== undefined) metadata.failure = { ...facts.failure };
  return decodeJsonObject(metadata, "$.metadata");
}

/** An unsealed receipt for one executed skill run or graph step. */
export function buildSkillReceipt(facts: SkillReceiptFacts): UnsealedReceipt {
  const { name, step, createdAt } = facts;
  const succeeded = facts.succeeded ?? facts.disposition === "closed";
  const outcome =
    facts.outcomeSummary ?? (succeeded ? "step completed successfully" : "step failed");
  const children = facts.children ?? [];
  const binding: CriterionBinding = {
    criterion_id: "step_outcome",
    status: succeeded ? "verified" : "failed",
    evidence_refs: [],
    verification_refs: [...(facts.verificationRefs ?? [])],
    summary: outcome,
  };
  const actId = `act_${step}`;
  const metadata = metadataOf(facts);
  return {
    schema: RECEIPT_SCHEMA,
    created_at: createdAt,
    canonicalization: RECEIPT_CANONICALIZATION,
    idempotency: facts.idempotency ?? idempotencyOf(name, step),
    subject: {
      kind: facts.subjectKind ?? "skill",
      ref: {
        type: "harness",
        uri: `hrn_${name}_${step}`,
        locator: stepIdentityDigest({
          succeeded,
          claim: facts.claim ?? {},
          childIds: children.map((child) => child.id),
        }),
      },
      ...(facts.inputContext === undefined ? {} : { input_context: { ...facts.inputContext } }),
      commitments: [...(facts.commitments ?? [])],
    },
    authority: authorityOf(facts),
    signals: [...(facts.signals ?? [])],
    decisions: [
      {
        decision_id: `dec_${step}`,
        choice: "open",
        inputs: { signal_refs: [], target_ref: null, opportunity_refs: [], selection_ref: null },
        proposed_intent: {
          purpose: `Open runtime node ${step}`,
          legitimacy: "Local graph execution requested this node",
          success_criteria: [],
          constraints: [],
          derived_from: [],
        },
        selected_act_id: actId,
        selected_harness_ref: null,
        justification: { summary: "runtime graph planner selected this node", evidence_refs: [] },
        closure: null,
        artifact_refs: [],
      },
    ],
    acts: [
      {
        id: actId,
        form: "observation",
        intent: {
          purpose: `Run graph step ${step}`,
          legitimacy: "Runtime graph execution was admitted by the local harness",
          success_criteria: [
            {
              criterion_id: "step_outcome",
              statement: "runtime step completes successfully",
              required: true,
            },
          ],
          constraints: [],
          derived_from: [],
        },
        summary: `Executed graph step ${step}`,
        criterion_bindings: [binding],
        source_refs: [...(facts.sourceRefs ?? [])],
        target_refs: [],
        artifact_refs: [],
        closure: {
          disposition: facts.disposition,
          reason_code: "step_outcome",
          summary: outcome,
          closed_at: createdAt,
        },
      },
    ],
    seal: {
      disposition: facts.disposition,
      reason_code: facts.reasonCode,
      summary: facts.sealSummary ?? `step ${step} completed`,
      closed_at: createdAt,
      last_observed_at: createdAt,
      criteria: [{ ...binding, verification_refs: [...binding.verification_refs] }],
    },
    lineage: lineageOf(children.map(childReceiptReference), facts.lineage),
    ...(metadata === undefined ? {} : { metadata }),
  };
}

/** Facts of a refused run (spec B.7): the package resolved but preparation was blocked. */
export type RefusalReceiptFacts = Omit<
  SkillReceiptFacts,
  "disposition" | "reasonCode" | "succeeded" | "failure"
> & { failure: RefusalFailure };

/** An unsealed `blocked` / `preflight_refused` receipt; the failure goes to metadata only. */
export function buildRefusalReceipt(facts: RefusalReceiptFacts): UnsealedReceipt {
  return buildSkillReceipt({
    ...facts,
    disposition: "blocked",
    reasonCode: "preflight_refused",
    succeeded: false,
    sealSummary: facts.sealSummary ?? facts.failure.message,
    outcomeSummary: facts.outcomeSummary ?? facts.failure.message,
  });
}

/** What the runtime observed about a whole graph run. */
export interface GraphReceiptFacts {
  name: string;
  createdAt: string;
  /** The current receipt of every step, in step order. */
  children: readonly Receipt[];
  disposition?: ClosureDisposition;
  reasonCode?: string;
  sealSummary?: string;
  metadata?: JsonObject;
  /** Live-run idempotency commitments (placeholders otherwise, as upstream's harness pins). */
  idempotency?: Receipt["idempotency"];
  lineage?: LineageExtras;
  /** Signed authority terms (host-attested human approvals). */
  authorityTerms?: readonly AuthorityTerm[];
}

/** An unsealed graph receipt: no acts, children committed by id (locator) and digest (lineage). */
export function buildGraphReceipt(facts: GraphReceiptFacts): UnsealedReceipt {
  const childRefs = facts.children.map(childReceiptReference);
  return {
    schema: RECEIPT_SCHEMA,
    created_at: facts.createdAt,
    canonicalization: RECEIPT_CANONICALIZATION,
    idempotency: facts.idempotency ?? idempotencyOf(facts.name, "graph"),
    subject: {
      kind: "graph",
      ref: {
        type: "harness",
        uri: `hrn_${facts.name}_graph`,
        // The JSON array of child receipt URIs (string arrays have one JSON form).
        locator: sha256Prefixed(JSON.stringify(childRefs.map((child) => child.uri))),
      },
      commitments: [],
    },
    authority: authorityOf(
      facts.authorityTerms === undefined ? {} : { authorityTerms: facts.authorityTerms },
    ),
    signals: [],
    decisions: [],
    acts: [],
    seal: {
      disposition: facts.disposition ?? "closed",
      reason_code: facts.reasonCode ?? "graph_closed",
      summary: facts.sealSummary ?? `graph ${facts.name} completed`,
      closed_at: facts.createdAt,
      last_observed_at: facts.createdAt,
      criteria: [],
    },
    lineage: lineageOf(childRefs, facts.lineage),
    ...(facts.metadata === undefined
      ? {}
      : { metadata: decodeJsonObject(facts.metadata, "$.metadata") }),
  };
}
