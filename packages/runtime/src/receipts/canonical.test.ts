import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import {
  canonicalJson,
  canonicalJsonOfPortable,
  canonicalNumber,
  canonicalString,
  compareCodePoints,
  hashCanonical,
  sha256Prefixed,
} from "./canonical.js";
import { readUpstreamJson } from "./test-oracles.js";

interface StableCase {
  name: string;
  value: unknown;
  expected_canonical_json: string;
  expected_sha256: string;
  expected_utf8_hex: string;
}

function cases(file: string): StableCase[] {
  const document = readUpstreamJson(`fixtures/contracts/canonical-json/${file}`) as {
    canonicalization: string;
    cases: StableCase[];
  };
  expect(document.canonicalization).toBe("runx.stable-json.v1");
  return document.cases;
}

function holey(): unknown[] {
  const items: unknown[] = [1];
  items[2] = 3;
  return items;
}

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    return error instanceof RuntimeError ? error.code : "NOT_A_RUNTIME_ERROR";
  }
  return undefined;
}

describe("runx.stable-json.v1 oracles", () => {
  const all = [
    ...cases("runx-stable-json-v1.cases.json"),
    ...cases("runx-stable-json-v1.numbers.cases.json"),
  ];

  it("covers every upstream vector", () => {
    expect(all).toHaveLength(43);
  });

  it.each(all.map((c) => [c.name, c] as const))(
    "writes %s byte for byte with the pinned sha256",
    (_name, c) => {
      const text = canonicalJson(c.value);
      expect(text).toBe(c.expected_canonical_json);
      expect(Buffer.from(text, "utf8").toString("hex")).toBe(c.expected_utf8_hex);
      expect(sha256Prefixed(text)).toBe(c.expected_sha256);
      expect(hashCanonical(c.value)).toBe(c.expected_sha256);
    },
  );
});

describe("canonicalJson", () => {
  it("prints negative zero as 0 and numbers the ECMAScript way", () => {
    expect(canonicalJson(-0)).toBe("0");
    expect(canonicalJson([1e21, 1e-7, 5e-324, 2.0, -1.5])).toBe("[1e+21,1e-7,5e-324,2,-1.5]");
  });

  it("sorts keys by code point, not by UTF-16 unit or locale", () => {
    // U+FF61 sorts before U+1F600 by code point but after it by UTF-16 code unit.
    expect(canonicalJson({ "\u{1F600}": 2, "\uFF61": 1 })).toBe('{"\uFF61":1,"\u{1F600}":2}');
    expect(canonicalJson({ a: 1, B: 2, _: 3, Z: 4 })).toBe('{"B":2,"Z":4,"_":3,"a":1}');
    expect(compareCodePoints("\uFF61", "\u{1F600}")).toBeLessThan(0);
    expect(compareCodePoints("\u{1F600}", "\u{1F601}")).toBeLessThan(0);
    expect(compareCodePoints("ab", "a")).toBeGreaterThan(0);
  });

  it("leaves solidus, U+2028, U+2029 and non-ASCII unescaped", () => {
    expect(canonicalJson("/\u2028\u2029é\u007f")).toBe('"/\u2028\u2029é\u007f"');
  });

  it("escapes only quote, backslash and control characters", () => {
    expect(canonicalJson('"\\\b\f\n\r\t\u0001')).toBe('"\\"\\\\\\b\\f\\n\\r\\t\\u0001"');
  });

  it("accepts shared references and null-prototype objects", () => {
    const shared = { x: 1 };
    const bare = Object.create(null) as Record<string, unknown>;
    bare.k = [shared, shared];
    expect(canonicalJson(bare)).toBe('{"k":[{"x":1},{"x":1}]}');
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a lone high surrogate", "\uD800"],
    ["a lone low surrogate in a key", { "\uDC00": 1 }],
    ["undefined", undefined],
    ["undefined in an object", { a: undefined }],
    ["undefined in an array", [undefined]],
    ["a function", () => 1],
    ["a bigint", 10n],
    ["a symbol", Symbol("s")],
    ["a Date", new Date(0)],
    ["a Map", new Map()],
    ["a class instance", new (class Thing {})()],
    ["an array hole", holey()],
  ])("rejects %s with CANONICAL_JSON_INVALID", (_label, value) => {
    expect(codeOf(() => canonicalJson(value))).toBe("CANONICAL_JSON_INVALID");
  });

  it("rejects symbol keys and cycles", () => {
    expect(codeOf(() => canonicalJson({ [Symbol("k")]: 1 }))).toBe("CANONICAL_JSON_INVALID");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeOf(() => canonicalJson(cyclic))).toBe("CANONICAL_JSON_INVALID");
    const looped: unknown[] = [];
    looped.push([looped]);
    expect(codeOf(() => canonicalJson(looped))).toBe("CANONICAL_JSON_INVALID");
  });

  it("names the offending path in the error details", () => {
    try {
      canonicalJson({ a: [1, Number.NaN] });
      expect.unreachable();
    } catch (error) {
      expect((error as RuntimeError).details.path).toBe("$.a[1]");
    }
  });

  it.each([
    ["a nested lone surrogate", { b: { c: ["ok", "\uDBFF"] } }, "$.b.c[1]"],
    ["a lone surrogate key deep down", [{ x: { "\uDFFF": 1 } }], "$[0].x.\uDFFF"],
    [
      "a nested cycle",
      (() => {
        const o: Record<string, unknown> = { n: {} };
        (o.n as Record<string, unknown>).back = o;
        return o;
      })(),
      "$.n.back",
    ],
    ["a nested class instance", { list: [1, new Date(0)] }, "$.list[1]"],
    ["a nested hole", { h: holey() }, "$.h[1]"],
  ])("names the path of %s (after the fast writer hands over)", (_label, value, path) => {
    try {
      canonicalJson(value);
      expect.unreachable();
    } catch (error) {
      expect((error as RuntimeError).code).toBe("CANONICAL_JSON_INVALID");
      expect((error as RuntimeError).details.path).toBe(path);
    }
  });

  it("writes well-formed astral and non-ASCII text and keys unchanged", () => {
    const value = { "\u{1F600}": "\u{1F601}\u00e9", "\uFF61": ["\u2028", -0, 1e21], "": null };
    expect(canonicalJson(value)).toBe(
      '{"":null,"\uFF61":["\u2028",0,1e+21],"\u{1F600}":"\u{1F601}\u00e9"}',
    );
  });

  it("writes the same bytes as a plain reference writer for mixed keys and strings", () => {
    // Reference: JSON.stringify of each string, keys ordered by code point.
    const reference = (value: unknown): string => {
      if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
      if (value !== null && typeof value === "object") {
        const keys = Object.keys(value).sort((a, b) => {
          const x = Array.from(a, (c) => c.codePointAt(0) as number);
          const y = Array.from(b, (c) => c.codePointAt(0) as number);
          for (let i = 0; i < Math.min(x.length, y.length); i++) {
            if (x[i] !== y[i]) return (x[i] as number) - (y[i] as number);
          }
          return x.length - y.length;
        });
        const record = value as Record<string, unknown>;
        return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(record[k])}`).join(",")}}`;
      }
      return JSON.stringify(value);
    };
    // Plain ASCII, every character JSON escapes, and characters whose UTF-16 order differs
    // from their code-point order (U+E000..U+FFFF against astral pairs).
    const pool = [
      "a",
      "B",
      "_",
      "~",
      '"',
      "\\",
      "\n",
      "\u0001",
      "\u001f",
      "\u007f",
      "\u00e9",
      "\u2028",
      "\ue000",
      "\uff61",
      "\uffff",
      "\u{1F600}",
      "\u{10000}",
      "/",
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const text = () =>
      Array.from({ length: next() % 5 }, () => pool[next() % pool.length]).join("");
    const value = (depth: number): unknown => {
      const pick = next() % 6;
      if (depth > 2 || pick === 0) return text();
      if (pick === 1) return (next() % 2001) / 8 - 125;
      if (pick === 2) return Array.from({ length: next() % 4 }, () => value(depth + 1));
      const out: Record<string, unknown> = {};
      for (let i = next() % 6; i > 0; i--) out[text()] = value(depth + 1);
      return out;
    };
    for (let i = 0; i < 500; i++) {
      const v = { [text()]: value(0), [text()]: value(0), [text()]: text() };
      expect(canonicalJson(v)).toBe(reference(v));
    }
  });
});

