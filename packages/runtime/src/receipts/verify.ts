/**
 * Per-receipt verification (spec B.6). Structural checks look at the body alone; proof
 * checks add the recomputed body digest and the signature under a policy. The content
 * address is deliberately not a per-receipt finding: verdicts, store reads and writes and
 * sealing check it separately. Every finding names its check with a stable code.
 */
import {
  decodedBodyDigest,
  decodedContentId,
  receiptBodyDigest,
  receiptContentId,
} from "./identity.js";
import type { Act, Attenuation, Receipt, Reference } from "./model.js";
import { isPseudoSignature, policyVerifier } from "./verifier.js";
import type { ReceiptVerifier, SignatureFailure, SignaturePolicy } from "./verifier.js";

/** Stable finding codes (snake_case in JSON). */
export type FindingCode =
  | "empty_envelope_field"
  | "act_form_details_invalid"
  | "decision_selected_act_missing"
  | "seal_criterion_act_missing"
  | "seal_criterion_unbound"
  | "hash_commitment_invalid"
  | "authority_attenuation_invalid"
  | "effect_grant_evidence_missing"
  | "seal_digest_mismatch"
  | "child_receipt_ref_invalid"
  | "child_receipt_ref_malformed"
  | "child_receipt_missing"
  | "child_receipt_ambiguous"
  | "child_receipt_resolver_error"
  | "child_receipt_cycle"
  | "orphan_child_receipt"
  | "child_receipt_parent_mismatch"
  | "child_receipt_digest_mismatch"
  | "child_receipt_depth_limit"
  | "child_receipt_breadth_limit"
  | "duplicate_child_receipt"
  | "signature_verifier_missing"
  | "signature_invalid"
  | "signature_key_missing"
  | "signature_key_malformed"
  | "signature_key_hash_mismatch"
  | "signature_unsupported_issuer"
  | "signature_unsupported_algorithm"
  | "signature_malformed";

/** One failed check: code, JSONPath-like location, fixed explanation. */
export interface ReceiptFinding {
  code: FindingCode;
  path: string;
  message: string;
}

const SIGNATURE_FAILURES: Record<
  SignatureFailure,
  { code: FindingCode; path: string; message: string }
> = {
  missing_key: {
    code: "signature_key_missing",
    path: "issuer",
    message: "signature verifier could not resolve the issuer key",
  },
  malformed_key: {
    code: "signature_key_malformed",
    path: "issuer",
    message: "signature verifier resolved malformed issuer key material",
  },
  key_hash_mismatch: {
    code: "signature_key_hash_mismatch",
    path: "issuer",
    message: "issuer public key hash does not match the resolved verifier key",
  },
  unsupported_issuer: {
    code: "signature_unsupported_issuer",
    path: "issuer",
    message: "signature verifier does not support this issuer type",
  },
  unsupported_algorithm: {
    code: "signature_unsupported_algorithm",
    path: "signature.alg",
    message: "signature verifier does not support this algorithm",
  },
  malformed_signature: {
    code: "signature_malformed",
    path: "signature.value",
    message: "signature value is malformed",
  },
  signature_mismatch: {
    code: "signature_invalid",
    path: "signature.value",
    message: "signature does not verify against the receipt body commitment",
  },
};

/**
 * True for the codes of the tree checks (how receipts link), as opposed to the per-receipt
 * proof checks a receipt fails on its own.
 */
export function isTreeFinding(code: FindingCode): boolean {
  return (
    code.startsWith("child_receipt_") ||
    code === "orphan_child_receipt" ||
    code === "duplicate_child_receipt"
  );
}

/** True for the `signature_*` codes that make a verdict's signature check invalid. */
export function isSignatureFinding(code: FindingCode): boolean {
  return code.startsWith("signature_");
}

class Findings {
  readonly list: ReceiptFinding[] = [];
  push(code: FindingCode, path: string, message: string): void {
    this.list.push({ code, path, message });
  }
  nonEmpty(path: string, value: string): void {
    if (value === "") {
      this.push("empty_envelope_field", path, "receipt envelope fields must not be empty");
    }
  }
  sha256(path: string, value: string): void {
    if (!value.startsWith("sha256:")) {
      this.push("hash_commitment_invalid", path, "hash values must use the sha256: prefix");
    }
  }
}

function sameReference(left: Reference, right: Reference): boolean {
  const keys = [
    "type",
    "uri",
    "provider",
    "locator",
    "label",
    "observed_at",
    "proof_kind",
  ] as const;
  return keys.every((key) => left[key] === right[key]);
}

