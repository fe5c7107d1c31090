/**
 * The policies of upstream's public policy-author fixtures (the shared conformance corpus),
 * through this engine: upstream expects its native lint to pass both drafted policies. The
 * audited policy the tightening case starts from enables auto-merge, which the lint refuses.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { UPSTREAM } from "../../conformance/corpus.test-kit.js";
import type { JsonRecord } from "../types.js";
import { lintOperationalPolicy } from "./lint.js";

function fixture(name: string): JsonRecord {
  const file = join(UPSTREAM, "skills", "policy-author", "fixtures", `${name}.yaml`);
  return parse(readFileSync(file, "utf8")) as JsonRecord;
}

function drafted(doc: JsonRecord): JsonRecord {
  const answers = (doc.caller as JsonRecord).answers as JsonRecord;
  const output = answers["agent_task.policy-author-draft.output"] as JsonRecord;
  return (output.policy_proposal as JsonRecord).policy as JsonRecord;
}

describe("upstream's public policy-author fixtures", () => {
  it.each(["issue-flow-policy-from-brief", "tighten-existing-policy"])(
    "%s: the drafted policy passes the lint",
    (name) => {
      const verdict = lintOperationalPolicy(drafted(fixture(name)));
      expect(verdict.findings).toEqual([]);
      expect(verdict.status).toBe("pass");
      expect(verdict.readback).toMatchObject({ valid: true });
    },
  );

  it("tighten-existing-policy: the audited policy fails on its auto-merge", () => {
    const existing = (fixture("tighten-existing-policy").inputs as JsonRecord)
      .existing_policy as JsonRecord;
    expect(lintOperationalPolicy(existing)).toMatchObject({
      status: "fail",
      findings: [{ code: "literal_false", path: "/permissions/auto_merge" }],
      readback: null,
    });
  });
});
