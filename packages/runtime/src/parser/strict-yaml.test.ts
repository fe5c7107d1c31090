import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { formatKeyPath, parseStrictYaml } from "./strict-yaml.js";

function refusal(text: string): RuntimeError {
  try {
    parseStrictYaml(text, { file: "X.yaml" });
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected the document to be refused");
}

describe("parseStrictYaml", () => {
  it("returns plain data and locates keys, list items and nested values", () => {
    const doc = parseStrictYaml(
      "---\nrunners:\n  default:\n    args:\n      - a\n      - 'b'\n    count: 1.5\n",
    );
    expect(doc.value).toEqual({ runners: { default: { args: ["a", "b"], count: 1.5 } } });
    expect(doc.locate(["runners", "default", "args", 1])).toEqual({ line: 6, column: 9 });
    expect(doc.locate(["runners", "default"])).toEqual({ line: 3, column: 3 });
    expect(doc.locate(["runners", "default", "missing"])).toEqual({ line: 3, column: 3 });
  });

  it("treats an empty document as null", () => {
    expect(parseStrictYaml("# only a comment\n").value).toBeNull();
  });

  it("adds the line offset to every reported position", () => {
    const doc = parseStrictYaml("a:\n  b: 1\n", { lineOffset: 1 });
    expect(doc.locate(["a", "b"])).toEqual({ line: 3, column: 3 });
    const error = (() => {
      try {
        parseStrictYaml("a: yes\n", { lineOffset: 1 });
      } catch (e) {
        return e as RuntimeError;
      }
      return undefined;
    })();
    expect(error?.details).toMatchObject({ line: 2, column: 4 });
  });

  it.each([
    ["anchor", "a: &x 1\n", 1, 4, "a"],
    ["alias", "a: 1\nb: *x\n", 2, 4, "b"],
    ["merge_key", "base:\n  <<: {x: 1}\n", 2, 3, "base.<<"],
    ["tag", "a: !custom x\n", 1, 4, "a"],
    ["tag", "a: !!str 1\n", 1, 4, "a"],
    ["multiple_documents", "a: 1\n---\nb: 2\n", 2, 1, ""],
    ["multiple_documents", "a: 1\n...\n", 2, 1, ""],
    ["directive", "%YAML 1.1\n---\na: 1\n", 1, 1, ""],
    ["duplicate_key", "a:\n  b: 1\n  b: 2\n", 3, 3, "a.b"],
    ["explicit_key", "a:\n  ? b\n  : c\n", 2, 3, "a.b"],
    ["ambiguous_key", "a:b: 1\n", 1, 1, "a:b"],
    ["ambiguous_scalar", "list:\n  - name: b: c\n", 2, 11, "list[0].name"],
    ["must_quote_scalar", "a: yes\n", 1, 4, "a"],
    ["must_quote_scalar", "a: [1, 0x1F]\n", 1, 8, "a[1]"],
    ["must_quote_scalar", "t: 12:30\n", 1, 4, "t"],
    ["must_quote_scalar", "o: 0o17\n", 1, 4, "o"],
    ["must_quote_scalar", "mode: 0755\n", 1, 7, "mode"],
    ["must_quote_scalar", "f: -.INF\n", 1, 4, "f"],
    ["must_quote_scalar", "Off: 1\n", 1, 1, "Off"],
  ])("refuses %s in %j with its position and key path", (construct, text, line, column, path) => {
    const error = refusal(text);
    expect(error.code).toBe("YAML_FORBIDDEN");
    expect(error.details).toMatchObject({ construct, line, column, path, file: "X.yaml" });
  });

  it("accepts quoted forms of refused scalars and keys", () => {
    const doc = parseStrictYaml(
      "a: 'yes'\nb: \"0x1F\"\n\"c:d\": '12:30'\nurl: http://x.test/a:b\nscopes: [net:http]\n",
    );
    expect(doc.value).toEqual({
      a: "yes",
      b: "0x1F",
      "c:d": "12:30",
      url: "http://x.test/a:b",
      scopes: ["net:http"],
    });
  });

  it("reads date-like plain values as literal strings", () => {
    expect(parseStrictYaml("d: 2024-01-01\nt: 2026-05-22T00:00:00Z\n").value).toEqual({
      d: "2024-01-01",
      t: "2026-05-22T00:00:00Z",
    });
  });

  it("reports malformed YAML as YAML_SYNTAX with a position", () => {
    const error = refusal("a: [1, 2\nb: 3\n");
    expect(error.code).toBe("YAML_SYNTAX");
    expect(error.details.line).toBeTypeOf("number");
    expect(error.details.column).toBeTypeOf("number");
  });

  it("formats key paths with dots and bracketed indexes", () => {
    expect(formatKeyPath(["runners", "default", "args", 1])).toBe("runners.default.args[1]");
    expect(formatKeyPath([0, "a"])).toBe("[0].a");
    expect(formatKeyPath([])).toBe("");
  });
});
