/**
 * The rules of upstream's operational policy engine over a policy the reader admitted. The
 * shape rules stop at the first breach (a document that breaks one is not a policy to reason
 * about: no readback); the semantic rules all run and every breach is a finding. Codes, paths
 * (JSON pointers), messages and the order of the checks are upstream's.
 */
import { POLICY_ACTIONS } from "./contract.js";
import type {
  OperationalPolicy,
  OwnerRoute,
  PolicyAction,
  RunnerRule,
  SourceRule,
  TargetRule,
} from "./contract.js";

/** One lint finding. */
export interface PolicyFinding {
  code: string;
  path: string;
  message: string;
}

const finding = (code: string, path: string, message: string): PolicyFinding => ({
  code,
  path,
  message,
});

const ID = /^[A-Za-z0-9_.:-]+$/;
const REPO_PART = /^[A-Za-z0-9_.-]+$/;
const DATE_TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?Z$/;

type Check = PolicyFinding | undefined;

function id(value: string, path: string, field: string): Check {
  return ID.test(value)
    ? undefined
    : finding("invalid_id", path, `${field} must match ^[A-Za-z0-9_.:-]+$.`);
}

function nonEmptyList(values: readonly unknown[], path: string, field: string): Check {
  return values.length > 0
    ? undefined
    : finding("min_items", path, `${field} must contain at least one entry.`);
}

function repo(value: string, path: string): Check {
  const parts = value.split("/");
  return parts.length === 2 && parts.every((part) => REPO_PART.test(part))
    ? undefined
    : finding("invalid_repo", path, "repo must match owner/repo with non-empty slug parts.");
}

function repoList(values: readonly string[], path: string, field: string): Check {
  return (
    nonEmptyList(values, path, field) ??
    values.map((value, index) => repo(value, `${path}/${index}`)).find(Boolean)
  );
}

function firstOf(checks: ReadonlyArray<() => Check>): Check {
  for (const check of checks) {
    const found = check();
    if (found !== undefined) return found;
  }
  return undefined;
}

function sourceShape(source: SourceRule, at: string): Check {
  return firstOf([
    () => id(source.source_id, `${at}/source_id`, "source_id"),
    () => nonEmptyList(source.allowed_locators, `${at}/allowed_locators`, "allowed_locators"),
    () => nonEmptyList(source.allowed_actions, `${at}/allowed_actions`, "allowed_actions"),
    () => {
      const confidence = source.minimum_confidence;
      if (confidence === undefined || (confidence >= 0 && confidence <= 1)) return undefined;
      return finding(
        "range",
        `${at}/minimum_confidence`,
        "minimum_confidence must be between 0 and 1.",
      );
    },
  ]);
}

function runnerShape(runner: RunnerRule, at: string): Check {
  return firstOf([
    () => id(runner.runner_id, `${at}/runner_id`, "runner_id"),
    () => nonEmptyList(runner.allowed_actions, `${at}/allowed_actions`, "allowed_actions"),
    () => repoList(runner.target_repos, `${at}/target_repos`, "target_repos"),
  ]);
}

function routeShape(route: OwnerRoute, at: string): Check {
  return firstOf([
    () => id(route.route_id, `${at}/route_id`, "route_id"),
    () => nonEmptyList(route.owners, `${at}/owners`, "owners"),
    () => repoList(route.target_repos, `${at}/target_repos`, "target_repos"),
  ]);
}

function targetShape(target: TargetRule, at: string): Check {
  return firstOf([
    () => repo(target.repo, `${at}/repo`),
    () => nonEmptyList(target.runner_ids, `${at}/runner_ids`, "runner_ids"),
    () => nonEmptyList(target.allowed_actions, `${at}/allowed_actions`, "allowed_actions"),
    () => id(target.default_owner_route, `${at}/default_owner_route`, "default_owner_route"),
  ]);
}

function each<T>(items: readonly T[], collection: string, check: (item: T, at: string) => Check) {
  return () => items.map((item, index) => check(item, `/${collection}/${index}`)).find(Boolean);
}

/**
 * The first breach of the policy's required shape, or undefined. Empty strings inside lists
 * and optional strings are refused by the reader already (contract.ts), so upstream's
 * `empty_string` check has nothing left to find here.
 */
export function shapeFinding(policy: OperationalPolicy): Check {
  const { permissions } = policy;
  return firstOf([
    () => id(policy.policy_id, "/policy_id", "policy_id"),
    () =>
      policy.created_at === undefined || DATE_TIME.test(policy.created_at)
        ? undefined
        : finding("date_time", "/created_at", "value must match YYYY-MM-DDTHH:MM:SS(.fraction)?Z."),
    () => nonEmptyList(policy.sources, "/sources", "sources"),
    () => nonEmptyList(policy.runners, "/runners", "runners"),
    () => nonEmptyList(policy.owner_routes, "/owner_routes", "owner_routes"),
    () => nonEmptyList(policy.targets, "/targets", "targets"),
    each(policy.sources, "sources", sourceShape),
    each(policy.runners, "runners", runnerShape),
    each(policy.owner_routes, "owner_routes", routeShape),
    each(policy.targets, "targets", targetShape),
    () => nonEmptyList(policy.dedupe.key_fields, "/dedupe/key_fields", "key_fields"),
    () =>
      permissions.auto_merge
        ? finding(
            "literal_false",
            "/permissions/auto_merge",
            "permissions.auto_merge must be false.",
          )
        : undefined,
    () =>
      permissions.require_human_merge_gate
        ? undefined
        : finding(
            "literal_true",
            "/permissions/require_human_merge_gate",
            "permissions.require_human_merge_gate must be true.",
          ),
  ]);
}

