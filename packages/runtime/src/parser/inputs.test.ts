import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { InputDeclaration } from "./inputs.js";
import {
  inputsJsonSchema,
  parseInputFlags,
  resolveInputs,
  suppliedFromDocument,
} from "./inputs.js";

function thrown(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

const decl = (name: string, extra: Partial<InputDeclaration> = {}): InputDeclaration => ({
  name,
  type: "string",
  required: false,
  ...extra,
});

describe("parseInputFlags", () => {
  it.each([
    [["-i", "n=5"], { n: 5 }],
    [["-i", "n", "5"], { n: 5 }],
    [["--input", "ok=true"], { ok: true }],
    [["--input=s=hello"], { s: "hello" }],
    [["--input", "eq=a=b"], { eq: "a=b" }],
    [["--input-json", 'o={"a":[1]}'], { o: { a: [1] } }],
    [["--input-json", "o", '{"a":1}'], { o: { a: 1 } }],
    [["--input-json=o=[1,2]"], { o: [1, 2] }],
    [["--message", "hi"], { message: "hi" }],
    [["--message=hi there"], { message: "hi there" }],
    [["--count", "-5"], { count: -5 }],
    [["--verbose"], { verbose: true }],
    [["--dry-run", "--message", "x"], { dry_run: true, message: "x" }],
    [["-i", "  --max-items  =3"], { max_items: 3 }],
  ])("reads %j as %j", (tokens, expected) => {
    const values = Object.fromEntries(
      Object.entries(parseInputFlags(tokens).inputs).map(([k, v]) => [k, v.value]),
    );
    expect(values).toEqual(expected);
  });

  it("keeps the raw text of values parsed from CLI text, but not of --input-json values", () => {
    const { inputs } = parseInputFlags([
      "--message",
      "5",
      "--input-json",
      "n=5",
      "-i",
      "big=12345678901234567890",
    ]);
    expect(inputs.message).toEqual({ value: 5, raw: "5" });
    expect(inputs.n).toEqual({ value: 5 });
    expect(inputs.big?.raw).toBe("12345678901234567890");
  });

  it("returns --inputs separately and collects positionals", () => {
    expect(parseInputFlags(["--inputs", "in.json"])).toEqual({
      inputs: {},
      inputsFile: "in.json",
      positionals: [],
    });
    expect(parseInputFlags(["--inputs=-", "--", "--not-a-flag"]).positionals).toEqual([
      "--not-a-flag",
    ]);
  });

  it.each([
    [["-i", "a=1", "--input", "a=2"]],
    [["--a-b", "1", "--a_b", "2"]],
    [["--input-json", "x=1", "--x", "2"]],
  ])("refuses a key supplied twice: %j", (tokens) => {
    const error = thrown(() => parseInputFlags(tokens));
    expect(error.code).toBe("INPUT_DUPLICATE");
  });

  it.each([
    [["--inputs", "a.json", "-i", "a=1"]],
    [["--message", "hi", "--inputs", "-"]],
    [["--inputs", "a", "--inputs", "b"]],
  ])("refuses --inputs mixed with per-key inputs or repeated: %j", (tokens) => {
    expect(thrown(() => parseInputFlags(tokens)).code).toBe("USAGE");
  });

  it("refuses invalid --input-json naming the key but not the value", () => {
    const error = thrown(() => parseInputFlags(["--input-json", "cfg={secret-ish"]));
    expect(error.code).toBe("INPUT_INVALID");
    expect(error.details.path).toBe("inputs.cfg");
    expect(JSON.stringify(error.toJSON())).not.toContain("secret-ish");
  });

  it.each([
    ["--runner"],
    ["--run-id"],
    ["--answers"],
    ["--receipt"],
    ["--receiptDir"],
    ["--runner=x"],
  ])("refuses the retired flag %s with guidance", (flag) => {
    const error = thrown(() => parseInputFlags([flag, "value"]));
    expect(error.code).toBe("USAGE");
    expect(error.details.flag).toBe(flag.split("=")[0]);
  });

  it("refuses empty keys, dangling -i and unknown short flags", () => {
    expect(thrown(() => parseInputFlags(["-i", "=v"])).code).toBe("INPUT_INVALID");
    expect(thrown(() => parseInputFlags(["-i"])).code).toBe("USAGE");
    expect(thrown(() => parseInputFlags(["-i", "k"])).code).toBe("USAGE");
    expect(thrown(() => parseInputFlags(["-x"])).code).toBe("USAGE");
  });
});

describe("resolveInputs", () => {
  const declarations = {
    message: decl("message", { required: true, description: "What to say." }),
    count: decl("count", { type: "integer", default: 3 }),
    ratio: decl("ratio", { type: "number" }),
    flag: decl("flag", { type: "boolean" }),
    tags: decl("tags", { type: "array" }),
    meta: decl("meta", { type: "object" }),
    any: decl("any", { type: "json" }),
  };

  it("applies defaults and accepts values of the declared types", () => {
    const { inputs } = parseInputFlags([
      "--message",
      "hi",
      "--ratio",
      "0.5",
      "--flag",
      "--tags",
      "[1]",
      "--meta",
      '{"a":1}',
      "--any",
      "null",
    ]);
    expect(resolveInputs(declarations, inputs)).toEqual({
      values: {
        message: "hi",
        count: 3,
        ratio: 0.5,
        flag: true,
        tags: [1],
        meta: { a: 1 },
        any: null,
      },
      missing: [],
    });
  });

  it("gives a declared string its original CLI text back", () => {
    const { inputs } = parseInputFlags(["--message", "5", "-i", "other=007"]);
    const values = resolveInputs({ message: decl("message"), other: decl("other") }, inputs).values;
    expect(values).toEqual({ message: "5", other: "007" });
  });

  it("asks for required inputs that are missing", () => {
    expect(resolveInputs(declarations, {}).missing).toEqual([
      {
        id: "message",
        prompt: "What to say.",
        required: true,
        type: "string",
        description: "What to say.",
      },
    ]);
  });

  it.each([
    ["count", "2.5", "integer"],
    ["ratio", "fast", "number"],
    ["flag", "maybe", "boolean"],
    ["tags", '{"no":1}', "array"],
    ["meta", "[1]", "object"],
  ])(
    "refuses %s=%s naming inputs.<name> and the type but never the value",
    (name, raw, expected) => {
      const { inputs } = parseInputFlags([`--${name}`, raw, "--message", "x"]);
      const error = thrown(() => resolveInputs(declarations, inputs));
      expect(error.code).toBe("INPUT_INVALID");
      expect(error.details).toMatchObject({ path: `inputs.${name}`, expected });
      expect(JSON.stringify(error.toJSON())).not.toContain(raw);
    },
  );

  it("refuses a document value that is not a string for a string input (no CLI text to recover)", () => {
    expect(
      thrown(() => resolveInputs(declarations, suppliedFromDocument({ message: 5 }))).code,
    ).toBe("INPUT_INVALID");
  });

  it("refuses undeclared inputs when the runner declares inputs, and passes them through otherwise", () => {
    const supplied = suppliedFromDocument({ message: "x", extra: 1 });
    expect(thrown(() => resolveInputs(declarations, supplied)).details.path).toBe("inputs.extra");
    expect(resolveInputs({}, supplied).values).toEqual({ message: "x", extra: 1 });
  });
});

describe("inputsJsonSchema", () => {
  it("projects declarations to a closed JSON Schema", () => {
    const schema = inputsJsonSchema({
      message: decl("message", { required: true, description: "Say", schema: { minLength: 1 } }),
      any: decl("any", { type: "json" }),
      n: decl("n", { type: "integer", default: 2 }),
    });
    expect(schema).toEqual({
      type: "object",
      properties: {
        message: { type: "string", minLength: 1, description: "Say" },
        any: {},
        n: { type: "integer", default: 2 },
      },
      required: ["message"],
      additionalProperties: false,
    });
  });
});
