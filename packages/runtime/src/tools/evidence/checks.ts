/**
 * The checks of `evidence.verify_artifact`, each appending findings (stable codes, upstream's
 * sentences, the input path concerned): the candidate's decision, its claims and references
 * against the admitted source digests, required candidate fields, context bindings against
 * the admitted context packets, and external-effect claims an evidence-only artifact may not
 * make. Pure.
 */
import { isRecord } from "../packet.js";
import type { Json, JsonRecord } from "../types.js";
import {
  canonicalEqual,
  isLowerSha256,
  objectOf,
  present,
  sortedKeys,
  stringsOf,
  textOf,
  valueAtPath,
  type Finding,
} from "./values.js";

/** The candidate must carry the ready decision. */
export function checkDecision(ready: string, candidate: JsonRecord, findings: Finding[]): void {
  if (textOf(candidate.decision) !== ready.trim()) {
    findings.push({
      code: "artifact.decision.not_ready",
      message: "candidate decision is not ready",
    });
  }
}

/** Every claim names itself and binds only admitted digests (and the admitted content digest). */
export function checkClaims(options: {
  required: boolean;
  bindings: readonly Json[];
  allowed: ReadonlySet<string>;
  contentDigests: ReadonlyMap<string, string>;
  findings: Finding[];
}): void {
  const { bindings, allowed, contentDigests, findings } = options;
  if (options.required && bindings.length === 0) {
    findings.push({
      code: "artifact.claims.empty",
      message: "ready artifact requires at least one evidence-bound claim",
    });
  }
  bindings.forEach((raw, index) => {
    const binding = objectOf(raw);
    const digests = stringsOf(binding.source_digests);
    const single = textOf(binding.source_digest);
    if (single !== "") digests.push(single);
    if (textOf(binding.claim) === "") {
      findings.push({
        code: "artifact.claim.empty",
        message: "claim is required",
        path: `claim_bindings[${index}].claim`,
      });
    }
    if (digests.length === 0 || digests.some((digest) => !allowed.has(digest))) {
      findings.push({
        code: "artifact.claim.unbound",
        message: "claim must bind only admitted source digests",
        path: `claim_bindings[${index}].source_digests`,
      });
    }
    const expected = contentDigests.get(single);
    if (expected !== undefined && textOf(binding.content_digest) !== expected) {
      findings.push({
        code: "artifact.content_digest.mismatch",
        message: "content digest does not match the admitted source",
        path: `claim_bindings[${index}].content_digest`,
      });
    }
  });
}

/** Every reference binds only admitted digests. */
export function checkReferences(
  bindings: readonly Json[],
  allowed: ReadonlySet<string>,
  findings: Finding[],
): void {
  bindings.forEach((raw, index) => {
    const digests = stringsOf(objectOf(raw).source_digests);
    if (digests.length === 0 || digests.some((digest) => !allowed.has(digest))) {
      findings.push({
        code: "artifact.reference.unbound",
        message: "reference must bind only admitted source digests",
        path: `reference_bindings[${index}].source_digests`,
      });
    }
  });
}

/** Required paths are non-empty; required values and identity bindings are unchanged. */
export function checkRequiredFields(options: {
  candidate: JsonRecord;
  requiredPaths: readonly Json[];
  requiredValues: readonly Json[];
  requiredValueBindings: readonly Json[];
  identitySource: Json | undefined;
  findings: Finding[];
}): void {
  const { candidate, findings } = options;
  // Numbered among the non-blank paths, as upstream numbers them.
  stringsOf([...options.requiredPaths]).forEach((path, index) => {
    if (!present(valueAtPath(candidate, path))) {
      findings.push({
        code: "artifact.required.missing",
        message: "required candidate field is empty",
        path: `required_paths[${index}]`,
      });
    }
  });
  options.requiredValues.forEach((raw, index) => {
    const binding = objectOf(raw);
    if (!canonicalEqual(valueAtPath(candidate, textOf(binding.path)), binding.value)) {
      findings.push({
        code: "artifact.identity.changed",
        message: "candidate changed an authoritative input value",
        path: `required_values[${index}]`,
      });
    }
  });
  options.requiredValueBindings.forEach((raw, index) => {
    const binding = objectOf(raw);
    const claimed = valueAtPath(candidate, textOf(binding.candidate_path));
    const authoritative = valueAtPath(options.identitySource, textOf(binding.source_path));
    if (!canonicalEqual(claimed, authoritative)) {
      findings.push({
        code: "artifact.identity.changed",
        message: "candidate changed an authoritative source value",
        path: `required_value_bindings[${index}]`,
      });
    }
  });
}