function checkAttenuation(findings: Findings, attenuation: Attenuation): void {
  const parent = attenuation.parent_authority_ref;
  const proof = attenuation.subset_proof;
  if (parent !== null && proof !== null && !sameReference(proof.parent_authority_ref, parent)) {
    findings.push(
      "authority_attenuation_invalid",
      "authority.attenuation.subset_proof.parent_authority_ref",
      "subset proof must cite the same parent authority ref",
    );
  } else if (parent !== null && proof === null) {
    findings.push(
      "authority_attenuation_invalid",
      "authority.attenuation.subset_proof",
      "parent authority refs require a subset proof",
    );
  } else if (parent === null && proof !== null) {
    findings.push(
      "authority_attenuation_invalid",
      "authority.attenuation.subset_proof",
      "root authority must not carry a subset proof",
    );
  }
}

function actReferences(act: Act): Reference[] {
  return [
    ...act.intent.derived_from,
    ...act.source_refs,
    ...act.target_refs,
    ...act.artifact_refs,
    ...(act.context_ref === undefined ? [] : [act.context_ref]),
    ...act.criterion_bindings.flatMap((b) => [...b.evidence_refs, ...b.verification_refs]),
  ];
}

function hasEffectEvidence(receipt: Receipt): boolean {
  const decisionRefs = receipt.decisions.flatMap((decision) => [
    ...decision.inputs.signal_refs,
    ...(decision.inputs.target_ref === null ? [] : [decision.inputs.target_ref]),
    ...decision.inputs.opportunity_refs,
    ...(decision.inputs.selection_ref === null ? [] : [decision.inputs.selection_ref]),
    ...decision.proposed_intent.derived_from,
    ...(decision.selected_harness_ref === null ? [] : [decision.selected_harness_ref]),
    ...decision.justification.evidence_refs,
    ...decision.artifact_refs,
  ]);
  return [...receipt.signals, ...decisionRefs, ...receipt.acts.flatMap(actReferences)].some(
    (reference) => reference.proof_kind === "effect_evidence",
  );
}

function checkActs(findings: Findings, acts: readonly Act[]): void {
  acts.forEach((act, index) => {
    const path = `acts[${index}]`;
    if (act.id === "")
      findings.push("act_form_details_invalid", `${path}.id`, "acts must carry a non-empty id");
    const revision = act.revision !== undefined;
    const verification = act.verification !== undefined;
    if (act.form === "revision" && (!revision || verification)) {
      findings.push(
        "act_form_details_invalid",
        path,
        "revision acts require revision details and must not carry verification details",
      );
    } else if (act.form === "verification" && (!verification || revision)) {
      findings.push(
        "act_form_details_invalid",
        path,
        "verification acts require verification details and must not carry revision details",
      );
    } else if (
      act.form !== "revision" &&
      act.form !== "verification" &&
      (revision || verification)
    ) {
      findings.push(
        "act_form_details_invalid",
        path,
        "reply, review, and observation acts must not carry revision or verification details",
      );
    }
  });
}

