/**
 * Connected-auth admission: what a skill's `auth` block requires, which resolved grant (if
 * any) satisfies it at a given moment, the scope-admission record receipts carry, and whether
 * resolved credential material is bound to the admitted grant. Fail closed: a grant admits
 * only when explicitly active, inside its lifetime at the check time, and targeted exactly as
 * requested. Pure (no clock: the check time is an input).
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonValue } from "../parser/json.js";
import { scopeAllows, uniqueStrings } from "./scopes.js";

/** How much authority a targeted grant carries. */
export type AuthorityKind = "read_only" | "constructive" | "destructive";

/** The target fields shared by requirements, grants and credential grant references. */
export interface GrantTarget {
  scope_family?: string;
  authority_kind?: AuthorityKind;
  target_repo?: string;
  target_locator?: string;
}

/** What a connected `auth` block asks for. */
export interface ConnectedAuthRequirement extends GrantTarget {
  provider: string;
  scopes: string[];
}

/** A resolved connected-auth grant. */
export interface ConnectedGrant extends GrantTarget {
  grant_id: string;
  provider: string;
  scopes: string[];
  status?: string;
  not_before?: string;
  expires_at?: string;
}

/** The scope-admission record (`authority_proof.scope_admission`). */
export interface ScopeAdmission {
  status: "allow" | "deny";
  requested_scopes: string[];
  granted_scopes: string[];
  grant_id?: string;
  reasons?: string[];
  decision_summary: string;
}

/** A credential grant reference (which grant and target the material was issued for). */
export interface CredentialGrantReference extends GrantTarget {
  grant_id?: string;
}

/** Resolved credential material, described without the secret (`runx.credential-envelope.v1`). */
export interface CredentialEnvelope {
  grant_id: string;
  provider: string;
  scopes: string[];
  material_ref: string;
  connection_id?: string;
  provider_reference?: string;
  grant_reference?: CredentialGrantReference;
}

/** An allow/deny decision with reasons. */
export interface PolicyDecision {
  status: "allow" | "deny";
  reasons: string[];
}

const AUTHORITY_KINDS = new Set<string>(["read_only", "constructive", "destructive"]);
const TARGET_KEYS = ["scope_family", "authority_kind", "target_repo", "target_locator"] as const;

/** The requirement could not be read from the `auth` block (the message says why). */
export class ConnectedAuthInvalid extends Error {}

function stringField(value: Record<string, JsonValue>, key: string): string | undefined {
  const v = value[key];
  return typeof v === "string" ? v : undefined;
}

function scopeList(value: JsonValue | undefined): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new ConnectedAuthInvalid("connected auth scopes must be an array");
  return value.map((scope) => {
    if (typeof scope !== "string")
      throw new ConnectedAuthInvalid("connected auth scopes must contain only strings");
    if (scope.trim() === "")
      throw new ConnectedAuthInvalid("connected auth scopes cannot include empty strings");
    return scope;
  });
}

/**
 * The connected-auth requirement of an `auth` block; undefined for none (`null`, `false`,
 * absent, or `type: env | none | local`). Throws ConnectedAuthInvalid for a malformed block.
 */
export function connectedAuthRequirement(
  auth: JsonValue | undefined,
): ConnectedAuthRequirement | undefined {
  if (auth === undefined || auth === null || auth === false) return undefined;
  if (!isJsonObject(auth))
    throw new ConnectedAuthInvalid("connected auth must be an object, null, or false");
  const type = stringField(auth, "type");
  if (type === "env" || type === "none" || type === "local") return undefined;
  const provider = (stringField(auth, "provider") ?? type)?.trim();
  if (provider === undefined || provider === "")
    throw new ConnectedAuthInvalid("connected auth provider is required");
  const scopes = scopeList(auth.scopes);
  if (scopes.length === 0)
    throw new ConnectedAuthInvalid(
      "connected auth scopes must include at least one non-empty string",
    );
  const requirement: ConnectedAuthRequirement = { provider, scopes };
  for (const key of ["scope_family", "target_repo", "target_locator"] as const) {
    const v = stringField(auth, key);
    if (v !== undefined) requirement[key] = v;
  }
  const kind = stringField(auth, "authority_kind");
  if (kind !== undefined && AUTHORITY_KINDS.has(kind))
    requirement.authority_kind = kind as AuthorityKind;
  return requirement;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * A strict RFC 3339 timestamp (upper-case `T` and `Z`, a real calendar day, at most nanosecond
 * precision) as epoch nanoseconds, so sub-millisecond lifetimes still order; else undefined.
 */
export function rfc3339Moment(value: string | undefined): bigint | undefined {
  const m = value === undefined ? null : RFC3339.exec(value);
  if (m === null) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[8] !== "Z") {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === "+" ? 1 : -1) * (oh * 3600 + om * 60);
  }
  const seconds = Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - offset;
  const nanos = BigInt((m[7] ?? "").padEnd(9, "0") || "0");
  return BigInt(seconds) * 1_000_000_000n + nanos;
}