/** Context bindings cite admitted packets and apply only their rules; all are bound if required. */
export function checkContexts(options: {
  requirements: readonly Json[];
  bindings: readonly Json[];
  requireAll: boolean;
  findings: Finding[];
}): void {
  const { findings } = options;
  const required = new Map<string, JsonRecord>();
  for (const raw of options.requirements) {
    const requirement = objectOf(raw);
    const digest = textOf(requirement.packet_digest);
    if (isLowerSha256(digest)) required.set(digest, requirement);
  }
  const seen = new Set<string>();
  options.bindings.forEach((raw, index) => {
    const binding = objectOf(raw);
    const digest = textOf(binding.packet_digest);
    const requirement = required.get(digest);
    if (requirement === undefined) {
      findings.push({
        code: "artifact.context.unknown",
        message: "context binding cites an unadmitted packet digest",
        path: `context_bindings[${index}].packet_digest`,
      });
      return;
    }
    const rules = new Set(stringsOf(requirement.rules));
    const applied = stringsOf(binding.applied_rules);
    if (applied.length === 0 || applied.some((rule) => !rules.has(rule))) {
      findings.push({
        code: "artifact.context.unbound",
        message: "applied context rules must come from the admitted packet",
        path: `context_bindings[${index}].applied_rules`,
      });
    }
    seen.add(digest);
  });
  if (!options.requireAll) return;
  // One finding per unbound packet, in digest order.
  for (const digest of [...required.keys()].sort()) {
    if (!seen.has(digest)) {
      findings.push({
        code: "artifact.context.missing",
        message: "an admitted context packet was not bound",
        path: "context_bindings",
      });
    }
  }
}

const EFFECT_STATUS_ALLOWED: Readonly<Record<string, readonly string[]>> = {
  provider_status: ["not_called", "not_requested", "not_started"],
  delivery_status: ["not_sent", "not_delivered", "not_started"],
  publication_status: ["not_published", "not_started"],
  receipt_status: ["not_sealed", "pending_parent_receipt"],
};
const EFFECT_FLAGS = new Set(["executed", "sent", "published"]);
const PROOF_KEYS = new Set([
  "provider_id",
  "provider_ref",
  "provider_receipt",
  "delivery_id",
  "delivery_ref",
  "delivery_receipt",
  "publication_id",
  "publication_ref",
  "publication_receipt",
  "effect_receipt",
]);

/** An effect-status key holds only a not-yet-happened value. */
function allowedStatus(key: string, value: Json): boolean {
  if (EFFECT_FLAGS.has(key)) return value === false;
  const allowed = EFFECT_STATUS_ALLOWED[key] ?? [];
  return typeof value === "string" && allowed.includes(value);
}

/** A proof key claims something unless it is null, false or "". */
function proofClaimed(value: Json): boolean {
  return !(value === null || value === false || value === "");
}

/**
 * Walks the candidate: an effect-status key (sent, provider_status, …) saying the effect
 * happened is `artifact.effect.unsupported`; a provider/delivery/publication id or receipt is
 * `artifact.effect.proofless`. Only a provider tool's receipt may claim an effect.
 */
export function checkEffects(value: Json, path: string, findings: Finding[]): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => checkEffects(item, `${path}[${index}]`, findings));
    return;
  }
  if (!isRecord(value)) return;
  for (const key of sortedKeys(value)) {
    const child = value[key] as Json;
    const at = `${path}.${key}`;
    if (EFFECT_FLAGS.has(key) || Object.hasOwn(EFFECT_STATUS_ALLOWED, key)) {
      if (!allowedStatus(key, child)) {
        findings.push({
          code: "artifact.effect.unsupported",
          message: `${key} claims an external effect without provider evidence`,
          path: at,
        });
      }
    } else if (PROOF_KEYS.has(key) && proofClaimed(child)) {
      findings.push({
        code: "artifact.effect.proofless",
        message: `${key} is not allowed on an evidence-only artifact`,
        path: at,
      });
    }
    checkEffects(child, at, findings);
  }
}
