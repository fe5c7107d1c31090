/**
 * A receipt's verification report for people (`runx.receipt_report.v1`): who signed it,
 * what it commits, and each check by name with its result in plain words, so a failure
 * names the check that failed ("signature does not match", "parent missing") instead of
 * a bare "invalid". Pure: the receipt's document and its already loaded neighbours in,
 * the report out. The checks are the per-receipt proof (verify.ts) plus the links a
 * store can resolve: the parent that lists it, its children and the paused receipt it
 * continues.
 */
import { hashCanonical } from "./canonical.js";
import { receiptBodyDigest, referencedReceiptId } from "./identity.js";
import type { JsonValue, Receipt } from "./model.js";
import { RECEIPT_REPORT_SCHEMA } from "./report-model.js";
import type {
  ReceiptReport,
  ReportCheck,
  ReportCheckName,
  ReportCommits,
  ReportDigest,
  ReportInput,
  ReportLink,
} from "./report-model.js";
import { isContentAddressed, receiptStatus, verifyReceiptProof } from "./verify.js";
import type { FindingCode, ReceiptFinding } from "./verify.js";
import { isPseudoSignature } from "./verifier.js";
import type { SignaturePolicy } from "./verifier.js";

export { RECEIPT_REPORT_SCHEMA } from "./report-model.js";
export type * from "./report-model.js";

const SIGNATURE_WORDS: Partial<Record<FindingCode, string>> = {
  signature_invalid: "signature does not match",
  signature_key_missing: "no trusted key for this key id",
  signature_key_malformed: "the trusted key for this key id is malformed",
  signature_key_hash_mismatch: "the issuer's key hash does not match the trusted key",
  signature_unsupported_issuer: "this issuer type cannot sign verifiable receipts",
  signature_unsupported_algorithm: "the signature algorithm is not supported",
  signature_malformed: "the signature value is malformed",
  signature_verifier_missing: "no verification key is configured",
};

function check(
  name: ReportCheckName,
  label: string,
  ok: boolean | null,
  message: string,
  codes: string[] = [],
): ReportCheck {
  return { name, label, ok, message, codes };
}

function safeDigest(receipt: Receipt): string | undefined {
  try {
    return receiptBodyDigest(receipt);
  } catch {
    return undefined;
  }
}

function proofChecks(receipt: Receipt, id: string, policy: SignaturePolicy): ReportCheck[] {
  const findings = verifyReceiptProof(receipt, policy);
  const of = (pred: (f: ReceiptFinding) => boolean) => findings.filter(pred);
  const addressed = receipt.id === id && isContentAddressed(receipt);
  const digest = of((f) => f.code === "seal_digest_mismatch");
  const signature = of((f) => f.code.startsWith("signature_"));
  const structure = of(
    (f) => f.code !== "seal_digest_mismatch" && !f.code.startsWith("signature_"),
  );
  const pseudo = isPseudoSignature(receipt.signature.value);
  const [firstSignature] = signature;
  return [
    check(
      "content_address",
      "receipt id is the digest of its body",
      addressed,
      receipt.id !== id
        ? "the receipt's id differs from the id it is filed under"
        : addressed
          ? "receipt id is the digest of its body"
          : "receipt id is not the digest of its body",
      addressed ? [] : ["content_address_mismatch"],
    ),
    check(
      "body_digest",
      "digest matches the body",
      digest.length === 0,
      digest.length === 0
        ? "the recorded digest matches the body"
        : "digest does not match the body",
      digest.map((f) => f.code),
    ),
    firstSignature === undefined
      ? check(
          "signature",
          "signature matches",
          true,
          pseudo
            ? "local-development pseudo signature matches the body digest (not a real signature)"
            : `signature matches the body, made with key ${receipt.issuer.kid}`,
        )
      : check(
          "signature",
          "signature matches",
          signature.every((f) => f.code === "signature_verifier_missing") ? null : false,
          SIGNATURE_WORDS[firstSignature.code] ?? firstSignature.message,
          signature.map((f) => f.code),
        ),
    check(
      "structure",
      "fields are well-formed",
      structure.length === 0,
      structure.length === 0
        ? "every field is well-formed"
        : structure.map((f) => `${f.path}: ${f.message}`).join("; "),
      structure.map((f) => f.code),
    ),
  ];
}