/** A grant is live at `checkedAt` when it has an expiry after it and no later not_before. */
function grantLive(grant: ConnectedGrant, checkedAt: string | undefined): boolean {
  const at = rfc3339Moment(checkedAt);
  const expires = rfc3339Moment(grant.expires_at);
  if (at === undefined || expires === undefined || at >= expires) return false;
  if (grant.not_before === undefined) return true;
  const notBefore = rfc3339Moment(grant.not_before);
  return notBefore !== undefined && at >= notBefore;
}

function hasTarget(value: GrantTarget): boolean {
  return TARGET_KEYS.some((key) => value[key] !== undefined && value[key] !== "");
}

/** An untargeted requirement takes only untargeted grants; a targeted one the exact target. */
function targetMatches(requirement: ConnectedAuthRequirement, grant: ConnectedGrant): boolean {
  if (!hasTarget(requirement)) return !hasTarget(grant);
  return TARGET_KEYS.every((key) => grant[key] === requirement[key]);
}

/** Options for grant resolution. */
export interface GrantMatchOptions {
  /** The moment the grants were checked (RFC 3339); without it no grant is live. */
  checkedAt?: string;
  /** Honour a universal `*` grant scope (trusted first-party grants only). */
  universalWildcard?: boolean;
}

/** The first grant that is active, live, covers every required scope and matches the target. */
export function findMatchingGrant(
  requirement: ConnectedAuthRequirement,
  grants: readonly ConnectedGrant[],
  options: GrantMatchOptions = {},
): ConnectedGrant | undefined {
  const wildcards = { prefix: true, universal: options.universalWildcard === true };
  return grants.find(
    (grant) =>
      grant.provider === requirement.provider &&
      grant.status === "active" &&
      grantLive(grant, options.checkedAt) &&
      requirement.scopes.every((scope) =>
        grant.scopes.some((granted) => scopeAllows(granted, scope, wildcards)),
      ) &&
      targetMatches(requirement, grant),
  );
}

/** Options for {@link buildLocalScopeAdmission}. */
export interface ScopeAdmissionOptions extends GrantMatchOptions {
  /** Structural policy already denied the run, so no grant is resolved. */
  deniedBeforeGrantResolution?: boolean;
}

/** The scope-admission record for a skill's `auth` against the resolved grants. */
export function buildLocalScopeAdmission(
  auth: JsonValue | undefined,
  grants: readonly ConnectedGrant[],
  options: ScopeAdmissionOptions = {},
): ScopeAdmission {
  let requirement: ConnectedAuthRequirement | undefined;
  try {
    requirement = connectedAuthRequirement(auth);
  } catch (error) {
    if (!(error instanceof ConnectedAuthInvalid)) throw error;
    return {
      status: "deny",
      requested_scopes: [],
      granted_scopes: [],
      reasons: [error.message],
      decision_summary: "invalid connected auth request",
    };
  }
  if (requirement === undefined)
    return {
      status: "allow",
      requested_scopes: [],
      granted_scopes: [],
      decision_summary: "no connected auth requested",
    };
  const requested = uniqueStrings(requirement.scopes);
  if (options.deniedBeforeGrantResolution === true)
    return {
      status: "deny",
      requested_scopes: requested,
      granted_scopes: [],
      reasons: ["structural policy denied before connected auth grant resolution"],
      decision_summary: "structural policy denied before grant resolution",
    };
  const grant = findMatchingGrant(requirement, grants, options);
  if (grant === undefined)
    return {
      status: "deny",
      requested_scopes: requested,
      granted_scopes: [],
      reasons: [`connected auth grant required for provider '${requirement.provider}'`],
      decision_summary: "no matching active grant resolved",
    };
  return {
    status: "allow",
    requested_scopes: requested,
    granted_scopes: uniqueStrings(grant.scopes),
    grant_id: grant.grant_id,
    decision_summary: "matching active grant admitted",
  };
}

