/**
 * Public-work rules: which pull requests and comment opportunities an automated lane must
 * leave alone (bot or dependency-update PRs, internal/build labels, PR comments without a
 * welcome signal, lanes in trust recovery). Inputs are normalised to trimmed lower case. Pure.
 */

/** A public-work policy; absent lists take the defaults. */
export interface PublicWorkPolicy {
  blocked_author_patterns?: readonly string[];
  blocked_head_ref_prefixes?: readonly string[];
  blocked_exact_labels?: readonly string[];
  blocked_label_prefixes?: readonly string[];
  trust_recovery_statuses?: readonly string[];
  require_welcome_signal_for_pull_request_comments?: boolean;
}

/** A policy with every field present. */
export type NormalizedPublicWorkPolicy = {
  [K in keyof PublicWorkPolicy]-?: Exclude<PublicWorkPolicy[K], undefined>;
};

/** A pull request under consideration. */
export interface PullRequestCandidate {
  authorLogin?: string;
  title?: string;
  labels?: readonly unknown[];
  headRefName?: string;
}

/** A comment opportunity (issue or PR) under consideration. */
export interface CommentOpportunity extends PullRequestCandidate {
  source?: string;
  lane?: string;
  authorAssociation?: string;
  commentsCount?: number;
  reviewCommentsCount?: number;
  recentOutcomes?: readonly unknown[];
}

/** Whether public work is blocked and why (stable reason codes). */
export interface PublicWorkDecision {
  blocked: boolean;
  reasons: string[];
}

/** The default public-work policy. */
export const DEFAULT_PUBLIC_WORK_POLICY: NormalizedPublicWorkPolicy = {
  blocked_author_patterns: [
    "[bot]",
    "app/",
    "renovate",
    "dependabot",
    "github-actions",
    "github-actions[bot]",
  ],
  blocked_head_ref_prefixes: [
    "renovate/",
    "dependabot/",
    "runx/issue-",
    "runx/evidence-projection-derive",
  ],
  blocked_exact_labels: [
    "dependencies",
    "dependency",
    "deps",
    "rust dependencies",
    "javascript dependencies",
    "python dependencies",
    "artifact drift",
    "artifact-update",
    "artifact update",
    "internal",
  ],
  blocked_label_prefixes: ["build:", "release:"],
  trust_recovery_statuses: ["spam", "minimized", "harmful"],
  require_welcome_signal_for_pull_request_comments: true,
};

function norm(value: unknown): string {
  if (typeof value === "string") return value.trim().toLowerCase();
  if (typeof value === "number" || typeof value === "boolean") return String(value).toLowerCase();
  return "";
}

function values(list: readonly unknown[] | undefined, fallback: readonly string[]): string[] {
  return Array.isArray(list) ? list.map(norm).filter((v) => v !== "") : [...fallback];
}

/** Fills absent fields from the defaults and lower-cases every list entry. */
export function normalizePublicWorkPolicy(
  policy: PublicWorkPolicy = {},
): NormalizedPublicWorkPolicy {
  const d = DEFAULT_PUBLIC_WORK_POLICY;
  return {
    blocked_author_patterns: values(policy.blocked_author_patterns, d.blocked_author_patterns),
    blocked_head_ref_prefixes: values(
      policy.blocked_head_ref_prefixes,
      d.blocked_head_ref_prefixes,
    ),
    blocked_exact_labels: values(policy.blocked_exact_labels, d.blocked_exact_labels),
    blocked_label_prefixes: values(policy.blocked_label_prefixes, d.blocked_label_prefixes),
    trust_recovery_statuses: values(policy.trust_recovery_statuses, d.trust_recovery_statuses),
    require_welcome_signal_for_pull_request_comments:
      policy.require_welcome_signal_for_pull_request_comments ??
      d.require_welcome_signal_for_pull_request_comments,
  };
}

function labelsOf(request: PullRequestCandidate): string[] {
  return Array.isArray(request.labels) ? request.labels.map(norm).filter((l) => l !== "") : [];
}

function isDependencyUpdate(
  request: PullRequestCandidate,
  policy: NormalizedPublicWorkPolicy,
): boolean {
  const title = norm(request.title);
  const head = norm(request.headRefName);
  if (policy.blocked_head_ref_prefixes.some((prefix) => head.startsWith(prefix))) return true;
  if (labelsOf(request).some((label) => policy.blocked_exact_labels.includes(label))) return true;
  // An update verb is a whole word (split on anything but ASCII letters, digits and `_`);
  // a version is `v?digits.digits` starting at a word boundary.
  const words = title.split(/[^A-Za-z0-9_]+/);
  if (
    words.some((w) => w === "update" || w === "upgrade" || w === "bump") &&
    /\bv?\d+\.\d/.test(title)
  )
    return true;
  return ["dependency", "dependencies", "deps"].some((word) => title.includes(word));
}

/** Blocks bot-authored, dependency-update and internal/build-only pull requests. */
export function evaluatePublicPullRequestCandidate(
  request: PullRequestCandidate,
  policy: PublicWorkPolicy = {},
): PublicWorkDecision {
  const p = normalizePublicWorkPolicy(policy);
  const reasons: string[] = [];
  const login = norm(request.authorLogin);
  if (login !== "" && p.blocked_author_patterns.some((pattern) => login.includes(pattern)))
    reasons.push("bot_authored_pull_request");
  if (isDependencyUpdate(request, p)) reasons.push("dependency_update_pull_request");
  if (
    labelsOf(request).some(
      (label) =>
        p.blocked_exact_labels.includes(label) ||
        p.blocked_label_prefixes.some((prefix) => label.startsWith(prefix)),
    )
  )
    reasons.push("internal_or_build_only_pull_request");
  return { blocked: reasons.length > 0, reasons };
}

function welcomeSignal(request: CommentOpportunity, policy: NormalizedPublicWorkPolicy): boolean {
  if (
    !policy.require_welcome_signal_for_pull_request_comments ||
    request.source !== "github_pull_request"
  )
    return true;
  const association = String(request.authorAssociation ?? "").toUpperCase();
  if (["OWNER", "MEMBER", "COLLABORATOR", "CONTRIBUTOR"].includes(association)) return true;
  return Number(request.commentsCount ?? 0) + Number(request.reviewCommentsCount ?? 0) > 0;
}

function statusOf(entry: unknown): unknown {
  return typeof entry === "object" && entry !== null
    ? (entry as { status?: unknown }).status
    : undefined;
}

/** The pull-request rules plus the welcome-signal and trust-recovery rules of comment lanes. */
export function evaluatePublicCommentOpportunity(
  request: CommentOpportunity,
  policy: PublicWorkPolicy = {},
): PublicWorkDecision & { welcome_signal: boolean } {
  const p = normalizePublicWorkPolicy(policy);
  const reasons = [...evaluatePublicPullRequestCandidate(request, p).reasons];
  const welcome = welcomeSignal(request, p);
  if (
    request.source === "github_pull_request" &&
    request.lane === "issue-triage" &&
    p.require_welcome_signal_for_pull_request_comments &&
    !welcome
  )
    reasons.push("comment_without_welcome_signal");
  if (
    request.lane === "issue-triage" &&
    Array.isArray(request.recentOutcomes) &&
    request.recentOutcomes.some((entry) =>
      p.trust_recovery_statuses.includes(norm(statusOf(entry))),
    )
  )
    reasons.push("comment_lane_in_trust_recovery");
  return { blocked: reasons.length > 0, reasons, welcome_signal: welcome };
}
