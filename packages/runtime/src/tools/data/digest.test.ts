import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { validateToolsDataCompareOutput } from "../../generated/validate-tools-data-compare.output.js";
import { validateToolsDataDigestOutput } from "../../generated/validate-tools-data-digest.output.js";
import { dataCompareTool, dataDigestTool } from "./digest.js";
import { failureCode, makeToolContext, successOutput } from "../../testing/tool-context.js";

const sha = (text: string): string =>
  `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

describe("data.digest", () => {
  const ctx = makeToolContext();

  it("hashes the canonical JSON of a value by default (keys sorted, no whitespace)", async () => {
    const output = successOutput(
      await dataDigestTool.execute({ value: { b: [1, 1e21, "é"], a: null } }, ctx),
    );
    expect(validateToolsDataDigestOutput(output)).toBe(true);
    expect(output).toEqual({
      digest_result: {
        data: { algorithm: "sha256", digest: sha('{"a":null,"b":[1,1e+21,"é"]}') },
      },
    });
  });

  it("hashes a string's UTF-8 bytes with encoding utf8_text, and its JSON text otherwise", async () => {
    const text = successOutput(
      await dataDigestTool.execute({ value: "héllo\n", encoding: "utf8_text" }, ctx),
    );
    expect(text).toMatchObject({ digest_result: { data: { digest: sha("héllo\n") } } });
    const json = successOutput(
      await dataDigestTool.execute({ value: "héllo\n", encoding: "canonical_json" }, ctx),
    );
    expect(json).toMatchObject({ digest_result: { data: { digest: sha('"héllo\\n"') } } });
  });

  it("refuses utf8_text of a non-string and a missing value with INPUT_INVALID", async () => {
    expect(
      failureCode(await dataDigestTool.execute({ value: 3, encoding: "utf8_text" }, ctx)),
    ).toBe("INPUT_INVALID");
    expect(failureCode(await dataDigestTool.execute({ encoding: "canonical_json" }, ctx))).toBe(
      "INPUT_INVALID",
    );
    expect(failureCode(await dataDigestTool.execute({ value: 1, encoding: "hex" }, ctx))).toBe(
      "INPUT_INVALID",
    );
  });

  it("refuses a string with an unpaired surrogate instead of hashing replacement bytes", async () => {
    expect(failureCode(await dataDigestTool.execute({ value: "a\ud800" }, ctx))).toBe(
      "CANONICAL_JSON_INVALID",
    );
    expect(
      failureCode(await dataDigestTool.execute({ value: "a\ud800", encoding: "utf8_text" }, ctx)),
    ).toBe("INPUT_INVALID");
  });
});

describe("data.compare", () => {
  const ctx = makeToolContext();

  it("reports equal for values with the same canonical JSON, whatever the key order", async () => {
    const output = successOutput(
      await dataCompareTool.execute({ actual: { x: 1, y: [2] }, expected: { y: [2], x: 1 } }, ctx),
    );
    expect(validateToolsDataCompareOutput(output)).toBe(true);
    const digest = sha('{"x":1,"y":[2]}');
    expect(output).toEqual({
      comparison: {
        data: { equal: true, actual_digest: digest, expected_digest: digest },
      },
    });
  });

  it("reports not equal with both digests when the values differ", async () => {
    const output = successOutput(
      await dataCompareTool.execute({ actual: "mpp", expected: "stripe" }, ctx),
    );
    expect(output).toEqual({
      comparison: {
        data: { equal: false, actual_digest: sha('"mpp"'), expected_digest: sha('"stripe"') },
      },
    });
  });

  it("needs both sides", async () => {
    expect(failureCode(await dataCompareTool.execute({ actual: 1 }, ctx))).toBe("INPUT_INVALID");
  });
});
