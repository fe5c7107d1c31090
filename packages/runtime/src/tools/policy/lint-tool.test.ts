import { describe, expect, it } from "vitest";
import { validateToolsPolicyLintOutput } from "../../generated/validate-tools-policy-lint.output.js";
import { runtimeToolCatalog } from "../../run/tools.js";
import {
  failureCode,
  makeToolContext,
  successData,
  successOutput,
} from "../../testing/tool-context.js";
import type { Json, JsonRecord, ToolResult } from "../types.js";
import { POLICY_MAX_BYTES, exceedsJsonBytes, policyLintTool } from "./lint-tool.js";
import { cleanPolicy, policyWith } from "./policy.test-kit.js";

const ctx = makeToolContext({ scopes: [] });

async function lint(input: JsonRecord): Promise<ToolResult> {
  return policyLintTool.execute(input, ctx);
}

describe("policy.lint", () => {
  it("is a read-only tool needing no scope, with the named output policy_lint", () => {
    const inspected = runtimeToolCatalog().inspect("policy.lint");
    expect(inspected).toMatchObject({ name: "policy.lint", mutating: false, scopes: [] });
    expect(inspected.input_schema.required).toEqual(["policy"]);
    expect(inspected.output_schema.required).toEqual(["policy_lint"]);
    const envelope = (inspected.output_schema.properties as Record<string, JsonRecord>).policy_lint;
    expect(envelope?.description).toBe("runx.policy.lint.v1 packet");
  });

  it("returns a pass verdict for a clean policy as policy_lint.data", async () => {
    const result = await lint({ policy: cleanPolicy() });
    expect(validateToolsPolicyLintOutput(successOutput(result))).toBe(true);
    expect(result).toMatchObject({ summary: "policy lint passed" });
    const data = successData(result);
    expect(data).toMatchObject({ status: "pass", engine: "runx policy", findings: [] });
    expect(data.readback).toMatchObject({ policy_id: "northwind-intake", valid: true });
  });

  it("succeeds with a fail verdict for a policy that breaks a rule", async () => {
    const semantic = await lint({
      policy: policyWith({ "/outcomes/verification_required": false }),
    });
    expect(validateToolsPolicyLintOutput(successOutput(semantic))).toBe(true);
    expect(semantic).toMatchObject({ summary: "policy lint failed with 1 finding" });
    expect(successData(semantic)).toMatchObject({
      status: "fail",
      findings: [{ code: "source_issue_closure_without_verification" }],
      readback: { valid: false },
    });
    const widened = await lint({ policy: policyWith({ "/permissions/auto_merge": true }) });
    expect(validateToolsPolicyLintOutput(successOutput(widened))).toBe(true);
    expect(successData(widened)).toMatchObject({
      status: "fail",
      findings: [{ code: "literal_false", path: "/permissions/auto_merge" }],
      readback: null,
    });
    const unknown = await lint({ policy: policyWith({ "/runner": "ci-runner" }) });
    expect(validateToolsPolicyLintOutput(successOutput(unknown))).toBe(true);
    expect(successData(unknown)).toMatchObject({
      findings: [{ code: "policy.contract.invalid", path: "$" }],
      readback: null,
    });
  });

  it("refuses an input outside its contract without a verdict", async () => {
    const extra = await lint({ policy: cleanPolicy(), lint: { status: "pass" } });
    expect(failureCode(extra)).toBe("INPUT_INVALID");
    expect(failureCode(await lint({ policy: "schema: runx.operational_policy.v1" }))).toBe(
      "INPUT_INVALID",
    );
    expect(failureCode(await lint({}))).toBe("INPUT_INVALID");
  });

  it("refuses a policy larger than 1 MiB of JSON, naming the limit", async () => {
    const bag = { notes: "x".repeat(POLICY_MAX_BYTES) };
    const result = await lint({ policy: policyWith({ "/sources/0/adapter_policy": bag }) });
    expect(result).toMatchObject({
      status: "failure",
      code: "INPUT_INVALID",
      summary: "policy.lint: policy is larger than 1 MiB of JSON",
      output: { details: { path: "policy", limit_bytes: POLICY_MAX_BYTES } },
    });
  });
});

describe("the policy size bound", () => {
  it("counts exactly the bytes of the compact JSON text", () => {
    const samples: Json[] = [
      cleanPolicy(),
      { ключ: ["é", 1.25, -3, null, true, { a: [] }], quote: 'say "hi"\n' },
      [],
      "",
    ];
    for (const value of samples) {
      const bytes = Buffer.byteLength(JSON.stringify(value));
      expect(exceedsJsonBytes(value, bytes)).toBe(false);
      expect(exceedsJsonBytes(value, bytes - 1)).toBe(true);
    }
  });

  it("measures a deeply nested value without recursion", () => {
    let deep: Json = [];
    for (let level = 0; level < 200_000; level += 1) deep = [deep];
    expect(exceedsJsonBytes(deep, POLICY_MAX_BYTES)).toBe(false);
    expect(exceedsJsonBytes(deep, 1000)).toBe(true);
  });
});
