/**
 * The authority proof (`runx.authority-proof.v1`) a run's receipt metadata carries: what was
 * requested, how scopes were admitted, which credential material (by hash, never the secret)
 * was resolved, the sandbox and approval evidence, and the redaction applied. Pure.
 */
import { sha256Hex } from "../crypto/sha256.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import {
  ConnectedAuthInvalid,
  buildLocalScopeAdmission,
  connectedAuthRequirement,
} from "./connected-auth.js";
import type {
  ConnectedAuthRequirement,
  ConnectedGrant,
  CredentialEnvelope,
  ScopeAdmission,
} from "./connected-auth.js";
import { uniqueStrings } from "./scopes.js";

/** A human decision on an approval gate that guarded the run. */
export interface AuthorityApproval {
  approved: boolean;
  gate: { id: string; type?: string; reason?: string };
}

/** What {@link buildAuthorityProof} needs to know about the run. */
export interface AuthorityProofOptions {
  runId?: string;
  skillName: string;
  sourceType: string;
  auth?: JsonValue;
  grants?: readonly ConnectedGrant[];
  connectedAuthCheckedAt?: string;
  scopeAdmission?: ScopeAdmission;
  credential?: CredentialEnvelope;
  /** Scopes the runner declares beside its connected auth (listed first in `requested`). */
  scopes?: readonly string[];
  executionBoundary?: JsonObject;
  sandboxDeclaration?: JsonObject;
  sandboxMetadata?: JsonValue;
  approval?: AuthorityApproval;
  mutating?: boolean;
}

const METADATA_SECRET_KEYS = [
  "token-like metadata keys",
  "api-key-like metadata keys",
  "password-like metadata keys",
  "client-secret-like metadata keys",
  "raw-secret-like metadata keys",
];

function nonEmpty(value: JsonValue | undefined): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The string when it has non-blank content, as written (blank values are left out). */
function present(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

/** The auth block's requirement; a malformed block requests nothing (its admission denies). */
function requirementOf(auth: JsonValue | undefined): ConnectedAuthRequirement | undefined {
  try {
    return connectedAuthRequirement(auth);
  } catch (error) {
    if (error instanceof ConnectedAuthInvalid) return undefined;
    throw error;
  }
}

function bool(value: JsonValue | undefined): boolean | undefined {
  return typeof value === "boolean" ? value : undefined;
}

/** Drops keys whose value is undefined (they are absent in the serialized proof). */
function defined(entries: Record<string, JsonValue | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) out[key] = value;
  return out;
}

function credentialMaterial(
  credential: CredentialEnvelope | undefined,
  requirement: ConnectedAuthRequirement | undefined,
  admission: ScopeAdmission,
): JsonObject {
  if (credential !== undefined)
    return defined({
      status: "resolved",
      grant_id: credential.grant_id,
      provider: credential.provider,
      provider_reference: credential.provider_reference,
      connection_id: credential.connection_id,
      scopes: [...credential.scopes],
      grant_reference: credential.grant_reference as JsonObject | undefined,
      material_ref_hash: sha256Hex(credential.material_ref),
    });
  if (requirement === undefined) return { status: "not_requested" };
  return defined({
    status: admission.status === "deny" ? "denied" : "not_resolved",
    grant_id: admission.grant_id,
    provider: requirement.provider,
    scopes: uniqueStrings(requirement.scopes),
    scope_family: present(requirement.scope_family),
    authority_kind: requirement.authority_kind,
    target_repo: present(requirement.target_repo),
    target_locator: present(requirement.target_locator),
  });
}

function sandboxSummary(options: AuthorityProofOptions): JsonObject | undefined {
  const record = isJsonObject(options.sandboxMetadata) ? options.sandboxMetadata : {};
  const declared = options.sandboxDeclaration ?? {};
  const profile = nonEmpty(record.profile) ?? nonEmpty(declared.profile);
  if (profile === undefined) return undefined;
  const sub = (key: string): JsonObject | undefined => {
    const v = record[key];
    return isJsonObject(v) ? v : undefined;
  };
  const network = sub("network");
  const filesystem = sub("filesystem");
  const runtime = sub("runtime");
  const approval = sub("approval");
  return defined({
    profile,
    cwd_policy:
      nonEmpty(record.cwd_policy) ?? nonEmpty(declared.cwd_policy) ?? nonEmpty(declared.cwdPolicy),
    require_enforcement:
      bool(record.require_enforcement) ??
      bool(declared.require_enforcement) ??
      bool(declared.requireEnforcement),
    network:
      network !== undefined || typeof declared.network === "boolean"
        ? defined({
            declared: bool(network?.declared) ?? bool(declared.network),
            enforcement: nonEmpty(network?.enforcement),
          })
        : undefined,
    filesystem:
      filesystem !== undefined
        ? defined({
            enforcement: nonEmpty(filesystem.enforcement),
            readonly_paths: bool(filesystem.readonly_paths),
            writable_paths_enforced: bool(filesystem.writable_paths_enforced),
            private_tmp: bool(filesystem.private_tmp),
          })
        : undefined,
    runtime:
      runtime !== undefined
        ? defined({ enforcer: nonEmpty(runtime.enforcer), reason: nonEmpty(runtime.reason) })
        : undefined,
    approval_required: bool(approval?.required) ?? profile === "unrestricted-local-dev",
    approval_approved: bool(approval?.approved) ?? options.approval?.approved,
  });
}

/** Builds the authority proof of one run. */
export function buildAuthorityProof(options: AuthorityProofOptions): JsonObject {
  const requirement = requirementOf(options.auth);
  const admission =
    options.scopeAdmission ??
    buildLocalScopeAdmission(options.auth, options.grants ?? [], {
      ...(options.connectedAuthCheckedAt !== undefined
        ? { checkedAt: options.connectedAuthCheckedAt }
        : {}),
    });
  const sandbox = sandboxSummary(options);
  const approval = options.approval;
  return defined({
    schema_version: "runx.authority-proof.v1",
    run_id: present(options.runId),
    skill_name: options.skillName,
    source_type: options.sourceType,
    requested: defined({
      connected_auth: requirement !== undefined,
      scopes: uniqueStrings([...(options.scopes ?? []), ...(requirement?.scopes ?? [])]),
      mutating: options.mutating === true,
      scope_family: present(requirement?.scope_family),
      authority_kind: requirement?.authority_kind,
      target_repo: present(requirement?.target_repo),
      target_locator: present(requirement?.target_locator),
      sandbox_profile: sandbox?.profile,
    }),
    scope_admission: admission as unknown as JsonObject,
    credential_material: credentialMaterial(options.credential, requirement, admission),
    execution_boundary: options.executionBoundary,
    sandbox,
    approval_gate:
      approval !== undefined
        ? defined({
            gate_id: approval.gate.id,
            gate_type: approval.gate.type ?? "unspecified",
            decision: approval.approved ? "approved" : "denied",
            reason: present(approval.gate.reason),
          })
        : undefined,
    redaction: {
      status: "applied",
      secret_material: "omitted",
      stdout: "hashed",
      stderr: "hashed",
      metadata_secret_keys: [...METADATA_SECRET_KEYS],
    },
  });
}

/** The receipt metadata block `{authority_proof}`. */
export function buildAuthorityProofMetadata(options: AuthorityProofOptions): JsonObject {
  return { authority_proof: buildAuthorityProof(options) };
}
