import { describe, expect, it } from "vitest";
import type { Json, JsonRecord } from "../types.js";
import { lintOperationalPolicy } from "./lint.js";
import { cleanPolicy, policyWith } from "./policy.test-kit.js";
import type { PolicyFinding } from "./rules.js";

const lint = (changes: Readonly<Record<string, Json | undefined>>) =>
  lintOperationalPolicy(policyWith(changes));

/** The findings of a policy that fails with a readback (semantic findings only). */
function semantic(changes: Readonly<Record<string, Json | undefined>>): PolicyFinding[] {
  const verdict = lint(changes);
  expect(verdict.status).toBe("fail");
  expect(verdict.readback).toMatchObject({ valid: false, findings: verdict.findings });
  return verdict.findings;
}

/** The one finding of a policy that breaks its shape (no readback). */
function shape(changes: Readonly<Record<string, Json | undefined>>): PolicyFinding {
  const verdict = lint(changes);
  expect(verdict).toMatchObject({ status: "fail", engine: "runx policy", readback: null });
  expect(verdict.findings).toHaveLength(1);
  return verdict.findings[0]!;
}

describe("policy lint: a clean policy", () => {
  it("passes with the readback of what it admits", () => {
    expect(lintOperationalPolicy(cleanPolicy())).toEqual({
      status: "pass",
      engine: "runx policy",
      findings: [],
      readback: {
        policy_id: "northwind-intake",
        schema_version: "runx.operational_policy.v1",
        valid: true,
        findings: [],
        sources: [
          {
            source_id: "tracker-issues",
            provider: "github",
            locator_count: 1,
            allowed_actions: ["issue-intake", "issue-to-pr"],
            source_thread_required: true,
            publish_mode: "comment",
          },
        ],
        runners: [
          {
            runner_id: "ci-runner",
            kind: "github-actions",
            state: "available",
            target_repos: ["northwind/web", "northwind/docs"],
            allowed_actions: ["issue-intake", "issue-to-pr"],
            scafld_required: true,
          },
        ],
        targets: [
          {
            repo: "northwind/web",
            runner_ids: ["ci-runner"],
            default_owner_route: "web-team",
            owner_count: 2,
            allowed_actions: ["issue-intake", "issue-to-pr"],
            scafld_required: true,
            available_runner_count: 1,
          },
          {
            repo: "northwind/docs",
            runner_ids: ["ci-runner"],
            default_owner_route: "web-team",
            owner_count: 2,
            allowed_actions: ["issue-intake"],
            scafld_required: true,
            available_runner_count: 1,
          },
        ],
        outcomes: {
          observe_provider: true,
          verification_required: true,
          close_source_issue: "when_verified",
          publish_final_source_thread_update: true,
        },
        permissions: {
          auto_merge: false,
          mutate_target_repo: true,
          require_human_merge_gate: true,
        },
      },
    });
  });
});

