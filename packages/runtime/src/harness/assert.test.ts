import { describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { firstDifference } from "./assert.js";
import { parseHarnessCase } from "./fixture.js";

describe("harness subset and exact matching", () => {
  it("recurses into objects and compares a missing key as null", () => {
    const expected = { mode: "subset" as const, value: { a: { b: 1 }, gone: null } };
    expect(firstDifference(expected, { a: { b: 1, c: 2 }, extra: true }, "out")).toBeUndefined();
    expect(firstDifference(expected, { a: { b: 2 } }, "out")).toEqual({
      path: "out.a.b",
      expected: 1,
      actual: 2,
    });
  });

  it("matches arrays as an ordered prefix", () => {
    const expected = { mode: "subset" as const, value: [{ id: 1 }, { id: 2 }] };
    expect(firstDifference(expected, [{ id: 1, x: 0 }, { id: 2 }, { id: 3 }], "o")).toBeUndefined();
    expect(firstDifference(expected, [{ id: 2 }, { id: 1 }], "o")?.path).toBe("o[0].id");
    expect(firstDifference(expected, [{ id: 1 }], "o")?.path).toBe("o");
  });

  it("requires deep equality for exact and names the first differing path", () => {
    const expected = { mode: "exact" as const, value: { a: 1, b: [1, 2] } };
    expect(firstDifference(expected, { a: 1, b: [1, 2] }, "o")).toBeUndefined();
    expect(firstDifference(expected, { a: 1, b: [1, 3] }, "o")?.path).toBe("o.b[1]");
    expect(firstDifference(expected, { a: 1, b: [1, 2], c: 0 }, "o")?.path).toBe("o.c");
  });
});

describe("harness fixture parsing", () => {
  const parse = (raw: unknown) =>
    parseHarnessCase(raw as never, { inline: false, defaultKind: "skill" });
  const codeOf = (raw: unknown): string | undefined => {
    try {
      parse(raw);
      return undefined;
    } catch (error) {
      return isRuntimeError(error) ? error.code : "not a runtime error";
    }
  };

  it("refuses retired receipt keys, unknown fields, forbidden env and the old web_responses", () => {
    expect(codeOf({ name: "a", expect: { receipt: { skill_name: "x" } } })).toBe("HARNESS_INVALID");
    expect(codeOf({ name: "a", surprise: 1 })).toBe("HARNESS_INVALID");
    expect(codeOf({ name: "a", env: { RUNX_CWD: "/" } })).toBe("HARNESS_INVALID");
    expect(codeOf({ name: "a", caller: { web_responses: {} } })).toBe("HARNESS_INVALID");
    expect(codeOf({ name: "a", expect: { output: { exact: 1, subset: 1 } } })).toBe(
      "HARNESS_INVALID",
    );
  });

  it("parses the replay lanes instead of marking them unsupported", () => {
    const spec = parse({
      name: "a",
      setup: { receipts: ["fixtures/prior.json"] },
      caller: {
        http_exchanges: [],
        provider_responses: {
          principal_id: "p",
          grants: [{ grant_id: "g", provider: "x", scopes: [] }],
          operations: [{ grant_id: "g", operation: "o", target: "t", access: "read" }],
        },
      },
    });
    expect(spec.unsupported).toEqual([]);
    expect(spec.seedReceipts).toEqual(["fixtures/prior.json"]);
    expect(spec.http?.exchanges).toEqual([]);
    expect(spec.providers?.operations[0]?.result).toEqual({});
  });
});
