/**
 * Sandbox declarations and their admission, as upstream runx's policy engine defines them: a
 * profile (`readonly`, `workspace-write`, `network`, `unrestricted-local-dev`), a cwd policy,
 * an optional env allowlist, network, writable paths and whether enforcement is required.
 * Admission denies reserved runx variables in the allowlist, writes or network on a readonly
 * profile, unsafe writable paths, and writable paths on a network profile; the unrestricted
 * profile needs a caller's approval. Pure.
 */

/** A sandbox profile. */
export type SandboxProfile = "readonly" | "workspace-write" | "network" | "unrestricted-local-dev";
/** Where the sandboxed process starts. */
export type CwdPolicy = "skill-directory" | "workspace" | "custom";

/** A declaration as written (optional fields take the profile's defaults). */
export interface SandboxDeclaration {
  profile: SandboxProfile;
  cwd_policy?: CwdPolicy;
  env_allowlist?: string[];
  network?: boolean;
  writable_paths?: string[];
  require_enforcement?: boolean;
}

/** A declaration with every default applied. */
export interface NormalizedSandbox {
  profile: SandboxProfile;
  cwd_policy: CwdPolicy;
  env_allowlist: string[] | null;
  network: boolean;
  writable_paths: string[];
  require_enforcement: boolean;
}

/** The admission decision and its reasons. */
export interface SandboxAdmission {
  status: "allow" | "approval_required" | "deny";
  reasons: string[];
}

/** Applies the profile's defaults. */
export function normalizeSandbox(sandbox: SandboxDeclaration): NormalizedSandbox {
  return {
    profile: sandbox.profile,
    cwd_policy: sandbox.cwd_policy ?? "skill-directory",
    env_allowlist: sandbox.env_allowlist ?? null,
    network: sandbox.network ?? sandbox.profile === "network",
    writable_paths: sandbox.writable_paths ?? [],
    require_enforcement:
      sandbox.require_enforcement ?? sandbox.profile !== "unrestricted-local-dev",
  };
}

const SECRET_NEEDLES = [
  "SECRET",
  "TOKEN",
  "PASSWORD",
  "API_KEY",
  "PRIVATE_KEY",
  "ACCESS_KEY",
  "SIGNING_KEY",
  "CREDENTIAL",
  "SEED",
];

/** A `RUNX_` variable that carries signing material or a secret (never allowlisted). */
export function isReservedRunxSandboxEnvName(name: string): boolean {
  const upper = name.toUpperCase();
  if (upper.startsWith("RUNX_RECEIPT_SIGN_")) return true;
  return upper.startsWith("RUNX_") && SECRET_NEEDLES.some((needle) => upper.includes(needle));
}

function unsafeWritablePath(path: string): boolean {
  return path === "" || path.split(/[/\\]/).includes("..");
}

/** Admits a declaration (`approvedEscalation` admits the unrestricted profile). */
export function admitSandbox(
  sandbox: SandboxDeclaration,
  options: { approvedEscalation?: boolean } = {},
): SandboxAdmission {
  const declaration = normalizeSandbox(sandbox);
  const reasons: string[] = [];
  const reserved = (declaration.env_allowlist ?? []).filter(isReservedRunxSandboxEnvName);
  if (reserved.length > 0) {
    reasons.push(
      `sandbox env_allowlist contains reserved runx environment variable(s): ${reserved.join(", ")}`,
    );
  }
  if (declaration.profile === "readonly") {
    if (declaration.writable_paths.length > 0) {
      reasons.push("readonly sandbox cannot declare writable paths");
    }
    if (declaration.network) reasons.push("readonly sandbox cannot declare network access");
  }
  if (declaration.profile === "workspace-write") {
    const unsafe = declaration.writable_paths.filter(unsafeWritablePath);
    if (unsafe.length > 0) {
      reasons.push(`workspace-write sandbox has unsafe writable path(s): ${unsafe.join(", ")}`);
    }
  }
  if (declaration.profile === "network" && declaration.writable_paths.length > 0) {
    reasons.push(
      "network sandbox cannot declare writable paths; use unrestricted-local-dev for combined local write and network access",
    );
  }
  if (reasons.length > 0) return { status: "deny", reasons };
  if (declaration.profile === "unrestricted-local-dev" && options.approvedEscalation !== true) {
    return {
      status: "approval_required",
      reasons: ["unrestricted-local-dev sandbox requires explicit caller approval"],
    };
  }
  return { status: "allow", reasons: [`sandbox profile '${declaration.profile}' admitted`] };
}
