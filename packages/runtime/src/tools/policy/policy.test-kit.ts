/**
 * A clean `runx.operational_policy.v1` for the policy tool tests: two repositories, one
 * source, one available runner and one owner route, every rule satisfied. Tests change one
 * field at a time through {@link policyWith}.
 */
import type { Json, JsonRecord } from "../types.js";

/** A policy that lints clean. */
export function cleanPolicy(): JsonRecord {
  return {
    schema: "runx.operational_policy.v1",
    schema_version: "runx.operational_policy.v1",
    policy_id: "northwind-intake",
    created_at: "2026-03-01T09:30:00Z",
    sources: [
      {
        source_id: "tracker-issues",
        provider: "github",
        allowed_locators: ["github://northwind/web/issues"],
        allowed_actions: ["issue-intake", "issue-to-pr"],
        source_thread: { required: true, publish_mode: "comment", missing_behavior: "fail_closed" },
        minimum_confidence: 0.8,
      },
    ],
    runners: [
      {
        runner_id: "ci-runner",
        kind: "github-actions",
        state: "available",
        allowed_actions: ["issue-intake", "issue-to-pr"],
        target_repos: ["northwind/web", "northwind/docs"],
        scafld_required: true,
      },
    ],
    owner_routes: [
      {
        route_id: "web-team",
        owners: ["ana", "ben"],
        target_repos: ["northwind/web", "northwind/docs"],
      },
    ],
    targets: [
      {
        repo: "northwind/web",
        runner_ids: ["ci-runner"],
        allowed_actions: ["issue-intake", "issue-to-pr"],
        default_owner_route: "web-team",
        scafld_required: true,
        base_branch: "main",
      },
      {
        repo: "northwind/docs",
        runner_ids: ["ci-runner"],
        allowed_actions: ["issue-intake"],
        default_owner_route: "web-team",
        scafld_required: true,
      },
    ],
    dedupe: {
      strategy: "source_fingerprint",
      key_fields: ["source.provider", "source.locator"],
      on_duplicate: "reuse",
    },
    outcomes: {
      observe_provider: true,
      verification_required: true,
      close_source_issue: "when_verified",
      publish_final_source_thread_update: true,
    },
    permissions: { auto_merge: false, mutate_target_repo: true, require_human_merge_gate: true },
  };
}

/**
 * The clean policy with each change applied: a JSON pointer (`/sources/0/provider`) to the
 * value to set there (`-` appends to an array), or to `undefined` to remove the field.
 */
export function policyWith(changes: Readonly<Record<string, Json | undefined>>): JsonRecord {
  const policy = cleanPolicy();
  for (const [pointer, value] of Object.entries(changes)) {
    const tokens = pointer.split("/").slice(1);
    const last = tokens.pop() ?? "";
    let parent: Json = policy;
    for (const token of tokens) {
      parent = Array.isArray(parent) ? parent[Number(token)]! : (parent as JsonRecord)[token]!;
    }
    if (Array.isArray(parent)) {
      if (last === "-") parent.push(value as Json);
      else if (value === undefined) parent.splice(Number(last), 1);
      else parent[Number(last)] = value;
    } else if (value === undefined) delete (parent as JsonRecord)[last];
    else (parent as JsonRecord)[last] = value;
  }
  return policy;
}
