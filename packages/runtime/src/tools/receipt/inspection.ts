/**
 * Upstream's receipt inspection projection (the `receipt_details` rows of
 * `runx.receipt.proof.v1`): what a receipt's signed body says, as reference URIs and labels
 * only — never input values, payloads or credential material. Reference lists are
 * deduplicated and sorted, as upstream projects them.
 */
import type { Receipt, ReceiptStatus } from "../../receipts/index.js";
import type { Reference } from "../../receipts/model-base.js";
import type { AuthorityTerm } from "../../receipts/model-authority.js";
import type { JsonRecord } from "../types.js";

function uris(references: readonly Reference[]): string[] {
  return [...new Set(references.map((r) => r.uri))].sort();
}

function scopeOf(reference: Reference): string {
  const uri = reference.uri;
  const bare = uri.startsWith("runx:scope_admission:")
    ? uri.slice("runx:scope_admission:".length)
    : uri.startsWith("runx:scope:")
      ? uri.slice("runx:scope:".length)
      : uri;
  return bare.replaceAll(".", ":");
}

interface ExercisedScope {
  scope: string;
  source: string;
  term_id: string | null;
  resource_ref: string | null;
}

function termScopes(term: AuthorityTerm): ExercisedScope[] {
  return term.verbs.map((verb) => ({
    scope: `${term.resource_family}:${verb}`,
    source: "authority_term",
    term_id: term.term_id,
    resource_ref: term.resource_ref.uri,
  }));
}

/** Orders exercised scopes as upstream's derived ordering does: field by field, absent first. */
function compareScopes(a: ExercisedScope, b: ExercisedScope): number {
  for (const key of ["scope", "source", "term_id", "resource_ref"] as const) {
    const x = a[key];
    const y = b[key];
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

function authority(receipt: Receipt): JsonRecord {
  const a = receipt.authority;
  const seen = new Map<string, ExercisedScope>();
  for (const scope of [
    ...a.scope_refs.map((ref) => ({
      scope: scopeOf(ref),
      source: "scope_ref",
      term_id: null,
      resource_ref: ref.uri,
    })),
    ...a.terms.flatMap(termScopes),
  ]) {
    seen.set(JSON.stringify(scope), scope);
  }
  return {
    actor_ref: a.actor_ref.uri,
    grant_refs: uris(a.grant_refs),
    scope_refs: uris(a.scope_refs),
    exercised_scopes: [...seen.values()].sort(compareScopes) as unknown as JsonRecord[],
    authority_proof_refs: uris(a.authority_proof_refs),
    approval_refs: [
      ...new Set(a.terms.flatMap((t) => t.approvals.map((ap) => ap.approval_ref.uri))),
    ].sort(),
    term_count: a.terms.length,
    parent_authority_ref: a.attenuation.parent_authority_ref?.uri ?? null,
    subset_proof_present: a.attenuation.subset_proof !== null,
    enforcement_profile_hash: a.enforcement.profile_hash,
    redaction_refs: uris(a.enforcement.redaction_refs),
    credential_ref_count: a.terms.filter((t) => t.credential_ref !== undefined).length,
  };
}

/** The inspection of one receipt whose verification status is `status`. */
export function receiptInspection(receipt: Receipt, status: ReceiptStatus): JsonRecord {
  const decisions = receipt.decisions.map((d) => ({
    id: d.decision_id,
    choice: d.choice,
    selected_act_id: d.selected_act_id,
    summary: d.justification.summary,
    evidence_refs: uris(d.justification.evidence_refs),
    artifact_refs: uris(d.artifact_refs),
  }));
  const acts = receipt.acts.map((act) => ({
    id: act.id,
    form: act.form,
    purpose: act.intent.purpose,
    legitimacy: act.intent.legitimacy,
    summary: act.summary,
    disposition: act.closure.disposition,
    reason_code: act.closure.reason_code,
    source_refs: uris(act.source_refs),
    target_refs: uris(act.target_refs),
    artifact_refs: uris(act.artifact_refs),
    criterion_statuses: act.criterion_bindings.map((c) => ({
      criterion_id: c.criterion_id,
      status: c.status,
      evidence_refs: uris(c.evidence_refs),
      verification_refs: uris(c.verification_refs),
    })),
    context_ref_present: act.context_ref !== undefined,
  }));
  const lineage = receipt.lineage;
  const lineageRefs =
    lineage === undefined
      ? []
      : uris([
          ...(lineage.parent !== undefined ? [lineage.parent] : []),
          ...(lineage.previous !== undefined ? [lineage.previous] : []),
          ...lineage.children,
        ]);
  return {
    id: receipt.id,
    receipt_ref: `runx:receipt:${receipt.id}`,
    subject_kind: receipt.subject.kind,
    subject_ref: receipt.subject.ref.uri,
    created_at: receipt.created_at,
    status: receipt.seal.disposition,
    verification: { status },
    authority: authority(receipt),
    decisions,
    acts,
    artifact_refs: [
      ...new Set([...decisions, ...acts].flatMap((entry) => entry.artifact_refs)),
    ].sort(),
    lineage_refs: lineageRefs,
    seal_reason_code: receipt.seal.reason_code,
    seal_summary: receipt.seal.summary,
  };
}
