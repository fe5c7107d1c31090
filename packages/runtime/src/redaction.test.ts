import { describe, expect, it } from "vitest";
import { createTaintSet, REDACTION_MARKER, REDACTION_MAX_DEPTH, secretForms } from "./redaction.js";

const SECRET = "s3cr3t/t0ken+value?";

describe("createTaintSet", () => {
  it("scrubs exact secret values from text", () => {
    const taint = createTaintSet(["hunter2-password"]);
    expect(taint.redactText("login with hunter2-password now")).toBe(
      `login with ${REDACTION_MARKER} now`,
    );
    expect(taint.taints("hunter2-password")).toBe(true);
    expect(taint.taints("nothing here")).toBe(false);
  });

  it("scrubs base64 and URL-derived forms of secrets of six or more characters", () => {
    const taint = createTaintSet([SECRET]);
    const bytes = Buffer.from(SECRET, "utf8");
    const forms = [
      bytes.toString("base64"),
      bytes.toString("base64").replace(/=+$/, ""),
      bytes.toString("base64url"),
      encodeURIComponent(SECRET),
      new URLSearchParams({ q: SECRET }).toString().slice(2),
    ];
    for (const form of forms) {
      expect(taint.redactText(`Authorization: Basic ${form};`)).toBe(
        `Authorization: Basic ${REDACTION_MARKER};`,
      );
    }
  });

  it("derives encodings only for long secrets and keeps only long derived forms", () => {
    expect(secretForms("abc12")).toEqual(["abc12"]);
    expect(secretForms("")).toEqual([]);
    const forms = secretForms("abcdef");
    expect(forms).toContain("YWJjZGVm");
    expect(forms.every((form) => form === "abcdef" || form.length >= 8)).toBe(true);
  });

  it("scrubs secrets from raw bytes, including multi-byte UTF-8 secrets", () => {
    const secret = "pässwörd-ünïcode";
    const taint = createTaintSet([secret]);
    const input = Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(`x=${secret};`, "utf8")]);
    const output = Buffer.from(taint.redactBytes(input));
    expect(output.subarray(0, 2)).toEqual(Buffer.from([0xff, 0x00]));
    expect(output.subarray(2).toString("utf8")).toBe(`x=${REDACTION_MARKER};`);
  });

  it("decodes JSON before redacting so escapes cannot rebuild a secret", () => {
    const taint = createTaintSet(["topsecret"]);
    const escaped = '{"note":"\\u0074opsecret","list":["a topsecret b"]}';
    // Plain text scrubbing cannot see through the \u0074 escape; decoding can.
    expect(taint.redactText(escaped)).toContain("\\u0074opsecret");
    expect(JSON.parse(taint.redactJsonText(escaped))).toEqual({
      note: REDACTION_MARKER,
      list: [`a ${REDACTION_MARKER} b`],
    });
    expect(taint.redactJsonText("not json topsecret")).toBe(`not json ${REDACTION_MARKER}`);
  });

  it("redacts object keys and de-duplicates collisions with #2, #3", () => {
    const taint = createTaintSet(["alpha-key", "beta-key!"]);
    const redacted = taint.redactJson({ "alpha-key": 1, "beta-key!": 2, other: "alpha-key" });
    expect(redacted).toEqual({
      [REDACTION_MARKER]: 1,
      [`${REDACTION_MARKER}#2`]: 2,
      other: REDACTION_MARKER,
    });
  });

  it("replaces structures nested deeper than the depth cap wholesale", () => {
    const taint = createTaintSet(["irrelevant-secret"]);
    let deep: unknown = { leaf: "value" };
    for (let i = 0; i < REDACTION_MAX_DEPTH + 5; i++) deep = [deep];
    let cursor = taint.redactJson(deep);
    let depth = 0;
    while (Array.isArray(cursor)) {
      cursor = (cursor as unknown[])[0];
      depth++;
    }
    expect(depth).toBe(REDACTION_MAX_DEPTH);
    expect(cursor).toBe(REDACTION_MARKER);
  });

  it("keeps non-string JSON values and accepts secrets added later", () => {
    const taint = createTaintSet();
    expect(taint.redactText("late-secret")).toBe("late-secret");
    taint.add("late-secret");
    expect(taint.redactJson({ n: 1, b: true, z: null, s: "late-secret" })).toEqual({
      n: 1,
      b: true,
      z: null,
      s: REDACTION_MARKER,
    });
  });

  it("prefers the longest match so no fragment of a secret survives", () => {
    const taint = createTaintSet(["abcdefgh", "abcdefghijkl"]);
    expect(taint.redactText("xxabcdefghijklxx")).toBe(`xx${REDACTION_MARKER}xx`);
  });
});
