/**
 * Adapters from upstream's kernel policy fixtures (`policy.*` inputs) to the runtime's policy
 * modules, and from their answers to upstream's result shapes. No decision is made here.
 */
import { admitRetryPolicy } from "../graph/plan.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { buildAuthorityProofMetadata } from "../policy/authority-proof.js";
import type { AuthorityProofOptions } from "../policy/authority-proof.js";
import { buildLocalScopeAdmission, validateCredentialBinding } from "../policy/connected-auth.js";
import type {
  ConnectedGrant,
  CredentialEnvelope,
  CredentialGrantReference,
  ScopeAdmission,
} from "../policy/connected-auth.js";
import { detectKernelInlineCode } from "../policy/inline-code.js";
import { admitLocalSkill } from "../policy/local-admission.js";
import type { LocalAdmissionOptions, LocalAdmissionSkill } from "../policy/local-admission.js";
import {
  evaluatePublicCommentOpportunity,
  evaluatePublicPullRequestCandidate,
  normalizePublicWorkPolicy,
} from "../policy/public-work.js";
import type { CommentOpportunity, PublicWorkPolicy } from "../policy/public-work.js";
import { admitGraphStepScopes } from "../policy/scopes.js";
import type { Fields } from "./read.js";
import { evaluationFailed } from "./read.js";

const AUTHORITY_KINDS = ["read_only", "constructive", "destructive"] as const;

/** Upstream kernel's default local source types (the runtime also admits `adapter`). */
const KERNEL_SOURCE_TYPES = [
  "agent",
  "agent-task",
  "approval",
  "cli-tool",
  "javascript",
  "mcp",
  "a2a",
  "catalog",
  "graph",
];

function grantOf(f: Fields): ConnectedGrant {
  const grant: ConnectedGrant = {
    grant_id: f.string("grant_id"),
    provider: f.string("provider"),
    scopes: f.strings("scopes"),
  };
  if (f.has("status")) grant.status = f.oneOf("status", ["active", "revoked"] as const);
  for (const key of [
    "not_before",
    "expires_at",
    "scope_family",
    "target_repo",
    "target_locator",
  ] as const) {
    const v = f.optString(key);
    if (v !== undefined) grant[key] = v;
  }
  if (f.has("authority_kind")) grant.authority_kind = f.oneOf("authority_kind", AUTHORITY_KINDS);
  return grant;
}

function grantsOf(f: Fields, key: string): ConnectedGrant[] {
  return (f.optObjects(key) ?? []).map(grantOf);
}

/** A credential envelope (`runx.credential-envelope.v1`), read as strictly as upstream does. */
function credentialOf(f: Fields): CredentialEnvelope {
  f.only([
    "kind",
    "grant_id",
    "provider",
    "auth_mode",
    "material_kind",
    "provider_reference",
    "scopes",
    "grant_reference",
    "material_ref",
  ]);
  f.oneOf("kind", ["runx.credential-envelope.v1"] as const);
  f.nonEmpty("auth_mode");
  f.nonEmpty("material_kind");
  const credential: CredentialEnvelope = {
    grant_id: f.nonEmpty("grant_id"),
    provider: f.nonEmpty("provider"),
    provider_reference: f.nonEmpty("provider_reference"),
    scopes: f.nonEmptyStrings("scopes"),
    material_ref: f.nonEmpty("material_ref"),
  };
  const ref = f.optObject("grant_reference");
  if (ref !== undefined) {
    ref.only(["grant_id", "scope_family", "authority_kind", "target_repo", "target_locator"]);
    const reference: CredentialGrantReference = {
      grant_id: ref.nonEmpty("grant_id"),
      scope_family: ref.nonEmpty("scope_family"),
      authority_kind: ref.oneOf("authority_kind", AUTHORITY_KINDS),
    };
    const repo = ref.optNonEmpty("target_repo");
    const locator = ref.optNonEmpty("target_locator");
    if (repo !== undefined) reference.target_repo = repo;
    if (locator !== undefined) reference.target_locator = locator;
    credential.grant_reference = reference;
  }
  return credential;
}

/** A scope-admission record (`runx.ai/spec/scope-admission`), read strictly. */
function scopeAdmissionOf(f: Fields): ScopeAdmission {
  f.only([
    "status",
    "requested_scopes",
    "granted_scopes",
    "grant_id",
    "reasons",
    "decision_summary",
  ]);
  const admission = {
    status: f.oneOf("status", ["allow", "deny"] as const),
    requested_scopes: f.nonEmptyStrings("requested_scopes"),
    granted_scopes: f.nonEmptyStrings("granted_scopes"),
  } as ScopeAdmission;
  const id = f.optNonEmpty("grant_id");
  if (id !== undefined) admission.grant_id = id;
  if (f.has("reasons")) admission.reasons = f.nonEmptyStrings("reasons");
  const summary = f.optString("decision_summary");
  if (summary !== undefined) admission.decision_summary = summary;
  return admission;
}

