/**
 * The words of the adapter boundary (the adapter boundary document): the closed
 * authority vocabulary with its default posture, the one dispatch status vocabulary and the
 * portable failure codes by phase. Pure: values and set arithmetic only.
 */

/** Capability words: what an adapter run may do. */
export const CAPABILITY_WORDS = [
  "read_only",
  "write_artifacts_only",
  "edit_worktree",
  "run_commands",
  "network_allowed",
] as const;

/** Prohibition words: always in force; a packet can never lift them. */
export const PROHIBITION_WORDS = [
  "secrets_forbidden",
  "commit_forbidden",
  "push_forbidden",
  "merge_forbidden",
  "publish_forbidden",
  "deploy_forbidden",
] as const;

/** The gate word: a human decision is needed before the dispatch. */
export const GATE_WORD = "human_approval_required";

/** Commit policies (`commit_allowed` is accepted as a word but never granted to an adapter). */
export const COMMIT_POLICIES = ["commit_forbidden", "commit_allowed"] as const;

/** One authority word; `credentials:<ref>` names a credential the run may use. */
export type AuthorityWord =
  | (typeof CAPABILITY_WORDS)[number]
  | (typeof PROHIBITION_WORDS)[number]
  | typeof GATE_WORD
  | "commit_allowed"
  | `credentials:${string}`;

const CREDENTIAL_WORD = /^credentials:[A-Za-z_][A-Za-z0-9_.-]*$/;

const FIXED_WORDS: ReadonlySet<string> = new Set<string>([
  ...CAPABILITY_WORDS,
  ...PROHIBITION_WORDS,
  GATE_WORD,
  "commit_allowed",
]);

/** True for a word of the closed vocabulary. */
export function isAuthorityWord(word: string): word is AuthorityWord {
  return FIXED_WORDS.has(word) || CREDENTIAL_WORD.test(word);
}

/** The contract's default posture: read only, every prohibition, approval for publication. */
export const DEFAULT_AUTHORITY: readonly AuthorityWord[] = ["read_only", ...PROHIBITION_WORDS];

/**
 * The policy ceiling when a skill declares none: read-only or artifact writing, the
 * prohibitions and the gate word. Editing the worktree, running commands, network and
 * credentials must be allowed by the skill's policy explicitly.
 */
export const DEFAULT_CEILING: readonly AuthorityWord[] = [
  "read_only",
  "write_artifacts_only",
  ...PROHIBITION_WORDS,
  GATE_WORD,
];

/** Words that let the process change something beyond its own output directory. */
export const WRITE_WORDS: ReadonlySet<string> = new Set(["edit_worktree", "run_commands"]);

/**
 * The authority a packet carries: the request plus every prohibition (they cannot be lifted),
 * deduplicated and sorted so digests are stable. `read_only` is added when no capability is
 * named, which is the default posture.
 */
export function effectiveAuthority(requested: readonly string[]): AuthorityWord[] {
  const words = new Set<string>(requested.filter(isAuthorityWord));
  for (const word of PROHIBITION_WORDS) words.add(word);
  words.delete("commit_allowed");
  if (!CAPABILITY_WORDS.some((word) => words.has(word))) words.add("read_only");
  return [...words].sort() as AuthorityWord[];
}

/** Requested capability words that neither the adapter maximum nor the ceiling allow. */
export function authorityExcess(
  requested: readonly string[],
  adapterMax: readonly string[],
  ceiling: readonly string[],
): { overAdapter: string[]; overCeiling: string[] } {
  const prohibitions = new Set<string>(PROHIBITION_WORDS);
  const capabilities = requested.filter((word) => !prohibitions.has(word) && word !== GATE_WORD);
  return {
    overAdapter: capabilities.filter((word) => !adapterMax.includes(word)),
    overCeiling: capabilities.filter((word) => !ceiling.includes(word)),
  };
}

/** True when the dispatch needs a human approval before it may spawn. */
export function approvalRequired(granted: readonly string[]): boolean {
  return granted.some(
    (word) =>
      word === GATE_WORD ||
      WRITE_WORDS.has(word) ||
      word === "network_allowed" ||
      word.startsWith("credentials:"),
  );
}

/**
 * The one status vocabulary of an adapter dispatch. `created`, `dispatched` and
 * `running` are the live states of an attempt; the others end it. `rejected` is a refusal
 * by the gate; `dry_run` is a recorded attempt without spawn authority.
 */
export const DISPATCH_STATUSES = [
  "created",
  "dispatched",
  "running",
  "blocked",
  "completed",
  "failed",
  "cancelled",
  "dry_run",
  "rejected",
] as const;

