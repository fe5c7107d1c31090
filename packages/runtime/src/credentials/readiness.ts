/**
 * Credential readiness: what `resolveCredential` would deliver for a runner's declared
 * credential, reported by names and source only. `runx skill inspect` prints it and
 * `runx mcp serve` checks it before serving; neither ever holds on to the material.
 */
import type { JsonObject } from "../parser/json.js";
import { resolveCredential, setupCommands } from "./resolve.js";
import type { CredentialRequirement, ResolveCredentialOptions } from "./resolve.js";

/**
 * One requirement's readiness, in upstream's inspection field names: `name`, `provider`,
 * `auth` (mode → delivery), `status` (`ready` | `missing`), then for a ready one `source`,
 * `profile`, `auth_mode` and `delivery`, for a missing one the `setup` commands.
 */
export interface CredentialReadiness extends JsonObject {
  name: string;
  provider: string;
  auth: JsonObject;
  status: "ready" | "missing";
}

/** The inputs of a readiness check: a resolution's, plus which names came from `.env`. */
export interface CredentialReadinessOptions extends ResolveCredentialOptions {
  /** Names whose workspace value came from the workspace `.env` rather than the process. */
  dotenvNames?: ReadonlySet<string>;
}

function authContract(requirement: CredentialRequirement): JsonObject {
  const auth: JsonObject = {};
  for (const [mode, env] of Object.entries(requirement.deliveries)) {
    auth[mode] = { delivery: { env } };
  }
  return auth;
}

/**
 * Resolves the requirement and drops the value at once. A selected profile that does not fit
 * (missing, other provider, other auth mode or audience) and an ambiguous environment throw
 * the resolver's error, as a run would: those are configuration faults, not a missing credential.
 */
export async function credentialReadiness(
  opts: CredentialReadinessOptions,
): Promise<CredentialReadiness> {
  const { requirement } = opts;
  const report: CredentialReadiness = {
    name: requirement.name,
    provider: requirement.provider,
    auth: authContract(requirement),
    status: "missing",
    ...(requirement.audience !== undefined ? { audience: requirement.audience } : {}),
  };
  const resolved = await resolveCredential(opts);
  if (resolved === undefined) {
    report.setup = setupCommands(requirement, opts.skillName);
    return report;
  }
  const { ref } = resolved;
  report.status = "ready";
  report.source = ref.source;
  // The workspace snapshot reads the process environment first and the workspace `.env` for
  // names the process lacks; saying which one answered is what an operator debugging needs.
  if (ref.source === "environment") {
    report.origin = opts.dotenvNames?.has(ref.envName) === true ? "workspace_dotenv" : "process";
  }
  if (ref.profile !== undefined) report.profile = ref.profile;
  report.auth_mode = ref.authMode;
  report.delivery = { env: ref.envName };
  return report;
}