describe("single-value and portable writers", () => {
  const strings = [
    "",
    "plain",
    'a"b',
    "back\\slash",
    "tab\t",
    "\u0000",
    "\u00e9\u2028",
    "\u{1F600}",
  ];

  it("canonicalString writes what canonicalJson writes for any well-formed string", () => {
    for (const value of strings) expect(canonicalString(value)).toBe(canonicalJson(value));
  });

  it("canonicalString refuses a lone surrogate as canonicalJson does", () => {
    expect(codeOf(() => canonicalString("a\ud800"))).toBe("CANONICAL_JSON_INVALID");
    expect(codeOf(() => canonicalString("\udc00"))).toBe("CANONICAL_JSON_INVALID");
  });

  it("canonicalNumber writes ECMAScript numbers and refuses non-finite ones", () => {
    for (const value of [0, -0, 1.5, -3, 1e21, 2 ** 60]) {
      expect(canonicalNumber(value)).toBe(canonicalJson(value));
    }
    expect(codeOf(() => canonicalNumber(Number.NaN))).toBe("CANONICAL_JSON_INVALID");
    expect(codeOf(() => canonicalNumber(Infinity))).toBe("CANONICAL_JSON_INVALID");
  });

  it("canonicalJsonOfPortable writes canonicalJson's bytes or nothing", () => {
    const ok = { z: [1, 2.5, -0, Number.MAX_SAFE_INTEGER], a: { "\u{1F600}": "x", b: null } };
    expect(canonicalJsonOfPortable(ok)).toBe(canonicalJson(ok));
    // An integer beyond 2^53 - 1 anywhere, or anything canonicalJson refuses: undefined.
    expect(canonicalJsonOfPortable({ a: [{ b: 2 ** 53 }] })).toBeUndefined();
    expect(canonicalJsonOfPortable({ a: -(2 ** 60) })).toBeUndefined();
    expect(canonicalJsonOfPortable({ a: "\ud800" })).toBeUndefined();
    expect(canonicalJsonOfPortable({ a: undefined })).toBeUndefined();
    expect(canonicalJsonOfPortable({ a: Number.NaN })).toBeUndefined();
    // Every double from 2^53 up is an integer, so 1e300 is unportable too; fractions are not.
    expect(canonicalJsonOfPortable({ a: 1e300 })).toBeUndefined();
    expect(canonicalJsonOfPortable({ a: 12345.678 })).toBe('{"a":12345.678}');
  });
});