function filled(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

/**
 * The grant reference a credential issued for a targeted grant must carry. A targeted grant
 * without both a scope family and an authority kind cannot name one, so none is expected.
 */
export function grantReferenceOf(grant: ConnectedGrant): CredentialGrantReference | undefined {
  if (!hasTarget(grant)) return undefined;
  const family = filled(grant.scope_family);
  if (family === undefined || grant.authority_kind === undefined) return undefined;
  const reference: CredentialGrantReference = {
    grant_id: grant.grant_id,
    scope_family: family,
    authority_kind: grant.authority_kind,
  };
  const repo = filled(grant.target_repo);
  const locator = filled(grant.target_locator);
  if (repo !== undefined) reference.target_repo = repo;
  if (locator !== undefined) reference.target_locator = locator;
  return reference;
}

/** Checks that resolved credential material belongs to the admitted grant and request. */
export function validateCredentialBinding(request: {
  auth?: JsonValue;
  grants: readonly ConnectedGrant[];
  scopeAdmission: ScopeAdmission;
  credential?: CredentialEnvelope;
}): PolicyDecision {
  const { scopeAdmission: admission, credential } = request;
  const deny = (reason: string): PolicyDecision => ({ status: "deny", reasons: [reason] });
  let requirement: ConnectedAuthRequirement | undefined;
  try {
    requirement = connectedAuthRequirement(request.auth);
  } catch (error) {
    if (!(error instanceof ConnectedAuthInvalid)) throw error;
    return deny(error.message);
  }
  if (credential === undefined) {
    if (
      requirement !== undefined &&
      admission.status === "allow" &&
      admission.grant_id !== undefined
    )
      return deny("credential material was not resolved for admitted connected auth grant");
    return { status: "allow", reasons: ["no credential material resolved"] };
  }
  if (requirement === undefined)
    return deny("credential material resolved for a skill with no connected auth requirement");
  if (admission.status !== "allow" || admission.grant_id === undefined)
    return deny("credential material resolved without an admitted connected auth grant");
  const grant = request.grants.find((g) => g.grant_id === admission.grant_id);
  if (grant === undefined)
    return deny(
      `credential admission references grant '${admission.grant_id}' that was not resolved`,
    );
  const reasons: string[] = [];
  if (credential.grant_id !== grant.grant_id)
    reasons.push(
      `credential grant_id '${credential.grant_id}' does not match admitted grant '${grant.grant_id}'`,
    );
  if (credential.provider !== requirement.provider || credential.provider !== grant.provider)
    reasons.push(
      `credential provider '${credential.provider}' does not match admitted provider '${grant.provider}'`,
    );
  // Credential material is provider-issued: its `*` never stands for every scope.
  const wildcards = { prefix: true, universal: false };
  const missing = admission.requested_scopes.filter(
    (scope) => !credential.scopes.some((held) => scopeAllows(held, scope, wildcards)),
  );
  if (missing.length > 0)
    reasons.push(
      `credential scopes do not include admitted request scope(s): ${missing.join(", ")}`,
    );
  const excess = credential.scopes.filter(
    (scope) => !grant.scopes.some((granted) => scopeAllows(granted, scope, wildcards)),
  );
  if (excess.length > 0)
    reasons.push(`credential scopes exceed admitted grant scope(s): ${excess.join(", ")}`);
  const expected = grantReferenceOf(grant);
  const actual = credential.grant_reference;
  if (expected !== undefined) {
    if (actual === undefined)
      reasons.push("credential grant_reference is missing for a targeted admitted grant");
    else
      for (const key of ["grant_id", ...TARGET_KEYS] as const)
        if (actual[key] !== expected[key])
          reasons.push(`credential grant_reference.${key} does not match admitted grant`);
  } else if (actual !== undefined) {
    reasons.push("credential grant_reference is present but the admitted grant is not targeted");
  }
  return reasons.length > 0
    ? { status: "deny", reasons }
    : { status: "allow", reasons: ["credential material matches admitted grant"] };
}
