/**
 * Adapters from upstream's kernel policy fixtures (`policy.*` inputs) to the runtime's policy
 * modules, and from their answers to upstream's result shapes. No decision is made here.
 */
import { admitRetryPolicy } from "../graph/plan.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { buildAuthorityProofMetadata } from "../policy/authority-proof.js";
import type { AuthorityProofOptions } from "../policy/authority-proof.js";
import {
  ConnectedAuthInvalid,
  buildLocalScopeAdmission,
  validateCredentialBinding,
} from "../policy/connected-auth.js";
import type {
  AuthorityKind,
  ConnectedGrant,
  CredentialEnvelope,
  CredentialGrantReference,
  ScopeAdmission,
} from "../policy/connected-auth.js";
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
const TARGET_KEYS = ["scope_family", "target_repo", "target_locator"] as const;

function target(
  f: Fields,
  into: { authority_kind?: AuthorityKind } & Record<string, unknown>,
): void {
  for (const key of TARGET_KEYS) {
    const v = f.optString(key);
    if (v !== undefined) into[key] = v;
  }
  if (f.has("authority_kind")) into.authority_kind = f.oneOf("authority_kind", AUTHORITY_KINDS);
}

function grantOf(f: Fields): ConnectedGrant {
  const grant: ConnectedGrant = {
    grant_id: f.string("grant_id"),
    provider: f.string("provider"),
    scopes: f.strings("scopes"),
  };
  if (f.has("status")) grant.status = f.oneOf("status", ["active", "revoked"] as const);
  for (const key of ["not_before", "expires_at"] as const) {
    const v = f.optString(key);
    if (v !== undefined) grant[key] = v;
  }
  target(f, grant as unknown as Record<string, unknown>);
  return grant;
}

function grantsOf(f: Fields, key: string): ConnectedGrant[] {
  return (f.optObjects(key) ?? []).map(grantOf);
}

function credentialOf(f: Fields): CredentialEnvelope {
  const credential: CredentialEnvelope = {
    grant_id: f.string("grant_id"),
    provider: f.string("provider"),
    scopes: f.strings("scopes"),
    material_ref: f.string("material_ref"),
  };
  for (const key of ["connection_id", "provider_reference"] as const) {
    const v = f.optString(key);
    if (v !== undefined) credential[key] = v;
  }
  const ref = f.optObject("grant_reference");
  if (ref !== undefined) {
    const reference: CredentialGrantReference = {};
    const id = ref.optString("grant_id");
    if (id !== undefined) reference.grant_id = id;
    target(ref, reference as unknown as Record<string, unknown>);
    credential.grant_reference = reference;
  }
  return credential;
}

function scopeAdmissionOf(f: Fields): ScopeAdmission {
  const admission: ScopeAdmission = {
    status: f.oneOf("status", ["allow", "deny"] as const),
    requested_scopes: f.strings("requested_scopes"),
    granted_scopes: f.strings("granted_scopes"),
    decision_summary: f.string("decision_summary"),
  };
  const id = f.optString("grant_id");
  if (id !== undefined) admission.grant_id = id;
  const reasons = f.optStrings("reasons");
  if (reasons !== undefined) admission.reasons = reasons;
  return admission;
}

/** Runs a policy call whose malformed `auth` block is an evaluation failure. */
function withAuth<T>(path: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof ConnectedAuthInvalid) evaluationFailed(path, error.message);
    throw error;
  }
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
  const o = input.optObject("options");
  const options: LocalAdmissionOptions = {};
  if (o !== undefined) {
    const allowed = o.optStrings("allowedSourceTypes");
    const max = o.optInteger("maxTimeoutSeconds");
    const checkedAt = o.optString("connectedAuthCheckedAt");
    const skip = o.optBoolean("skipConnectedAuth");
    const strict = o.optObject("executionPolicy")?.optBoolean("strictCliToolInlineCode");
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
    maxAttempts: r.optObject("retry")?.number("maxAttempts") ?? 1,
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
  const admission = buildLocalScopeAdmission(input.raw("auth"), grantsOf(input, "grants"), {
    ...(o?.optBoolean("deniedBeforeGrantResolution") === true
      ? { deniedBeforeGrantResolution: true }
      : {}),
    ...(checkedAt !== undefined ? { checkedAt } : {}),
    ...(o?.optBoolean("wildcardScopesTrusted") === true ? { universalWildcard: true } : {}),
  });
  return { ...admission };
}

function authorityProof(input: Fields): JsonValue {
  const o = input.object("options");
  const options: AuthorityProofOptions = {
    skillName: o.string("skillName"),
    sourceType: o.string("sourceType"),
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
  if (o.has("executionBoundary")) options.executionBoundary = o.object("executionBoundary").value;
  if (o.has("sandboxDeclaration"))
    options.sandboxDeclaration = o.object("sandboxDeclaration").value;
  if (o.has("sandboxMetadata")) options.sandboxMetadata = o.raw("sandboxMetadata");
  if (mutating !== undefined) options.mutating = mutating;
  const approval = o.optObject("approval");
  if (approval !== undefined) {
    const gate = approval.object("gate");
    const type = gate.optString("type");
    const reason = gate.optString("reason");
    options.approval = {
      approved: approval.optBoolean("approved") ?? false,
      gate: {
        id: gate.string("id"),
        ...(type !== undefined ? { type } : {}),
        ...(reason !== undefined ? { reason } : {}),
      },
    };
  }
  return withAuth(`${o.path}.auth`, () => buildAuthorityProofMetadata(options));
}

function credentialBinding(input: Fields): JsonValue {
  const r = input.object("request");
  const request: Parameters<typeof validateCredentialBinding>[0] = {
    grants: grantsOf(r, "grants"),
    scopeAdmission: scopeAdmissionOf(r.object("scopeAdmission")),
  };
  if (r.has("auth")) request.auth = r.raw("auth");
  if (r.has("credential")) request.credential = credentialOf(r.object("credential"));
  return withAuth(`${r.path}.auth`, () => ({ ...validateCredentialBinding(request) }));
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

function candidate(input: Fields): CommentOpportunity {
  const r = input.object("request");
  const out: CommentOpportunity = {};
  for (const key of [
    "authorLogin",
    "title",
    "headRefName",
    "source",
    "lane",
    "authorAssociation",
  ] as const) {
    const v = r.optString(key);
    if (v !== undefined) out[key] = v;
  }
  const labels = r.optStrings("labels");
  if (labels !== undefined) out.labels = labels;
  for (const key of ["commentsCount", "reviewCommentsCount"] as const) {
    const v = r.optNumber(key);
    if (v !== undefined) out[key] = v;
  }
  const outcomes = r.optArray("recentOutcomes");
  if (outcomes !== undefined) out.recentOutcomes = outcomes;
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
    ...evaluatePublicPullRequestCandidate(candidate(input), publicPolicy(input)),
  }),
  "policy.evaluatePublicCommentOpportunity": (input) => ({
    ...evaluatePublicCommentOpportunity(candidate(input), publicPolicy(input)),
  }),
  "policy.normalizePublicWorkPolicy": (input) =>
    normalizePublicWorkPolicy(publicPolicy(input)) as unknown as JsonObject,
};
