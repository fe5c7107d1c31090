/**
 * `receipt.attest`: validates and digests one bounded attestation about an action
 * that happened outside Runx, as `runx.attestation.v1`. The parent run's receipt is what seals
 * it; the packet states that Runx verified nothing external (no provider, no external ledger).
 *
 * Incomplete subjects and weak evidence are not errors but the packet's decision: a missing
 * action, principal, claim or evidence makes `needs_agent`; malformed, duplicate, raw or
 * secret-shaped evidence makes `needs_more_evidence`; otherwise `ready_to_seal`. Overlong
 * subject text is refused (INPUT_INVALID), and so is any credential value Runx delivered in
 * this run — an attestation must never carry one into a receipt.
 */
import inputSchema from "../../../schemas/tools/receipt-attest.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/receipt-attest.output.schema.json" with { type: "json" };
import { validateToolsReceiptAttestInput } from "../../generated/validate-tools-receipt-attest.input.js";
import { RuntimeError } from "../../errors.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { eachString, isRecord } from "../packet.js";
import type { Json, JsonRecord, NativeTool, ToolContext } from "../types.js";

export const ATTESTATION_PACKET = "runx.attestation.v1";
const TOOL = "receipt.attest";

/** Byte limits of the subject and evidence fields. */
export const ATTEST_LIMITS = {
  action: 2000,
  principal: 512,
  claim: 4000,
  evidence: 100,
  ref: 512,
  digest: 80,
  proves: 1000,
} as const;

/** `receipt.attest` input after schema validation. */
export interface AttestInput {
  action: string;
  principal: string;
  claim: string;
  evidence: Json[];
  scope?: JsonRecord;
}

/** One finding that keeps the attestation from `ready_to_seal`. */
interface Gap {
  code: string;
  message: string;
}

const bytes = (text: string): number => Buffer.byteLength(text, "utf8");

function boundedSubject(value: string, field: keyof typeof ATTEST_LIMITS): string {
  const text = value.trim();
  const max = ATTEST_LIMITS[field];
  if (bytes(text) > max) {
    throw new RuntimeError("INPUT_INVALID", `${TOOL}: ${field} exceeds the ${max}-byte limit`, {
      path: field,
    });
  }
  return text;
}

/** A reference that could be a secret (bearer token, API key, PEM block) or is not opaque. */
function opaqueReference(value: string): boolean {
  const lower = value.toLowerCase();
  return (
    !/\s/.test(value) &&
    !lower.startsWith("sk-") &&
    !lower.startsWith("sk_live_") &&
    !lower.startsWith("bearer") &&
    !lower.startsWith("-----begin")
  );
}

const SHA256 = /^sha256:[0-9a-f]{64}$/;

function evidenceText(
  item: JsonRecord,
  index: number,
  field: "ref" | "digest" | "proves",
  gaps: Gap[],
): string {
  const value = item[field];
  if (typeof value !== "string") return "";
  const text = value.trim();
  const max = ATTEST_LIMITS[field];
  if (bytes(text) > max) {
    gaps.push({
      code: "attestation.evidence.limit",
      message: `evidence[${index}].${field} exceeds the ${max}-byte limit`,
    });
    return "";
  }
  return text;
}