describe("policy lint: shape rules (the first breach, no readback)", () => {
  it.each([
    [
      { "/policy_id": "northwind intake" },
      "invalid_id",
      "/policy_id",
      "policy_id must match ^[A-Za-z0-9_.:-]+$.",
    ],
    [
      { "/created_at": "2026-03-01 09:30:00" },
      "date_time",
      "/created_at",
      "value must match YYYY-MM-DDTHH:MM:SS(.fraction)?Z.",
    ],
    [{ "/sources": [] }, "min_items", "/sources", "sources must contain at least one entry."],
    [
      { "/owner_routes": [] },
      "min_items",
      "/owner_routes",
      "owner_routes must contain at least one entry.",
    ],
    [
      { "/sources/0/source_id": "tracker/issues" },
      "invalid_id",
      "/sources/0/source_id",
      "source_id must match ^[A-Za-z0-9_.:-]+$.",
    ],
    [
      { "/sources/0/allowed_locators": [] },
      "min_items",
      "/sources/0/allowed_locators",
      "allowed_locators must contain at least one entry.",
    ],
    [
      { "/sources/0/minimum_confidence": 1.5 },
      "range",
      "/sources/0/minimum_confidence",
      "minimum_confidence must be between 0 and 1.",
    ],
    [
      { "/runners/0/allowed_actions": [] },
      "min_items",
      "/runners/0/allowed_actions",
      "allowed_actions must contain at least one entry.",
    ],
    [
      { "/runners/0/target_repos/1": "northwind" },
      "invalid_repo",
      "/runners/0/target_repos/1",
      "repo must match owner/repo with non-empty slug parts.",
    ],
    [
      { "/owner_routes/0/target_repos/0": "northwind/web/extra" },
      "invalid_repo",
      "/owner_routes/0/target_repos/0",
      "repo must match owner/repo with non-empty slug parts.",
    ],
    [
      { "/targets/1/repo": "" },
      "invalid_repo",
      "/targets/1/repo",
      "repo must match owner/repo with non-empty slug parts.",
    ],
    [
      { "/targets/0/default_owner_route": "web team" },
      "invalid_id",
      "/targets/0/default_owner_route",
      "default_owner_route must match ^[A-Za-z0-9_.:-]+$.",
    ],
    [
      { "/dedupe/key_fields": [] },
      "min_items",
      "/dedupe/key_fields",
      "key_fields must contain at least one entry.",
    ],
  ] satisfies Array<[Record<string, Json>, string, string, string]>)(
    "%j is %s at %s",
    (changes, code, path, message) => {
      expect(shape(changes)).toEqual({ code, path, message });
    },
  );

  it("refuses widened automation authority: auto-merge on, or the human merge gate off", () => {
    expect(shape({ "/permissions/auto_merge": true })).toEqual({
      code: "literal_false",
      path: "/permissions/auto_merge",
      message: "permissions.auto_merge must be false.",
    });
    expect(shape({ "/permissions/require_human_merge_gate": false })).toEqual({
      code: "literal_true",
      path: "/permissions/require_human_merge_gate",
      message: "permissions.require_human_merge_gate must be true.",
    });
  });

  it("admits fractional seconds and both ends of the confidence range", () => {
    expect(lint({ "/created_at": "2026-03-01T09:30:00.125Z" }).status).toBe("pass");
    expect(lint({ "/sources/0/minimum_confidence": 0 }).status).toBe("pass");
    expect(lint({ "/sources/0/minimum_confidence": 1 }).status).toBe("pass");
    expect(shape({ "/created_at": "2026-03-01T09:30:00.Z" }).code).toBe("date_time");
    expect(shape({ "/created_at": "2026-03-01T09:30:00+00:00" }).code).toBe("date_time");
  });

  it("checks in upstream's order: the policy id before the sources before the permissions", () => {
    const both = { "/permissions/auto_merge": true, "/sources/0/source_id": "a b" };
    expect(shape(both).path).toBe("/sources/0/source_id");
    expect(shape({ ...both, "/policy_id": "x y" }).path).toBe("/policy_id");
    expect(shape({ "/runners/0/runner_id": "?", "/sources/0/allowed_actions": [] }).path).toBe(
      "/sources/0/allowed_actions",
    );
  });
});

