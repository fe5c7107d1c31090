/**
 * `policy.lint` (no scope, read-only): lints one exact `runx.operational_policy.v1`
 * candidate with the native policy engine (lint.ts) and returns the verdict as the
 * named output `policy_lint` (`runx.policy.lint.v1`). A policy that fails the lint is a
 * successful call with `status: "fail"`; only an input outside the tool's contract (another
 * field, a policy that is not an object, more than 1 MiB of JSON) fails the call.
 */
import inputSchema from "../../../schemas/tools/policy/lint.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/policy/lint.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsPolicyLintInput } from "../../generated/validate-tools-policy-lint.input.js";
import { artifactEnvelope } from "../../graph/artifacts.js";
import { defineTool } from "../define-tool.js";
import type { Json, JsonRecord, NativeTool } from "../types.js";
import { lintOperationalPolicy } from "./lint.js";

/** A policy is a reviewable document: its JSON text may be at most this many UTF-8 bytes. */
export const POLICY_MAX_BYTES = 1024 * 1024;

/**
 * True when the compact JSON text of `value` is longer than `limit` bytes. Walks without
 * recursion and stops once past the limit, so no document can exhaust the stack or the time.
 */
export function exceedsJsonBytes(value: Json, limit: number): boolean {
  let bytes = 0;
  const stack: Json[] = [value];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next === "string") bytes += Buffer.byteLength(JSON.stringify(next));
    else if (typeof next !== "object" || next === null) bytes += String(next).length;
    else if (Array.isArray(next)) {
      bytes += 2 + Math.max(0, next.length - 1);
      stack.push(...next);
    } else {
      const entries = Object.entries(next);
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [key, entry] of entries) {
        bytes += Buffer.byteLength(JSON.stringify(key)) + 1;
        stack.push(entry);
      }
    }
    if (bytes > limit) return true;
  }
  return false;
}

/** The `policy.lint` tool. */
export const policyLintTool: NativeTool = defineTool<{ policy: JsonRecord }, JsonRecord>({
  name: "policy.lint",
  description:
    "Lint one exact runx.operational_policy.v1 document with the native policy engine: findings and a readback.",
  mutating: false,
  scopes: [],
  inputSchema,
  outputSchema,
  validate: validateToolsPolicyLintInput,
  run(input) {
    if (exceedsJsonBytes(input.policy, POLICY_MAX_BYTES)) {
      throw new RuntimeError("INPUT_INVALID", "policy.lint: policy is larger than 1 MiB of JSON", {
        path: "policy",
        limit_bytes: POLICY_MAX_BYTES,
      });
    }
    const verdict = lintOperationalPolicy(input.policy);
    const count = verdict.findings.length;
    const summary =
      verdict.status === "pass"
        ? "policy lint passed"
        : `policy lint failed with ${count} finding${count === 1 ? "" : "s"}`;
    return Promise.resolve({
      output: { policy_lint: artifactEnvelope(verdict as unknown as JsonRecord) },
      summary,
    });
  },
});
