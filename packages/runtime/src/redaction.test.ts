import { describe, expect, it } from "vitest";
import {
  createTaintSet,
  DERIVED_MIN_SECRET_BYTES,
  REDACTION_MARKER,
  REDACTION_MAX_DEPTH,
  secretPatterns,
} from "./redaction.js";

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

  it("derives encodings only for secrets of six or more UTF-8 bytes", () => {
    expect(DERIVED_MIN_SECRET_BYTES).toBe(6);
    expect(secretPatterns("abc12")).toHaveLength(1);
    expect(secretPatterns("")).toEqual([]);
    expect(createTaintSet(["abc12"]).redactText("616263 6162633132 YWJjMTI=")).toBe(
      "616263 6162633132 YWJjMTI=",
    );
    expect(createTaintSet(["abcdef"]).redactText("x YWJjZGVm y")).toBe(`x ${REDACTION_MARKER} y`);
  });

  it("scrubs hex in any letter case, and one \\x escape per byte", () => {
    const taint = createTaintSet([SECRET]);
    const hex = Buffer.from(SECRET, "utf8").toString("hex");
    const mixed = [...hex].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join("");
    const escaped = hex.replace(/(..)/g, "\\x$1");
    for (const form of [hex, hex.toUpperCase(), mixed, `0x${hex}`, escaped]) {
      expect(taint.redactText(`dump: ${form}.`), form).not.toContain(hex.slice(4, -4));
      expect(taint.taints(form)).toBe(true);
    }
    expect(taint.redactText(`dump: ${hex}.`)).toBe(`dump: ${REDACTION_MARKER}.`);
  });

  it("scrubs any mix of characters and percent-escapes", () => {
    const secret = "p@ss wörd/42";
    const taint = createTaintSet([secret]);
    const all = [...Buffer.from(secret, "utf8")].map((b) => `%${b.toString(16)}`).join("");
    const forms = [all, all.toUpperCase(), encodeURIComponent(secret), "p%40ss+w%C3%B6rd/42"];
    for (const form of forms) expect(taint.redactText(`q=${form}&`)).toBe(`q=${REDACTION_MARKER}&`);
  });

  it("scrubs base64 of a longer string holding the secret at each byte alignment", () => {
    const taint = createTaintSet([SECRET]);
    for (const prefix of ["", "a", "ab", "abc", "user:", "user1:"]) {
      for (const suffix of ["", ";", "; tail of the header"]) {
        const bytes = Buffer.from(`${prefix}${SECRET}${suffix}`, "utf8");
        for (const form of [bytes.toString("base64"), bytes.toString("base64url")]) {
          const out = taint.redactText(`Basic ${form}`);
          expect(out, `${prefix}|${suffix}`).toContain(REDACTION_MARKER);
          // At most three characters either side of the inner part mix in other bytes.
          const left = out.slice("Basic ".length, out.indexOf(REDACTION_MARKER));
          const prefixChars = Math.ceil((prefix.length * 8) / 6);
          expect(left.length).toBeLessThanOrEqual(prefixChars + 1);
        }
      }
    }
  });

  it("scrubs overlapping matches of different batches as one stretch", () => {
    // A secret long enough that its forms compile into several regular expressions.
    const long = `${"k3y-".repeat(1200)}short-secret`;
    const taint = createTaintSet([long, "short-secret"]);
    const hex = Buffer.from(long, "utf8").toString("hex");
    expect(taint.redactText(`a ${long} b ${hex} c short-secret d`)).toBe(
      `a ${REDACTION_MARKER} b ${REDACTION_MARKER} c ${REDACTION_MARKER} d`,
    );
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
