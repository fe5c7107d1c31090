/**
 * Resolution of a runner's declared credential, once per command, in this order: explicit
 * `--profile`, project binding (`skill:<skill>:<credential>` before `provider:<provider>`),
 * the provider's default profile in `$RUNX_HOME/config.json`, then the requirement's
 * declared environment name in the workspace snapshot (process env, then `.env`).
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import {
  audienceHost,
  loadProfileSecret,
  readCredentialsConfig,
  readProjectBindings,
} from "./store.js";

/** What a run remembers about its resolved credential: names and the source, not the value. */
export interface ResolvedCredentialRef {
  requirement: string;
  provider: string;
  authMode: string;
  envName: string;
  source: "explicit_profile" | "project_binding" | "global_default" | "environment";
  profile?: string;
}

/** A declared requirement (X.yaml `credentials.<name>`), already schema-validated. */
export interface CredentialRequirement {
  name: string;
  provider: string;
  audience?: string;
  /** auth mode → delivery environment name. */
  deliveries: Record<string, string>;
}

/** A resolved credential: its names and the material, which the caller taints at once. */
export interface ResolvedCredential {
  ref: ResolvedCredentialRef;
  value: string;
}

/** Everything a resolution reads. */
export interface ResolveCredentialOptions {
  requirement: CredentialRequirement;
  skillName: string;
  explicitProfile?: string | undefined;
  runxHome: string | undefined;
  workspaceRoot: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** The requirement named `name` in a profile's `credentials` map. */
export function requirementOf(
  credentials: Readonly<Record<string, JsonObject>>,
  name: string,
): CredentialRequirement {
  const raw = credentials[name];
  if (raw === undefined || typeof raw.provider !== "string") {
    throw new RuntimeError("PROFILE_INVALID", `credential "${name}" is not declared`, {
      path: `credentials.${name}`,
    });
  }
  const deliveries: Record<string, string> = {};
  for (const [mode, auth] of Object.entries(isJsonObject(raw.auth) ? raw.auth : {})) {
    const delivery = isJsonObject(auth) && isJsonObject(auth.delivery) ? auth.delivery : {};
    if (typeof delivery.env === "string") deliveries[mode] = delivery.env;
  }
  return {
    name,
    provider: raw.provider,
    ...(typeof raw.audience === "string" ? { audience: raw.audience } : {}),
    deliveries,
  };
}

/** The commands that would satisfy a missing requirement (a stored profile, then a binding). */
export function setupCommands(requirement: CredentialRequirement, skillName: string): string[] {
  const modes = Object.keys(requirement.deliveries);
  const single = modes.length === 1 ? modes[0] : undefined;
  const authMode =
    single !== undefined ? ` --auth-mode ${single}` : ` --auth-mode <${modes.join("|")}>`;
  const env = Object.values(requirement.deliveries)[0] ?? "SECRET";
  return [
    `printf '%s' "$${env}" | runx credential set ${requirement.provider} --profile <name>${authMode} --from-stdin`,
    `runx credential bind <name> --skill ${skillName} --credential ${requirement.name}`,
  ];
}

function selectedProfile(
  opts: ResolveCredentialOptions,
  bindings: Record<string, string>,
  defaults: Record<string, string>,
): { profile: string; source: ResolvedCredentialRef["source"] } | undefined {
  const { requirement } = opts;
  if (opts.explicitProfile !== undefined) {
    return { profile: opts.explicitProfile, source: "explicit_profile" };
  }
  const bound =
    bindings[`skill:${opts.skillName}:${requirement.name}`] ??
    bindings[`provider:${requirement.provider}`];
  if (bound !== undefined) return { profile: bound, source: "project_binding" };
  const fallback = defaults[requirement.provider];
  if (fallback !== undefined) return { profile: fallback, source: "global_default" };
  return undefined;
}

/**
 * Resolves the requirement; undefined when nothing matches (the run then needs a credential).
 * A selected profile that does not fit the requirement fails rather than falling through:
 * the operator chose it, so a silent fallback would deliver something else.
 */
export async function resolveCredential(
  opts: ResolveCredentialOptions,
): Promise<ResolvedCredential | undefined> {
  const { requirement } = opts;
  const credentials =
    opts.runxHome !== undefined
      ? await readCredentialsConfig(opts.runxHome)
      : { profiles: {}, defaults: {} };
  const { bindings } = await readProjectBindings(opts.workspaceRoot);
  const selected = selectedProfile(opts, bindings, credentials.defaults);
  if (selected !== undefined && opts.runxHome !== undefined) {
    const { profile: name, source } = selected;
    const profile = credentials.profiles[name];
    if (profile === undefined) {
      throw new RuntimeError(
        "CREDENTIAL_PROFILE_NOT_FOUND",
        `credential profile '${name}' is not configured (selected by ${source.replace("_", " ")})`,
        { profile: name, source },
      );
    }
    if (profile.provider !== requirement.provider) {
      throw new RuntimeError(
        "CREDENTIAL_MISMATCH",
        `credential profile '${name}' is for provider '${profile.provider}', but credential "${requirement.name}" needs provider '${requirement.provider}'`,
        { profile: name, expected: requirement.provider, actual: profile.provider },
      );
    }
    const envName = requirement.deliveries[profile.auth_mode];
    if (envName === undefined) {
      throw new RuntimeError(
        "CREDENTIAL_MISMATCH",
        `credential profile '${name}' has auth mode '${profile.auth_mode}', but credential "${requirement.name}" declares ${Object.keys(requirement.deliveries).join(" or ")}`,
        { profile: name, expected: Object.keys(requirement.deliveries), actual: profile.auth_mode },
      );
    }
    if (
      requirement.audience !== undefined &&
      profile.audience !== undefined &&
      audienceHost(requirement.audience) !== audienceHost(profile.audience)
    ) {
      throw new RuntimeError(
        "CREDENTIAL_MISMATCH",
        `credential profile '${name}' is bound to ${profile.audience}, but credential "${requirement.name}" targets ${requirement.audience}`,
        { profile: name, expected: requirement.audience, actual: profile.audience },
      );
    }
    const value = await loadProfileSecret(opts.runxHome, name, profile.secret_ref);
    return {
      ref: {
        requirement: requirement.name,
        provider: requirement.provider,
        authMode: profile.auth_mode,
        envName,
        source,
        profile: name,
      },
      value,
    };
  }
  const present = Object.entries(requirement.deliveries).filter(([, env]) => {
    const value = opts.env[env];
    return value !== undefined && value.trim() !== "";
  });
  if (present.length > 1) {
    throw new RuntimeError(
      "CREDENTIAL_AMBIGUOUS",
      `credential "${requirement.name}": more than one declared environment value is set (${present
        .map(([, env]) => env)
        .join(", ")}); select an auth mode with a stored profile (runx skill … --profile <name>)`,
      { credential: requirement.name, names: present.map(([, env]) => env) },
    );
  }
  const match = present[0];
  if (match === undefined) return undefined;
  const [authMode, envName] = match;
  return {
    ref: {
      requirement: requirement.name,
      provider: requirement.provider,
      authMode,
      envName,
      source: "environment",
    },
    value: opts.env[envName] ?? "",
  };
}