function link(
  id: string,
  committed: string | undefined,
  linked: ReadonlyMap<string, Receipt | undefined>,
): ReportLink {
  const receipt = linked.get(id);
  const digest = receipt === undefined ? undefined : safeDigest(receipt);
  return {
    id,
    name: receipt === undefined ? null : receipt.subject.ref.uri.replace(/^hrn_/, ""),
    present: receipt !== undefined,
    digest_matches: committed === undefined || receipt === undefined ? null : digest === committed,
    disposition: receipt?.seal.disposition ?? null,
  };
}

function linkCheck(
  name: "parent" | "children" | "previous",
  links: readonly ReportLink[],
  words: { none: string; ok: string; missing: string; differs: string },
): ReportCheck {
  const label = {
    parent: "parent present",
    children: "children present",
    previous: "paused receipt present",
  }[name];
  if (links.length === 0) return check(name, label, null, words.none);
  const missing = links.filter((l) => !l.present);
  const differs = links.filter((l) => l.digest_matches === false);
  if (missing.length > 0) {
    return check(name, label, false, `${words.missing}: ${missing.map((l) => l.id).join(", ")}`, [
      "child_receipt_missing",
    ]);
  }
  if (differs.length > 0) {
    return check(
      name,
      label,
      false,
      `${words.differs}: ${differs.map((l) => l.name ?? l.id).join(", ")}`,
      ["child_receipt_digest_mismatch"],
    );
  }
  return check(name, label, true, words.ok);
}

function metadataString(receipt: Receipt, key: string): string | undefined {
  const value: JsonValue | undefined = receipt.metadata?.[key];
  return typeof value === "string" ? value : undefined;
}

/** Attempts tried when recomputing a graph step's intent key (`<step>#<attempt>`). */
const MAX_ATTEMPTS = 16;

/**
 * Step keys a receipt's intent key may bind: its metadata's `step_id` and every
 * `_`-separated suffix of its subject `hrn_<graph>_<step>`, bare (a single-step run) or as
 * `<step>#<attempt>` (a graph step).
 */
function stepCandidates(receipt: Receipt): string[] {
  const parts = receipt.subject.ref.uri.replace(/^hrn_/, "").split("_");
  const names = new Set(parts.slice(1).map((_, i) => parts.slice(i + 1).join("_")));
  const declared = metadataString(receipt, "step_id");
  if (declared !== undefined) names.add(declared);
  return [...names].flatMap((name) => [
    name,
    ...Array.from({ length: MAX_ATTEMPTS }, (_, i) => `${name}#${i + 1}`),
  ]);
}

/**
 * The package digest: signed when the receipt's signed intent key recomputes from the
 * skill, runner, package digest (and, for a graph step, the step id) its metadata records,
 * which is how live runs derive the key.
 */
function packageDigest(receipt: Receipt): ReportDigest | null {
  const value = metadataString(receipt, "package_digest");
  if (value === undefined) return null;
  const skill = metadataString(receipt, "skill");
  const runner = metadataString(receipt, "runner");
  const key = receipt.idempotency.intent_key;
  const bound =
    skill !== undefined &&
    runner !== undefined &&
    [undefined, ...stepCandidates(receipt)].some(
      (step) =>
        hashCanonical({
          skill,
          runner,
          package_digest: value,
          ...(step !== undefined ? { step } : {}),
        }) === key,
    );
  return bound
    ? { value, signed: true, how: "committed by the signed intent key" }
    : { value, signed: false, how: "recorded in unsigned metadata, not covered by the signature" };
}

