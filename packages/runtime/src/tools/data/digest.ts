/**
 * `data.digest` and `data.compare`: content digests computed by the runtime, so a
 * skill never hashes what it later binds approvals or plans to. Both hash runx.stable-json.v1
 * canonical JSON (the receipts' canonicaliser) and return one named packet envelope, read in
 * graphs as `<step>.digest_result.data.digest` and `<step>.comparison.data.equal`.
 */
import compareInputSchema from "../../../schemas/tools/data-compare.input.schema.json" with { type: "json" };
import compareOutputSchema from "../../../schemas/tools/data-compare.output.schema.json" with { type: "json" };
import digestInputSchema from "../../../schemas/tools/data-digest.input.schema.json" with { type: "json" };
import digestOutputSchema from "../../../schemas/tools/data-digest.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsDataCompareInput } from "../../generated/validate-tools-data-compare.input.js";
import { validateToolsDataDigestInput } from "../../generated/validate-tools-data-digest.input.js";
import { hasLoneSurrogate, hashCanonical, sha256Prefixed } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import type { Json, NativeTool } from "../types.js";

/** How `data.digest` turns its value into bytes. */
export type DigestEncoding = "canonical_json" | "utf8_text";

/** `data.digest` input after schema validation. */
export interface DataDigestInput {
  value: Json;
  encoding?: DigestEncoding;
}

/** `data.compare` input after schema validation. */
export interface DataCompareInput {
  actual: Json;
  expected: Json;
}

/** The named output of `data.digest` (packet `runx.data.digest.v1`). */
export type DigestResultOutput = {
  digest_result: { data: { algorithm: "sha256"; digest: string } };
};

/** The named output of `data.compare` (packet `runx.data.comparison.v1`). */
export type ComparisonOutput = {
  comparison: { data: { equal: boolean; actual_digest: string; expected_digest: string } };
};

/** The digest of a value under an encoding; INPUT_INVALID when the value cannot be encoded. */
export function digestValue(value: Json, encoding: DigestEncoding): string {
  if (encoding === "canonical_json") return hashCanonical(value);
  if (typeof value !== "string") {
    throw new RuntimeError(
      "INPUT_INVALID",
      `data.digest: value must be a string when encoding is utf8_text (got ${value === null ? "null" : Array.isArray(value) ? "array" : typeof value})`,
      { path: "value" },
    );
  }
  if (hasLoneSurrogate(value)) {
    throw new RuntimeError("INPUT_INVALID", "data.digest: value has an unpaired surrogate", {
      path: "value",
    });
  }
  return sha256Prefixed(value);
}

/** The `data.digest` tool. */
export const dataDigestTool: NativeTool = defineTool<DataDigestInput, DigestResultOutput>({
  name: "data.digest",
  description:
    "Compute the sha256 digest of a value's canonical JSON (runx.stable-json.v1) or of a string's UTF-8 bytes.",
  mutating: false,
  scopes: [],
  inputSchema: digestInputSchema,
  outputSchema: digestOutputSchema,
  validate: validateToolsDataDigestInput,
  run(input) {
    const encoding = input.encoding ?? "canonical_json";
    const digest = digestValue(input.value, encoding);
    return Promise.resolve({
      output: {
        digest_result: { data: { algorithm: "sha256", digest } },
      },
      summary: `${encoding} ${digest}`,
    });
  },
});

/** The `data.compare` tool. */
export const dataCompareTool: NativeTool = defineTool<DataCompareInput, ComparisonOutput>({
  name: "data.compare",
  description:
    "Compare two values by the sha256 digests of their canonical JSON (runx.stable-json.v1).",
  mutating: false,
  scopes: [],
  inputSchema: compareInputSchema,
  outputSchema: compareOutputSchema,
  validate: validateToolsDataCompareInput,
  run(input) {
    const actualDigest = hashCanonical(input.actual);
    const expectedDigest = hashCanonical(input.expected);
    const equal = actualDigest === expectedDigest;
    return Promise.resolve({
      output: {
        comparison: {
          data: { equal, actual_digest: actualDigest, expected_digest: expectedDigest },
        },
      },
      summary: equal ? "equal" : "not equal",
    });
  },
});
