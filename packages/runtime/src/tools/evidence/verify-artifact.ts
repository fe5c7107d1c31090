/**
 * `evidence.verify_artifact`: the gate between an agent-authored candidate and the artifact a
 * graph releases. Every check lives in checks.ts; any finding fails verification, and then
 * only the caller's sanitized `fallback_artifact` (its decision set to `blocked_decision`) is
 * emitted, never the candidate. A passing candidate is emitted with the authoritative fields
 * laid over it. Either way the artifact carries `validation {status, findings}`, and the
 * `verification` report lists the digests that were admitted (README "Evidence tools").
 */
import inputSchema from "../../../schemas/tools/evidence/verify-artifact.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/evidence/verify-artifact.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsEvidenceVerifyArtifactInput } from "../../generated/validate-tools-evidence-verify-artifact.input.js";
import { defineTool } from "../define-tool.js";
import type { Json, JsonRecord, NativeTool } from "../types.js";
import {
  checkClaims,
  checkContexts,
  checkDecision,
  checkEffects,
  checkReferences,
  checkRequiredFields,
} from "./checks.js";
import { EVIDENCE_READ_SCOPE } from "./index-sources.js";
import {
  applyBindings,
  findingJson,
  isLowerSha256,
  objectOf,
  textOf,
  type Finding,
} from "./values.js";

const TOOL = "evidence.verify_artifact";

/** `evidence.verify_artifact` input after schema validation (defaults not yet applied). */
export interface EvidenceVerifyInput {
  artifact_name?: string;
  authoritative_bindings?: Json[];
  authoritative_fields?: JsonRecord;
  authoritative_source?: Json;
  blocked_decision?: string;
  candidate: JsonRecord;
  claim_bindings?: Json[];
  context_bindings?: Json[];
  context_requirements?: Json[];
  fallback_artifact?: JsonRecord;
  fallback_bindings?: Json[];
  fallback_source?: Json;
  forbid_external_effects?: boolean;
  identity_source?: Json;
  ready_decision?: string;
  reference_bindings?: Json[];
  require_all_contexts?: boolean;
  require_claim_bindings?: boolean;
  required_paths?: Json[];
  required_value_bindings?: Json[];
  required_values?: Json[];
  source_digests?: string[];
  source_records?: Json[];
}

/** Defaults of `evidence.verify_artifact` (every list defaults to empty). */
export const VERIFY_DEFAULTS = {
  artifact_name: "verified_artifact",
  blocked_decision: "needs_more_evidence",
  ready_decision: "ready",
  forbid_external_effects: true,
  require_all_contexts: true,
  require_claim_bindings: true,
} as const;

/** Admitted digests: explicit `source_digests`, then records' `source_digest`, first seen kept. */
function admittedSources(digests: readonly string[], records: readonly Json[]): string[] {
  const candidates = [
    ...digests.map((digest) => digest.trim()),
    ...records.map((record) => textOf(objectOf(record).source_digest)),
  ];
  return [...new Set(candidates.filter(isLowerSha256))];
}

/** Each record's admitted content digest, by source digest. */
function contentDigests(records: readonly Json[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of records) {
    const record = objectOf(raw);
    const source = textOf(record.source_digest);
    const content = textOf(record.content_digest);
    if (isLowerSha256(source) && isLowerSha256(content)) out.set(source, content);
  }
  return out;
}

/** The output key: a letter, then letters, digits, `_` or `-`; at most 64; not `verification`. */
function outputName(value: string): string {
  const name = value.trim();
  if (!/^[A-Za-z][A-Za-z0-9_-]*$/.test(name) || name.length > 64 || name === "verification") {
    throw new RuntimeError(
      "INPUT_INVALID",
      `${TOOL}: artifact_name must be a safe non-reserved output key`,
      { path: "artifact_name" },
    );
  }
  return name;
}

function validation(status: "pass" | "fail", findings: readonly Finding[]): JsonRecord {
  return { status, findings: findings.map(findingJson) };
}