function admitLocal(input: Fields): JsonValue {
  const s = input.object("skill");
  const src = s.object("source");
  const source: LocalAdmissionSkill["source"] = { type: src.string("type") };
  const command = src.optString("command");
  const args = src.optStrings("args");
  const timeout = src.optInteger("timeoutSeconds");
  if (command !== undefined) source.command = command;
  if (args !== undefined) source.args = args;
  if (timeout !== undefined) source.timeoutSeconds = timeout;
  const skill: LocalAdmissionSkill = { name: s.string("name"), source };
  if (s.has("auth")) skill.auth = s.raw("auth");
  const options: LocalAdmissionOptions = {
    allowedSourceTypes: KERNEL_SOURCE_TYPES,
    detectInlineCode: detectKernelInlineCode,
  };
  const o = input.optObject("options");
  if (o !== undefined) {
    const allowed = o.optStrings("allowedSourceTypes");
    const max = o.optInteger("maxTimeoutSeconds");
    const checkedAt = o.optString("connectedAuthCheckedAt");
    const skip = o.optBoolean("skipConnectedAuth");
    const strict = o
      .optObject("executionPolicy")
      ?.only(["strictCliToolInlineCode"])
      .optBoolean("strictCliToolInlineCode");
    if (allowed !== undefined) options.allowedSourceTypes = allowed;
    if (max !== undefined) options.maxTimeoutSeconds = max;
    if (o.has("connectedGrants")) options.connectedGrants = grantsOf(o, "connectedGrants");
    if (checkedAt !== undefined) options.connectedAuthCheckedAt = checkedAt;
    if (skip !== undefined) options.skipConnectedAuth = skip;
    if (strict !== undefined) options.strictCliToolInlineCode = strict;
  }
  return { ...admitLocalSkill(skill, options) };
}

function admitRetry(input: Fields): JsonValue {
  const r = input.object("request");
  const request: Parameters<typeof admitRetryPolicy>[0] = {
    stepId: r.string("stepId"),
    mutating: r.optBoolean("mutating") ?? false,
    maxAttempts: r.optObject("retry")?.integer("maxAttempts") ?? 1,
  };
  const key = r.optString("idempotencyKey");
  if (key !== undefined) request.idempotencyKey = key;
  return { ...admitRetryPolicy(request) };
}

function admitGraphScopes(input: Fields): JsonValue {
  const r = input.object("request");
  const g = r.object("grant");
  const grantId = g.optString("grant_id");
  const decision = admitGraphStepScopes(
    {
      stepId: r.string("stepId"),
      requestedScopes: r.strings("requestedScopes"),
      grant: { scopes: g.strings("scopes"), ...(grantId !== undefined ? { grantId } : {}) },
    },
    // Graph grants are authored by the graph itself, so both wildcard forms count.
    { prefix: true, universal: true },
  );
  return { ...decision };
}

function scopeAdmission(input: Fields): JsonValue {
  const o = input.optObject("options");
  const checkedAt = o?.optString("connectedAuthCheckedAt");
  const admission = buildLocalScopeAdmission(
    input.raw("auth") ?? undefined,
    grantsOf(input, "grants"),
    {
      ...(o?.optBoolean("deniedBeforeGrantResolution") === true
        ? { deniedBeforeGrantResolution: true }
        : {}),
      ...(checkedAt !== undefined ? { checkedAt } : {}),
      ...(o?.optBoolean("wildcardScopesTrusted") === true ? { universalWildcard: true } : {}),
    },
  );
  return { ...admission };
}