function commitsOf(receipt: Receipt, input: ReportInput): ReportCommits {
  const lineage = receipt.lineage;
  const closure = metadataString(receipt, "execution_closure_digest");
  const previousId =
    lineage?.previous === undefined ? undefined : referencedReceiptId(lineage.previous);
  const parentIds = new Set(input.parentIds);
  const declared = lineage?.parent === undefined ? undefined : referencedReceiptId(lineage.parent);
  if (declared !== undefined) parentIds.add(declared);
  return {
    subject: {
      kind: receipt.subject.kind,
      uri: receipt.subject.ref.uri,
      identity: receipt.subject.ref.locator ?? null,
    },
    package_digest: packageDigest(receipt),
    execution_closure_digest:
      closure === undefined
        ? null
        : {
            value: closure,
            signed: false,
            how: "recorded in unsigned metadata, not covered by the signature",
          },
    inputs: receipt.subject.commitments
      .filter((c) => c.scope === "input")
      .map((c) => ({ scope: c.scope, value: c.value })),
    outputs: receipt.subject.commitments
      .filter((c) => c.scope !== "input")
      .map((c) => ({ scope: c.scope, value: c.value })),
    content_hash: receipt.idempotency.content_hash,
    parents: [...parentIds].map((id) => {
      const parent = input.linked.get(id);
      const ref = parent?.lineage?.children.find((c) => referencedReceiptId(c) === receipt.id);
      const own = safeDigest(receipt);
      return {
        ...link(id, undefined, input.linked),
        digest_matches:
          ref?.locator === undefined || own === undefined ? null : ref.locator === own,
      };
    }),
    previous:
      previousId === undefined ? null : link(previousId, lineage?.previous?.locator, input.linked),
    children: (lineage?.children ?? []).flatMap((ref) => {
      const id = referencedReceiptId(ref);
      return id === undefined ? [] : [link(id, ref.locator, input.linked)];
    }),
  };
}

/** The report of one receipt; `status` is `invalid` when any check failed. */
export function receiptReport(input: ReportInput): ReceiptReport {
  const base = {
    schema: RECEIPT_REPORT_SCHEMA,
    receipt_id: input.id,
    run_id: input.runId ?? null,
    checked_at: input.now.toISOString(),
  } as const;
  if ("error" in input.document) {
    const unreadable = check(
      "readable",
      "receipt can be read",
      false,
      `the receipt file cannot be read: ${input.document.error}`,
      ["receipt_unreadable"],
    );
    return {
      ...base,
      status: "invalid",
      failed_check: unreadable,
      checks: [unreadable],
      signer: null,
      commits: null,
      seal: null,
      created_at: null,
    };
  }
  const receipt = input.document.receipt;
  const commits = commitsOf(receipt, input);
  const checks = [
    check(
      "readable",
      "receipt can be read",
      true,
      "the file is a well-formed runx.receipt.v1 document",
    ),
    ...proofChecks(receipt, input.id, input.policy),
    linkCheck("parent", commits.parents, {
      none: "no receipt lists this one as a child (it is a run's top receipt)",
      ok: "the parent is present and commits this exact body",
      missing: "parent missing",
      differs: "the parent committed a different body for this receipt",
    }),
    linkCheck("children", commits.children, {
      none: "this receipt commits no children",
      ok: `all ${commits.children.length} children are present with the digests committed`,
      missing: "child missing",
      differs: "child body differs from the digest committed",
    }),
    linkCheck("previous", commits.previous === null ? [] : [commits.previous], {
      none: "this receipt does not continue a paused run",
      ok: "the paused receipt it continues is present with the digest committed",
      missing: "paused receipt missing",
      differs: "paused receipt differs from the digest committed",
    }),
  ];
  const failed = checks.find((c) => c.ok === false) ?? null;
  const own = receipt.id === input.id ? receiptStatus(receipt, input.policy) : "invalid";
  return {
    ...base,
    status: failed !== null ? "invalid" : own,
    failed_check: failed,
    checks,
    signer: {
      issuer_type: receipt.issuer.type,
      kid: receipt.issuer.kid,
      public_key_sha256: receipt.issuer.public_key_sha256,
      algorithm: receipt.signature.alg,
      signature_kind: isPseudoSignature(receipt.signature.value) ? "local-development" : "ed25519",
      policy_mode: input.policy.mode,
    },
    commits,
    seal: {
      disposition: receipt.seal.disposition,
      reason_code: receipt.seal.reason_code,
      summary: receipt.seal.summary,
      closed_at: receipt.seal.closed_at,
    },
    created_at: receipt.created_at,
  };
}
