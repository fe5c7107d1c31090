/**
 * `policy.lint` through the built `runx` executable, as upstream's policy-author graph calls
 * it: a `tool: policy.lint` step whose `policy` arrives as a context edge from an earlier
 * step's packet. A clean policy seals with a pass verdict; an invalid one seals too (linting
 * succeeded) and its result carries the findings.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../../testing/cli.js";
import type { Workspace } from "../../testing/cli.js";
import type { JsonRecord } from "../types.js";
import { cleanPolicy, policyWith } from "./policy.test-kit.js";

const GRAPH = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      policy: {type: json, required: true}",
  "    graph:",
  "      name: policy-check",
  "      result_from: [lint]",
  "      steps:",
  "        - id: draft",
  "          tool: control.capture_harness_context",
  "          scopes: [runx:control:read]",
  "          inputs:",
  "            harness: $input.policy",
  "        - id: lint",
  "          tool: policy.lint",
  "          context:",
  "            policy: draft.harness_context.data.harness",
  "",
].join("\n");

interface Envelope {
  status: string;
  result: { policy_lint?: { data: JsonRecord } } | null;
}

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.write("skills/policy-check/SKILL.md", "---\nname: policy-check\n---\nLint a policy.\n");
  ws.write("skills/policy-check/X.yaml", GRAPH);
});
afterEach(() => ws.cleanup());

async function check(policy: JsonRecord): Promise<{ code: number | null; env: Envelope }> {
  const r = await runx(ws, [
    "skill",
    "skills/policy-check",
    "--input-json",
    `policy=${JSON.stringify(policy)}`,
    "--json",
  ]);
  return { code: r.code, env: r.json<Envelope>() };
}

describe("policy.lint in a graph run by the runx CLI", () => {
  it("seals a pass verdict with the readback for a clean policy", async () => {
    const { code, env } = await check(cleanPolicy());
    expect(code).toBe(0);
    expect(env.status).toBe("sealed");
    expect(env.result?.policy_lint?.data).toMatchObject({
      status: "pass",
      engine: "runx policy",
      findings: [],
      readback: { policy_id: "northwind-intake", valid: true },
    });
  });

  it("seals the findings of an invalid policy", async () => {
    const { code, env } = await check(
      policyWith({
        "/targets/1/default_owner_route": "docs-team",
        "/outcomes/verification_required": false,
      }),
    );
    expect(code).toBe(0);
    expect(env.status).toBe("sealed");
    const data = env.result?.policy_lint?.data;
    expect(data).toMatchObject({ status: "fail", readback: { valid: false } });
    expect((data?.findings as JsonRecord[]).map((f) => [f.code, f.path])).toEqual([
      ["unknown_owner_route", "/targets/1/default_owner_route"],
      ["source_issue_closure_without_verification", "/outcomes/close_source_issue"],
    ]);
  });

  it("returns a contract finding, not a crash, for a policy with an unknown field", async () => {
    const { env } = await check(policyWith({ "/permissions/auto_approve": true }));
    expect(env.status).toBe("sealed");
    expect(env.result?.policy_lint?.data).toMatchObject({
      status: "fail",
      findings: [{ code: "policy.contract.invalid", path: "$" }],
      readback: null,
    });
  });
});
