/**
 * Scope matching and graph-step scope attenuation. A scope is an opaque string;
 * a grant allows a requested scope when it is equal, or — where wildcards are honoured — when
 * the grant is `prefix:*` (any one segment under `prefix:`) or the universal `*`. Pure.
 */

/** Which grant wildcards count. Exact-string matching (both false) is the target default. */
export interface ScopeWildcards {
  /** `prefix:*` allows every scope one segment under `prefix:`. */
  prefix?: boolean;
  /** `*` allows every scope; only for grants a trusted caller resolved. */
  universal?: boolean;
}

/** True when `granted` allows `requested` under the given wildcard rules. */
export function scopeAllows(
  granted: string,
  requested: string,
  wildcards: ScopeWildcards = {},
): boolean {
  // The universal grant is decided by trust alone, even against a literal `*` request.
  if (granted === "*") return wildcards.universal === true;
  if (granted === requested) return true;
  if (wildcards.prefix !== true || !granted.endsWith(":*")) return false;
  // `prefix:*` covers exactly one more segment: `repo:*` allows `repo:read`, not
  // `repo:admin:keys` nor `repo:`.
  const prefix = granted.slice(0, -1);
  if (!requested.startsWith(prefix)) return false;
  const rest = requested.slice(prefix.length);
  return rest !== "" && !rest.includes(":");
}

/** The values in first-seen order without repeats. */
export function uniqueStrings(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The scope request of one graph step against the grant of its graph. */
export interface GraphScopeRequest {
  stepId: string;
  requestedScopes: readonly string[];
  grant: { grantId?: string; scopes: readonly string[] };
}

/** The attenuation decision for one graph step. */
export interface GraphScopeAdmission {
  status: "allow" | "deny";
  reasons: string[];
  stepId: string;
  requestedScopes: string[];
  grantedScopes: string[];
  grantId?: string;
}

/** Admits a step's scopes when every (deduplicated) requested scope lies inside the grant. */
export function admitGraphStepScopes(
  request: GraphScopeRequest,
  wildcards: ScopeWildcards = {},
): GraphScopeAdmission {
  const requestedScopes = uniqueStrings(request.requestedScopes);
  const grantedScopes = uniqueStrings(request.grant.scopes);
  const outside = requestedScopes.filter(
    (scope) => !grantedScopes.some((granted) => scopeAllows(granted, scope, wildcards)),
  );
  const reasons =
    outside.length > 0
      ? [`step '${request.stepId}' requested scope(s) outside graph grant: ${outside.join(", ")}`]
      : [
          requestedScopes.length > 0
            ? "graph step scopes allowed"
            : "graph step requested no scopes",
        ];
  const decision: GraphScopeAdmission = {
    status: outside.length > 0 ? "deny" : "allow",
    reasons,
    stepId: request.stepId,
    requestedScopes,
    grantedScopes,
  };
  if (request.grant.grantId !== undefined) decision.grantId = request.grant.grantId;
  return decision;
}
