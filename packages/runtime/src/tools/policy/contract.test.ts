import { describe, expect, it } from "vitest";
import type { Json } from "../types.js";
import { readOperationalPolicy } from "./contract.js";
import { lintOperationalPolicy } from "./lint.js";
import { cleanPolicy, policyWith } from "./policy.test-kit.js";

/** The one finding a document the reader refuses gets. */
function refusal(document: Json): string {
  const verdict = lintOperationalPolicy(document);
  expect(verdict.status).toBe("fail");
  expect(verdict.readback).toBeNull();
  expect(verdict.findings).toHaveLength(1);
  const [finding] = verdict.findings;
  expect(finding?.code).toBe("policy.contract.invalid");
  expect(finding?.path).toBe("$");
  const prefix = "policy does not match runx.operational_policy.v1: ";
  expect(finding?.message.startsWith(prefix)).toBe(true);
  return finding!.message.slice(prefix.length);
}

const POLICY_FIELDS =
  "one of `schema`, `schema_version`, `policy_id`, `created_at`, `sources`, `runners`, " +
  "`owner_routes`, `targets`, `dedupe`, `outcomes`, `permissions`";

describe("the operational policy reader", () => {
  it("admits the clean policy, with the defaults upstream's reader fills in", () => {
    const read = readOperationalPolicy(cleanPolicy());
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.policy.sources[0]?.adapter_policy).toEqual({});
    expect(read.policy.owner_routes[0]?.labels).toEqual([]);
    expect(read.policy.owner_routes[0]?.project).toBeUndefined();
  });

  it("refuses an unknown top-level field and names the accepted ones", () => {
    expect(refusal(policyWith({ "/target_repos": ["northwind/web"] }))).toBe(
      `unknown field \`target_repos\`, expected ${POLICY_FIELDS} at /`,
    );
  });

  it("refuses an unknown nested field where it sits", () => {
    expect(refusal(policyWith({ "/permissions/auto_approve": true }))).toBe(
      "unknown field `auto_approve`, expected one of `auto_merge`, `mutate_target_repo`, " +
        "`require_human_merge_gate` at /permissions",
    );
    expect(refusal(policyWith({ "/sources/0/source_thread/mode": "reply" }))).toBe(
      "unknown field `mode`, expected one of `required`, `publish_mode`, `missing_behavior` " +
        "at /sources/0/source_thread",
    );
  });

  it("refuses a missing required field, after every present field was read", () => {
    expect(refusal(policyWith({ "/dedupe": undefined }))).toBe("missing field `dedupe` at /");
    // Fields are read in sorted key order first: the unknown one is met before the lack.
    expect(refusal(policyWith({ "/dedupe": undefined, "/zone": "eu" }))).toMatch(
      /^unknown field `zone`/,
    );
    // Several missing: the first in declaration order.
    expect(refusal(policyWith({ "/targets": undefined, "/sources": undefined }))).toBe(
      "missing field `sources` at /",
    );
  });

  it("reports the first mismatch in sorted key order", () => {
    const document = policyWith({
      "/targets/0/scafld_required": "yes",
      "/dedupe/on_duplicate": "merge",
    });
    expect(refusal(document)).toBe(
      "unknown variant `merge`, expected one of `reuse`, `comment`, `block` at /dedupe/on_duplicate",
    );
  });

  it("refuses a value of the wrong type with upstream's names for both", () => {
    expect(refusal(policyWith({ "/targets/0/scafld_required": "yes" }))).toBe(
      'invalid type: string "yes", expected a boolean at /targets/0/scafld_required',
    );
    expect(refusal(policyWith({ "/sources/0/minimum_confidence": "high" }))).toBe(
      'invalid type: string "high", expected f64 at /sources/0/minimum_confidence',
    );
    expect(refusal(policyWith({ "/runners": { "ci-runner": {} } }))).toBe(
      "invalid type: map, expected a sequence at /runners",
    );
    expect(refusal(policyWith({ "/outcomes": [true, true, "never", false] }))).toBe(
      "invalid type: sequence, expected struct OperationalPolicyOutcomePolicy at /outcomes",
    );
    expect(refusal(policyWith({ "/runners/0/kind": 3 }))).toBe(
      "invalid type: integer `3`, expected a string at /runners/0/kind",
    );
    expect(refusal(policyWith({ "/runners/0/scafld_required": 0.5 }))).toBe(
      "invalid type: floating point `0.5`, expected a boolean at /runners/0/scafld_required",
    );
    expect(refusal(policyWith({ "/runners/0/state": true }))).toBe(
      "invalid type: boolean `true`, expected variant identifier at /runners/0/state",
    );
  });

  it("refuses an enum value upstream does not spell", () => {
    expect(refusal(policyWith({ "/schema": "runx.operational_policy.v2" }))).toBe(
      "unknown variant `runx.operational_policy.v2`, expected `runx.operational_policy.v1` at /schema",
    );
    expect(refusal(policyWith({ "/targets/1/allowed_actions/0": "issue_intake" }))).toBe(
      "unknown variant `issue_intake`, expected one of `reply-only`, `issue-intake`, " +
        "`work-plan`, `issue-to-pr`, `manual-review`, `pr-review`, `pr-fix-up`, `merge-assist` " +
        "at /targets/1/allowed_actions/0",
    );
  });

  it("refuses empty strings where upstream requires non-empty ones", () => {
    expect(refusal(policyWith({ "/owner_routes/0/owners/1": "" }))).toBe(
      "string must be non-empty at /owner_routes/0/owners/1",
    );
    expect(refusal(policyWith({ "/created_at": "" }))).toBe(
      "datetime must be non-empty at /created_at",
    );
    expect(refusal(policyWith({ "/sources/0/adapter_policy": { "": {} } }))).toBe(
      "string must be non-empty at /sources/0/adapter_policy",
    );
  });

  it("reads null as absent only for optional fields", () => {
    const nulls = policyWith({
      "/created_at": null,
      "/sources/0/minimum_confidence": null,
      "/targets/0/base_branch": null,
      "/owner_routes/0/project": null,
    });
    expect(lintOperationalPolicy(nulls).status).toBe("pass");
    expect(refusal(policyWith({ "/owner_routes/0/labels": null }))).toBe(
      "invalid type: null, expected a sequence at /owner_routes/0/labels",
    );
    expect(refusal(policyWith({ "/sources/0/adapter_policy": null }))).toBe(
      "invalid type: null, expected a map at /sources/0/adapter_policy",
    );
  });

  it("carries an adapter's policy bag through, refusing only past upstream's depth limit", () => {
    let deep: Json = {};
    for (let level = 0; level < 130; level += 1) deep = [deep];
    const bag = { github: { labels: ["triage"], nested: { ok: true } } };
    expect(lintOperationalPolicy(policyWith({ "/sources/0/adapter_policy": bag })).status).toBe(
      "pass",
    );
    expect(refusal(policyWith({ "/sources/0/adapter_policy": { github: deep } }))).toBe(
      "recursion limit exceeded at /sources/0/adapter_policy/github",
    );
    // 127 levels of containers (the policy object included) still read.
    let fits: Json = 1;
    for (let level = 0; level < 127 - 4; level += 1) fits = [fits];
    const ok = lintOperationalPolicy(policyWith({ "/sources/0/adapter_policy": { github: fits } }));
    expect(ok.status).toBe("pass");
  });

  it("refuses a document that is not an object without throwing", () => {
    for (const document of [null, "policy", 3, [cleanPolicy()]] as Json[]) {
      expect(refusal(document)).toMatch(
        /^invalid type: .*, expected struct OperationalPolicy at \/$/,
      );
    }
  });
});