function authorityProof(input: Fields): JsonValue {
  const o = input.object("options");
  const boundary = o.object("executionBoundary").only(["kind"]);
  const options: AuthorityProofOptions = {
    skillName: o.string("skillName"),
    sourceType: o.string("sourceType"),
    executionBoundary: {
      kind: boundary.oneOf("kind", [
        "trusted_host_process",
        "deterministic_worker",
        "native_capability",
        "remote_provider",
      ] as const),
    },
  };
  const runId = o.optString("runId");
  const checkedAt = o.optString("connectedAuthCheckedAt");
  const scopes = o.optStrings("scopes");
  const mutating = o.optBoolean("mutating");
  if (runId !== undefined) options.runId = runId;
  if (o.has("auth")) options.auth = o.raw("auth");
  if (o.has("grants")) options.grants = grantsOf(o, "grants");
  if (checkedAt !== undefined) options.connectedAuthCheckedAt = checkedAt;
  if (o.has("scopeAdmission"))
    options.scopeAdmission = scopeAdmissionOf(o.object("scopeAdmission"));
  if (o.has("credential")) options.credential = credentialOf(o.object("credential"));
  if (scopes !== undefined) options.scopes = scopes;
  if (mutating !== undefined) options.mutating = mutating;
  const approval = o.optObject("approval");
  if (approval !== undefined) {
    const gate = approval.object("gate");
    const type = gate.optString("type");
    const reason = gate.optString("reason");
    const approved = approval.optBoolean("approved");
    if (approved === undefined) evaluationFailed(`${approval.path}.approved`, "must be a boolean");
    options.approval = {
      approved,
      gate: {
        id: gate.string("id"),
        ...(type !== undefined ? { type } : {}),
        ...(reason !== undefined ? { reason } : {}),
      },
    };
  }
  return buildAuthorityProofMetadata(options);
}

function credentialBinding(input: Fields): JsonValue {
  const r = input.object("request");
  const request: Parameters<typeof validateCredentialBinding>[0] = {
    grants: grantsOf(r, "grants"),
    scopeAdmission: scopeAdmissionOf(r.object("scopeAdmission")),
  };
  if (r.has("auth")) request.auth = r.raw("auth");
  if (r.has("credential")) request.credential = credentialOf(r.object("credential"));
  return { ...validateCredentialBinding(request) };
}

function publicPolicy(input: Fields): PublicWorkPolicy {
  const p = input.optObject("policy");
  if (p === undefined) return {};
  const policy: PublicWorkPolicy = {};
  for (const key of [
    "blocked_author_patterns",
    "blocked_head_ref_prefixes",
    "blocked_exact_labels",
    "blocked_label_prefixes",
    "trust_recovery_statuses",
  ] as const) {
    const v = p.optStrings(key);
    if (v !== undefined) policy[key] = v;
  }
  const welcome = p.optBoolean("require_welcome_signal_for_pull_request_comments");
  if (welcome !== undefined) policy.require_welcome_signal_for_pull_request_comments = welcome;
  return policy;
}

/** A pull request under consideration (the four fields upstream reads). */
function pullRequest(r: Fields): CommentOpportunity {
  const out: CommentOpportunity = {};
  for (const key of ["authorLogin", "title", "headRefName"] as const) {
    const v = r.optString(key);
    if (v !== undefined) out[key] = v;
  }
  const labels = r.optStrings("labels");
  if (labels !== undefined) out.labels = labels;
  return out;
}

function commentOpportunity(r: Fields): CommentOpportunity {
  const out = pullRequest(r);
  for (const key of ["source", "lane", "authorAssociation"] as const) {
    const v = r.optString(key);
    if (v !== undefined) out[key] = v;
  }
  for (const key of ["commentsCount", "reviewCommentsCount"] as const) {
    const v = r.optNumber(key);
    if (v !== undefined) out[key] = v;
  }
  const outcomes = r.optObjects("recentOutcomes");
  if (outcomes !== undefined)
    out.recentOutcomes = outcomes.map((o) => {
      const status = o.optString("status");
      return status === undefined ? {} : { status };
    });
  return out;
}

/** The policy kinds this adapter evaluates, by `input.kind`. */
export const POLICY_KINDS: Record<string, (input: Fields) => JsonValue> = {
  "policy.admitLocalSkill": admitLocal,
  "policy.admitRetryPolicy": admitRetry,
  "policy.admitGraphStepScopes": admitGraphScopes,
  "policy.buildLocalScopeAdmission": scopeAdmission,
  "policy.buildAuthorityProofMetadata": authorityProof,
  "policy.validateCredentialBinding": credentialBinding,
  "policy.evaluatePublicPullRequestCandidate": (input) => ({
    ...evaluatePublicPullRequestCandidate(
      pullRequest(input.object("request")),
      publicPolicy(input),
    ),
  }),
  "policy.evaluatePublicCommentOpportunity": (input) => ({
    ...evaluatePublicCommentOpportunity(
      commentOpportunity(input.object("request")),
      publicPolicy(input),
    ),
  }),
  "policy.normalizePublicWorkPolicy": (input) =>
    normalizePublicWorkPolicy(publicPolicy(input)) as unknown as JsonObject,
};