/** A dispatch status. */
export type DispatchStatus = (typeof DISPATCH_STATUSES)[number];

/** Where in the attempt a failure arose. */
export type FailurePhase = "admission" | "preflight" | "execution" | "collection" | "adapter";

/** The failure codes by phase, mapped onto the contract's portable set. */
export const FAILURE_CODES = {
  admission: [
    "unsupported_adapter",
    "adapter_config_invalid",
    "forbidden_executable",
    "adapter_not_trusted",
    "adapter_digest_mismatch",
    "package_not_executable",
    "unsupported_lane",
    "unsafe_scope",
    "credential_not_granted",
    "missing_authority",
    "spawn_authority_missing",
    "approval_stale",
  ],
  preflight: [
    "missing_worktree",
    "worktree_not_isolated",
    "protected_branch",
    "branch_mismatch",
    "base_commit_mismatch",
    "missing_tool",
    "tool_version_unsupported",
    "missing_configuration",
    "path_unsafe",
  ],
  execution: [
    "spawn_error",
    "runtime_timeout",
    "runtime_signaled",
    "runtime_non_zero",
    "output_limit_exceeded",
    "cancelled",
  ],
  collection: [
    "manifest_missing",
    "manifest_invalid",
    "manifest_run_mismatch",
    "artifact_missing",
    "artifact_outside_safe_roots",
    "artifact_symlink",
    "artifact_too_large",
    "artifact_digest_mismatch",
    "authority_violation",
  ],
  adapter: ["prompt_not_accepted", "runtime_blocked", "runtime_error", "verification_failed"],
} as const satisfies Record<FailurePhase, readonly string[]>;

/** Every failure code of a dispatch. */
export type FailureCode = (typeof FAILURE_CODES)[FailurePhase][number];

/** The phase a failure code belongs to. */
export function phaseOf(code: FailureCode): FailurePhase {
  for (const [phase, codes] of Object.entries(FAILURE_CODES)) {
    if ((codes as readonly string[]).includes(code)) return phase as FailurePhase;
  }
  return "adapter";
}

/** The contract's portable code (spec 002) each of ours maps back to. */
export const PORTABLE_CODE: Readonly<Record<FailureCode, string>> = {
  unsupported_adapter: "unsupported_adapter",
  adapter_config_invalid: "unsupported_adapter",
  forbidden_executable: "unsupported_adapter",
  adapter_not_trusted: "unsupported_adapter",
  adapter_digest_mismatch: "unsupported_adapter",
  package_not_executable: "package_not_executable",
  unsupported_lane: "unsupported_lane",
  unsafe_scope: "unsafe_scope",
  credential_not_granted: "unsafe_scope",
  missing_authority: "missing_authority",
  spawn_authority_missing: "missing_authority",
  approval_stale: "missing_authority",
  missing_worktree: "missing_access",
  worktree_not_isolated: "missing_access",
  protected_branch: "missing_access",
  branch_mismatch: "missing_access",
  base_commit_mismatch: "missing_access",
  missing_tool: "missing_tool",
  tool_version_unsupported: "missing_tool",
  missing_configuration: "missing_configuration",
  path_unsafe: "missing_access",
  spawn_error: "runtime_error",
  runtime_timeout: "runtime_error",
  runtime_signaled: "runtime_error",
  runtime_non_zero: "runtime_error",
  output_limit_exceeded: "runtime_error",
  cancelled: "cancelled",
  manifest_missing: "artifact_missing",
  manifest_invalid: "artifact_missing",
  manifest_run_mismatch: "artifact_missing",
  artifact_missing: "artifact_missing",
  artifact_outside_safe_roots: "artifact_outside_safe_roots",
  artifact_symlink: "artifact_outside_safe_roots",
  artifact_too_large: "artifact_missing",
  artifact_digest_mismatch: "artifact_missing",
  authority_violation: "unsafe_scope",
  prompt_not_accepted: "prompt_not_accepted",
  runtime_blocked: "runtime_error",
  runtime_error: "runtime_error",
  verification_failed: "verification_failed",
};

/** A failure of one attempt. */
export interface DispatchFailure {
  code: FailureCode;
  phase: FailurePhase;
  portable_code: string;
  message: string;
}

/** Builds a failure record for `code`. */
export function dispatchFailure(code: FailureCode, message: string): DispatchFailure {
  return { code, phase: phaseOf(code), portable_code: PORTABLE_CODE[code], message };
}