describe("policy lint: semantic rules (every finding, with a readback)", () => {
  it("names every duplicate id after its first use", () => {
    const source = (cleanPolicy().sources as JsonRecord[])[0]!;
    expect(semantic({ "/sources/-": source, "/targets/1/repo": "northwind/web" })).toEqual([
      {
        code: "duplicate_id",
        path: "/sources/1/source_id",
        message: "sources.source_id 'tracker-issues' must be unique.",
      },
      {
        code: "duplicate_id",
        path: "/targets/1/repo",
        message: "targets.repo 'northwind/web' must be unique.",
      },
    ]);
  });

  it("requires a published source thread for a source that automates issues or PRs", () => {
    const expected = {
      code: "source_thread_required",
      path: "/sources/0/source_thread",
      message:
        "source 'tracker-issues' allows issue/PR automation but does not require source-thread publishing.",
    };
    expect(semantic({ "/sources/0/source_thread/publish_mode": "none" })).toEqual([expected]);
    const off = semantic({ "/sources/0/source_thread/required": false });
    expect(off[0]).toEqual(expected);
    // Intake alone needs no thread.
    expect(
      lint({
        "/sources/0/allowed_actions": ["issue-intake"],
        "/sources/0/source_thread/publish_mode": "none",
      }).status,
    ).toBe("pass");
  });

  it("resolves each target's owner route and its coverage", () => {
    expect(semantic({ "/targets/1/default_owner_route": "docs-team" })).toEqual([
      {
        code: "unknown_owner_route",
        path: "/targets/1/default_owner_route",
        message: "target 'northwind/docs' references unknown owner route 'docs-team'.",
      },
    ]);
    expect(semantic({ "/owner_routes/0/target_repos": ["northwind/web"] })).toEqual([
      {
        code: "owner_route_target_mismatch",
        path: "/targets/1/default_owner_route",
        message: "owner route 'web-team' does not cover target repo 'northwind/docs'.",
      },
    ]);
  });

  it("resolves each target's runners, their repositories and scafld", () => {
    expect(semantic({ "/targets/1/runner_ids/-": "night-runner" })).toEqual([
      {
        code: "unknown_runner",
        path: "/targets/1/runner_ids/1",
        message: "target 'northwind/docs' references unknown runner 'night-runner'.",
      },
    ]);
    expect(semantic({ "/runners/0/target_repos": ["northwind/web"] })).toEqual([
      {
        code: "runner_target_mismatch",
        path: "/targets/1/runner_ids/0",
        message: "runner 'ci-runner' does not allow target repo 'northwind/docs'.",
      },
    ]);
    expect(semantic({ "/runners/0/scafld_required": false })).toEqual([
      {
        code: "runner_scafld_mismatch",
        path: "/targets/0/runner_ids/0",
        message: "target 'northwind/web' requires scafld but runner 'ci-runner' does not.",
      },
      {
        code: "runner_scafld_mismatch",
        path: "/targets/1/runner_ids/0",
        message: "target 'northwind/docs' requires scafld but runner 'ci-runner' does not.",
      },
    ]);
  });

  it("names each target action no available runner supports, once, in action order", () => {
    const findings = semantic({
      "/targets/0/allowed_actions": ["pr-review", "issue-to-pr", "work-plan", "pr-review"],
    });
    expect(findings.map((f) => [f.code, f.path, f.message])).toEqual([
      [
        "target_action_without_runner",
        "/targets/0/allowed_actions",
        "target 'northwind/web' allows 'work-plan' but no available runner supports it.",
      ],
      [
        "target_action_without_runner",
        "/targets/0/allowed_actions",
        "target 'northwind/web' allows 'pr-review' but no available runner supports it.",
      ],
    ]);
    // A runner in maintenance covers nothing.
    const paused = semantic({ "/runners/0/state": "maintenance" });
    expect(paused.map((f) => f.message)).toEqual([
      "target 'northwind/web' allows 'issue-intake' but no available runner supports it.",
      "target 'northwind/web' allows 'issue-to-pr' but no available runner supports it.",
      "target 'northwind/docs' allows 'issue-intake' but no available runner supports it.",
    ]);
    const readback = lint({ "/runners/0/state": "maintenance" }).readback as JsonRecord;
    const targets = readback.targets as JsonRecord[];
    expect(targets.map((t) => t.available_runner_count)).toEqual([0, 0]);
  });

  it("ties outcomes to source threads and verification, and mutation to scafld", () => {
    expect(
      semantic({
        "/sources/0/allowed_actions": ["issue-intake"],
        "/sources/0/source_thread/required": false,
      }),
    ).toEqual([
      {
        code: "outcome_without_source_thread",
        path: "/outcomes/publish_final_source_thread_update",
        message:
          "final source-thread updates require at least one source with source_thread.required=true.",
      },
    ]);
    expect(semantic({ "/outcomes/verification_required": false })).toEqual([
      {
        code: "source_issue_closure_without_verification",
        path: "/outcomes/close_source_issue",
        message: "close_source_issue=when_verified requires verification_required=true.",
      },
    ]);
    expect(semantic({ "/targets/1/scafld_required": false })).toEqual([
      {
        code: "mutation_without_scafld",
        path: "/permissions/mutate_target_repo",
        message: "mutating target repo policy requires every target to set scafld_required=true.",
      },
    ]);
    expect(
      lint({ "/targets/1/scafld_required": false, "/permissions/mutate_target_repo": false })
        .status,
    ).toBe("pass");
  });

  it("reports findings of every kind together, in upstream's order", () => {
    const findings = semantic({
      "/outcomes/verification_required": false,
      "/targets/1/default_owner_route": "docs-team",
      "/sources/0/source_thread/publish_mode": "none",
      "/runners/-": { ...(cleanPolicy().runners as JsonRecord[])[0]! },
    });
    expect(findings.map((f) => f.code)).toEqual([
      "duplicate_id",
      "source_thread_required",
      "unknown_owner_route",
      "source_issue_closure_without_verification",
    ]);
  });
});