/** The artifact to emit: the candidate on pass, the fallback (if any) on fail. */
function releasedArtifact(
  input: EvidenceVerifyInput,
  passed: boolean,
  findings: readonly Finding[],
): JsonRecord | undefined {
  if (passed) {
    const authoritative = applyBindings({
      target: input.authoritative_fields ?? {},
      source: input.authoritative_source,
      bindings: input.authoritative_bindings ?? [],
      field: "authoritative_bindings",
      tool: TOOL,
    });
    return { ...input.candidate, ...authoritative, validation: validation("pass", []) };
  }
  if (input.fallback_artifact === undefined) return undefined;
  const fallback = applyBindings({
    target: input.fallback_artifact,
    source: input.fallback_source,
    bindings: input.fallback_bindings ?? [],
    field: "fallback_bindings",
    tool: TOOL,
  });
  return {
    ...fallback,
    decision: (input.blocked_decision ?? VERIFY_DEFAULTS.blocked_decision).trim(),
    validation: validation("fail", findings),
  };
}

/** Verifies a candidate; throws INPUT_INVALID for a bad artifact_name or binding. Pure. */
export function verifyArtifact(input: EvidenceVerifyInput): JsonRecord {
  const candidate = input.candidate;
  const records = input.source_records ?? [];
  const admitted = admittedSources(input.source_digests ?? [], records);
  const requirements = input.context_requirements ?? [];
  const findings: Finding[] = [];

  checkDecision(input.ready_decision ?? VERIFY_DEFAULTS.ready_decision, candidate, findings);
  checkClaims({
    required: input.require_claim_bindings ?? VERIFY_DEFAULTS.require_claim_bindings,
    bindings: input.claim_bindings ?? [],
    allowed: new Set(admitted),
    contentDigests: contentDigests(records),
    findings,
  });
  checkReferences(input.reference_bindings ?? [], new Set(admitted), findings);
  checkRequiredFields({
    candidate,
    requiredPaths: input.required_paths ?? [],
    requiredValues: input.required_values ?? [],
    requiredValueBindings: input.required_value_bindings ?? [],
    identitySource: input.identity_source,
    findings,
  });
  checkContexts({
    requirements,
    bindings: input.context_bindings ?? [],
    requireAll: input.require_all_contexts ?? VERIFY_DEFAULTS.require_all_contexts,
    findings,
  });
  if (input.forbid_external_effects ?? VERIFY_DEFAULTS.forbid_external_effects) {
    checkEffects(candidate, "candidate", findings);
  }

  const passed = findings.length === 0;
  const artifact = releasedArtifact(input, passed, findings);
  const name = outputName(input.artifact_name ?? VERIFY_DEFAULTS.artifact_name);
  const output: JsonRecord = {
    verification: {
      status: passed ? "pass" : "fail",
      findings: findings.map(findingJson),
      admitted_source_digests: admitted,
      admitted_context_digests: requirements
        .map((raw) => textOf(objectOf(raw).packet_digest))
        .filter((digest) => digest !== ""),
    },
  };
  if (artifact !== undefined) output[name] = artifact;
  return output;
}

/** The `evidence.verify_artifact` tool. */
export const evidenceVerifyArtifactTool: NativeTool = defineTool<EvidenceVerifyInput, JsonRecord>({
  name: TOOL,
  description: "Verify evidence and context bindings and reject unsupported effect claims.",
  mutating: false,
  scopes: [EVIDENCE_READ_SCOPE],
  inputSchema,
  outputSchema,
  validate: validateToolsEvidenceVerifyArtifactInput,
  run(input) {
    const output = verifyArtifact(input);
    const report = output.verification as JsonRecord;
    const count = (report.findings as Json[]).length;
    return Promise.resolve({
      output,
      summary: report.status === "pass" ? "pass" : `fail: ${count} finding(s)`,
    });
  },
});