/** Admits the evidence references; every problem becomes a gap, never an exception. */
function admitEvidence(evidence: Json[], gaps: Gap[]): JsonRecord[] {
  if (evidence.length === 0) {
    gaps.push({
      code: "attestation.evidence.missing",
      message: "at least one evidence reference is required",
    });
  }
  if (evidence.length > ATTEST_LIMITS.evidence) {
    gaps.push({
      code: "attestation.evidence.limit",
      message: `evidence is limited to ${ATTEST_LIMITS.evidence} references`,
    });
  }
  const refs = new Set<string>();
  const digests = new Set<string>();
  const admitted: JsonRecord[] = [];
  evidence.slice(0, ATTEST_LIMITS.evidence).forEach((candidate, index) => {
    if (!isRecord(candidate)) {
      gaps.push({
        code: "attestation.evidence.object",
        message: `evidence[${index}] must be an object {ref, digest, proves}`,
      });
      return;
    }
    const extras = Object.keys(candidate).filter((k) => !["ref", "digest", "proves"].includes(k));
    if (extras.length > 0) {
      gaps.push({
        code: "attestation.evidence.raw_fields",
        message: `evidence[${index}] contains unsupported fields: ${extras.sort().join(", ")}`,
      });
    }
    const ref = evidenceText(candidate, index, "ref", gaps);
    const digest = evidenceText(candidate, index, "digest", gaps);
    const proves = evidenceText(candidate, index, "proves", gaps);
    if (ref === "") {
      gaps.push({
        code: "attestation.evidence.ref",
        message: `evidence[${index}].ref is required`,
      });
    } else if (!opaqueReference(ref)) {
      gaps.push({
        code: "attestation.evidence.ref",
        message: `evidence[${index}].ref must be an opaque non-secret reference`,
      });
    }
    if (!SHA256.test(digest)) {
      gaps.push({
        code: "attestation.evidence.digest",
        message: `evidence[${index}].digest must be sha256:<64 lowercase hex>`,
      });
    }
    if (proves === "") {
      gaps.push({
        code: "attestation.evidence.proves",
        message: `evidence[${index}].proves is required`,
      });
    }
    if (ref !== "" && refs.has(ref)) {
      gaps.push({
        code: "attestation.evidence.duplicate",
        message: `duplicate evidence ref ${ref}`,
      });
    }
    if (SHA256.test(digest) && digests.has(digest)) {
      gaps.push({
        code: "attestation.evidence.duplicate",
        message: `evidence[${index}] repeats the digest of an earlier reference`,
      });
    }
    if (ref !== "") refs.add(ref);
    if (digest !== "") digests.add(digest);
    admitted.push({ ref, digest, proves });
  });
  return admitted;
}

function decisionOf(gaps: readonly Gap[]): string {
  if (gaps.length === 0) return "ready_to_seal";
  return gaps.some((gap) => gap.code.endsWith(".missing")) ? "needs_agent" : "needs_more_evidence";
}

/** Builds the `runx.attestation.v1` packet data. */
export function buildAttestation(input: AttestInput, ctx: ToolContext): JsonRecord {
  eachString(input as unknown as Json, "", (text, at) => {
    if (ctx.taint.taints(text)) {
      const where = ctx.taint.redactText(at);
      throw new RuntimeError(
        "INPUT_INVALID",
        `${TOOL}: ${where} carries credential material delivered by Runx; cite it by opaque reference instead`,
        { path: where },
      );
    }
  });
  const action = boundedSubject(input.action, "action");
  const principal = boundedSubject(input.principal, "principal");
  const claim = boundedSubject(input.claim, "claim");
  const scope = input.scope ?? {};
  const gaps: Gap[] = [];
  if (action === "")
    gaps.push({ code: "attestation.action.missing", message: "action is required" });
  if (principal === "") {
    gaps.push({ code: "attestation.principal.missing", message: "principal is required" });
  }
  if (claim === "") gaps.push({ code: "attestation.claim.missing", message: "claim is required" });
  const evidenceRefs = admitEvidence(input.evidence, gaps);
  const digest = hashCanonical({
    action,
    claim,
    principal,
    evidence_refs: evidenceRefs,
    scope,
  });
  return {
    schema: ATTESTATION_PACKET,
    decision: decisionOf(gaps),
    action,
    claim,
    principal,
    evidence_refs: evidenceRefs,
    scope,
    attestation_digest: digest,
    gaps: gaps.map((gap) => ({ code: gap.code, message: gap.message })),
    redactions: [],
    proof_boundary: {
      external_action_verified: false,
      provider_status: "not_called",
      external_ledger_status: "not_requested",
      runtime_seal_status: "pending_parent_receipt",
    },
  };
}

export const receiptAttestTool: NativeTool = defineTool<AttestInput, JsonRecord>({
  name: TOOL,
  description:
    "Validate and digest one bounded off-runtime action attestation (claim, principal, opaque evidence refs) for sealing; verifies nothing external.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsReceiptAttestInput,
  run(input, ctx) {
    const data = buildAttestation(input, ctx);
    return Promise.resolve({
      output: { attestation: artifactEnvelope(data) },
      summary: `attestation ${data.decision as string}`,
    });
  },
});