/** Structural checks of one receipt body (no hashing, no signatures). */
export function verifyReceiptStructure(receipt: Receipt): ReceiptFinding[] {
  const findings = new Findings();
  findings.nonEmpty("id", receipt.id);
  findings.nonEmpty("created_at", receipt.created_at);
  findings.nonEmpty("canonicalization", receipt.canonicalization);
  findings.nonEmpty("issuer.kid", receipt.issuer.kid);
  findings.sha256("issuer.public_key_sha256", receipt.issuer.public_key_sha256);
  findings.nonEmpty("signature.value", receipt.signature.value);
  checkAttenuation(findings, receipt.authority.attenuation);
  findings.sha256("authority.enforcement.profile_hash", receipt.authority.enforcement.profile_hash);
  findings.sha256("idempotency.intent_key", receipt.idempotency.intent_key);
  findings.sha256("idempotency.trigger_fingerprint", receipt.idempotency.trigger_fingerprint);
  findings.sha256("idempotency.content_hash", receipt.idempotency.content_hash);
  findings.sha256("digest", receipt.digest);
  receipt.subject.commitments.forEach((commitment, index) => {
    findings.sha256(`subject.commitments[${index}].value`, commitment.value);
  });
  (receipt.lineage?.children ?? []).forEach((child, index) => {
    if (child.type !== "receipt") {
      findings.push(
        "child_receipt_ref_invalid",
        `lineage.children[${index}].type`,
        "child receipt refs must use type receipt",
      );
    }
  });
  if (receipt.authority.grant_refs.length === 0 && hasEffectEvidence(receipt)) {
    findings.push(
      "effect_grant_evidence_missing",
      "authority.grant_refs",
      "receipts carrying effect evidence must identify the grant or capability refs that admitted the effect",
    );
  }
  checkActs(findings, receipt.acts);
  const actIds = new Set(receipt.acts.map((act) => act.id));
  receipt.decisions.forEach((decision, index) => {
    if (decision.selected_act_id !== null && !actIds.has(decision.selected_act_id)) {
      findings.push(
        "decision_selected_act_missing",
        `decisions[${index}].selected_act_id`,
        "selected act id must refer to an act in the receipt",
      );
    }
  });
  const criteria = new Set(
    receipt.acts.flatMap((act) => [
      ...act.criterion_bindings.map((binding) => binding.criterion_id),
      ...act.intent.success_criteria.map((criterion) => criterion.criterion_id),
    ]),
  );
  receipt.seal.criteria.forEach((criterion, index) => {
    if (receipt.acts.length > 0 && !criteria.has(criterion.criterion_id)) {
      findings.push(
        "seal_criterion_unbound",
        `seal.criteria[${index}].criterion_id`,
        "seal criterion must roll up an act criterion binding",
      );
    }
  });
  return findings.list;
}

/** Structural checks plus body digest and signature checks against `verifier`. */
export function verifyReceiptProofWith(
  receipt: Receipt,
  verifier: ReceiptVerifier | undefined,
  /** True when `receipt` is `decodeReceipt`'s own result (its body digest skips a decode). */
  decoded = false,
): ReceiptFinding[] {
  const findings = new Findings();
  findings.list.push(...verifyReceiptStructure(receipt));
  let digest: string;
  try {
    digest = decoded ? decodedBodyDigest(receipt) : receiptBodyDigest(receipt);
  } catch {
    findings.push("seal_digest_mismatch", "digest", "receipt body digest could not be recomputed");
    return findings.list;
  }
  if (receipt.digest !== digest) {
    findings.push(
      "seal_digest_mismatch",
      "digest",
      "receipt digest must match the canonical receipt body commitment",
    );
  }
  if (verifier === undefined) {
    findings.push(
      "signature_verifier_missing",
      "signature",
      "strict receipt proof verification requires an injected signature verifier",
    );
  } else if (receipt.signature.alg !== "Ed25519") {
    findings.push(
      "signature_unsupported_algorithm",
      "signature.alg",
      "unsupported receipt signature algorithm",
    );
  } else {
    const failure = verifier.verify(receipt.issuer, receipt.signature, digest);
    if (failure !== undefined) findings.list.push({ ...SIGNATURE_FAILURES[failure] });
  }
  return findings.list;
}

/** Structural and proof checks under a signature policy. */
export function verifyReceiptProof(
  receipt: Receipt,
  policy: SignaturePolicy,
  decoded = false,
): ReceiptFinding[] {
  return verifyReceiptProofWith(receipt, policyVerifier(policy), decoded);
}

/**
 * True when `id` equals the recomputed content address (`decoded`: `receipt` is
 * `decodeReceipt`'s own result).
 */
export function isContentAddressed(receipt: Receipt, decoded = false): boolean {
  try {
    return (decoded ? decodedContentId(receipt) : receiptContentId(receipt)) === receipt.id;
  } catch {
    return false;
  }
}

/** How a receipt reads in history. */
export type ReceiptStatus = "verified" | "unverified" | "invalid";

/**
 * `verified` needs a clean proof under a production policy with a key ring; a clean proof
 * under local development, or one whose only problem is the missing verifier, is
 * `unverified`; anything else (including a wrong content address) is `invalid`.
 */
export function receiptStatus(receipt: Receipt, policy: SignaturePolicy): ReceiptStatus {
  if (!isContentAddressed(receipt)) return "invalid";
  const findings = verifyReceiptProof(receipt, policy);
  if (findings.length === 0) {
    // A real signature the policy's key accepted is verified in either mode; a local
    // development receipt (`sig:<digest>`) never is.
    return policy.verifier !== undefined && !isPseudoSignature(receipt.signature.value)
      ? "verified"
      : "unverified";
  }
  return findings.every((finding) => finding.code === "signature_verifier_missing")
    ? "unverified"
    : "invalid";
}