function duplicates(ids: readonly string[], collection: string, field: string): PolicyFinding[] {
  const seen = new Set<string>();
  const out: PolicyFinding[] = [];
  ids.forEach((value, index) => {
    if (!seen.has(value)) {
      seen.add(value);
      return;
    }
    out.push(
      finding(
        "duplicate_id",
        `/${collection}/${index}/${field}`,
        `${collection}.${field} '${value}' must be unique.`,
      ),
    );
  });
  return out;
}

/** Actions that open or change issues and pull requests: they need a published source thread. */
const AUTOMATION: ReadonlySet<PolicyAction> = new Set(["issue-to-pr", "pr-fix-up", "merge-assist"]);

function sourceFindings(policy: OperationalPolicy): PolicyFinding[] {
  return policy.sources.flatMap((source, index) => {
    const automates = source.allowed_actions.some((action) => AUTOMATION.has(action));
    const thread = source.source_thread;
    if (!automates || (thread.required && thread.publish_mode !== "none")) return [];
    return [
      finding(
        "source_thread_required",
        `/sources/${index}/source_thread`,
        `source '${source.source_id}' allows issue/PR automation but does not require source-thread publishing.`,
      ),
    ];
  });
}

function ownerRouteFindings(policy: OperationalPolicy, target: TargetRule, at: string) {
  const out: PolicyFinding[] = [];
  const routeId = target.default_owner_route;
  const route = policy.owner_routes.find((candidate) => candidate.route_id === routeId);
  const path = `${at}/default_owner_route`;
  if (route === undefined) {
    out.push(
      finding(
        "unknown_owner_route",
        path,
        `target '${target.repo}' references unknown owner route '${routeId}'.`,
      ),
    );
  } else if (!route.target_repos.includes(target.repo)) {
    out.push(
      finding(
        "owner_route_target_mismatch",
        path,
        `owner route '${routeId}' does not cover target repo '${target.repo}'.`,
      ),
    );
  }
  return out;
}

function runnerFindings(policy: OperationalPolicy, target: TargetRule, at: string) {
  const out: PolicyFinding[] = [];
  const covered = new Set<PolicyAction>();
  target.runner_ids.forEach((runnerId, index) => {
    const path = `${at}/runner_ids/${index}`;
    const runner = policy.runners.find((candidate) => candidate.runner_id === runnerId);
    if (runner === undefined) {
      const message = `target '${target.repo}' references unknown runner '${runnerId}'.`;
      out.push(finding("unknown_runner", path, message));
      return;
    }
    if (!runner.target_repos.includes(target.repo)) {
      const message = `runner '${runnerId}' does not allow target repo '${target.repo}'.`;
      out.push(finding("runner_target_mismatch", path, message));
    }
    if (target.scafld_required && !runner.scafld_required) {
      const message = `target '${target.repo}' requires scafld but runner '${runnerId}' does not.`;
      out.push(finding("runner_scafld_mismatch", path, message));
    }
    if (runner.state !== "available") return;
    for (const action of target.allowed_actions) {
      if (runner.allowed_actions.includes(action)) covered.add(action);
    }
  });
  // One finding per distinct uncovered action, in the action order of POLICY_ACTIONS.
  for (const action of POLICY_ACTIONS) {
    if (!target.allowed_actions.includes(action) || covered.has(action)) continue;
    out.push(
      finding(
        "target_action_without_runner",
        `${at}/allowed_actions`,
        `target '${target.repo}' allows '${action}' but no available runner supports it.`,
      ),
    );
  }
  return out;
}

function outcomeFindings(policy: OperationalPolicy): PolicyFinding[] {
  const out: PolicyFinding[] = [];
  const { outcomes, permissions } = policy;
  if (
    outcomes.publish_final_source_thread_update &&
    !policy.sources.some((source) => source.source_thread.required)
  ) {
    out.push(
      finding(
        "outcome_without_source_thread",
        "/outcomes/publish_final_source_thread_update",
        "final source-thread updates require at least one source with source_thread.required=true.",
      ),
    );
  }
  if (outcomes.close_source_issue === "when_verified" && !outcomes.verification_required) {
    out.push(
      finding(
        "source_issue_closure_without_verification",
        "/outcomes/close_source_issue",
        "close_source_issue=when_verified requires verification_required=true.",
      ),
    );
  }
  if (permissions.mutate_target_repo && policy.targets.some((target) => !target.scafld_required)) {
    out.push(
      finding(
        "mutation_without_scafld",
        "/permissions/mutate_target_repo",
        "mutating target repo policy requires every target to set scafld_required=true.",
      ),
    );
  }
  return out;
}

/** Every semantic finding of a shape-valid policy, in upstream's order. */
export function semanticFindings(policy: OperationalPolicy): PolicyFinding[] {
  return [
    ...duplicates(
      policy.sources.map((s) => s.source_id),
      "sources",
      "source_id",
    ),
    ...duplicates(
      policy.runners.map((r) => r.runner_id),
      "runners",
      "runner_id",
    ),
    ...duplicates(
      policy.owner_routes.map((r) => r.route_id),
      "owner_routes",
      "route_id",
    ),
    ...duplicates(
      policy.targets.map((t) => t.repo),
      "targets",
      "repo",
    ),
    ...sourceFindings(policy),
    ...policy.targets.flatMap((target, index) => [
      ...ownerRouteFindings(policy, target, `/targets/${index}`),
      ...runnerFindings(policy, target, `/targets/${index}`),
    ]),
    ...outcomeFindings(policy),
  ];
}
