import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import type { ErrorObject } from "ajv";
import { describe, expect, it } from "vitest";
import { consoleInput } from "../console/validate.js";
import { isRuntimeError } from "../errors.js";
import { PATTERN_FORMS, fieldProblem, fieldWords, firstProblem } from "./field-problem.js";
import type { SchemaNode } from "./field-problem.js";

const ajv = new Ajv({ strict: false, allErrors: false });

/** The plain-words problem of `value` against `schema` (it must fail). */
function words(schema: SchemaNode, value: unknown): string {
  const validate = ajv.compile(schema);
  expect(validate(value)).toBe(false);
  return firstProblem(validate.errors, schema)!.message;
}

const one = (property: SchemaNode): SchemaNode => ({
  type: "object",
  properties: { value: property },
});

describe("fieldProblem", () => {
  it.each([
    [
      "minLength",
      one({ type: "string", minLength: 12 }),
      "short",
      "must be at least 12 characters",
    ],
    ["minLength 1", one({ type: "string", minLength: 1 }), "", "must not be empty"],
    ["maxLength", one({ type: "string", maxLength: 3 }), "long", "must be at most 3 characters"],
    ["maxLength 1", one({ type: "string", maxLength: 1 }), "ab", "must be at most 1 character"],
    ["minimum", one({ type: "integer", minimum: 1 }), 0, "must be at least 1"],
    ["maximum", one({ type: "integer", maximum: 500 }), 501, "must be at most 500"],
    ["exclusiveMinimum", one({ type: "number", exclusiveMinimum: 0 }), 0, "must be more than 0"],
    ["exclusiveMaximum", one({ type: "number", exclusiveMaximum: 9 }), 9, "must be less than 9"],
    ["multipleOf", one({ type: "number", multipleOf: 5 }), 7, "must be a multiple of 5"],
    ["minItems", one({ type: "array", minItems: 2 }), [1], "must have at least 2 items"],
    ["minItems 1", one({ type: "array", minItems: 1 }), [], "must not be empty"],
    ["maxItems", one({ type: "array", maxItems: 1 }), [1, 2], "must have at most 1 item"],
    ["minProperties", one({ type: "object", minProperties: 1 }), {}, "must not be empty"],
    [
      "minProperties 2",
      one({ type: "object", minProperties: 2 }),
      { a: 1 },
      "must have at least 2 entries",
    ],
    [
      "maxProperties",
      one({ type: "object", maxProperties: 1 }),
      { a: 1, b: 2 },
      "must have at most 1 entry",
    ],
    [
      "uniqueItems",
      one({ type: "array", uniqueItems: true }),
      [1, 1],
      "must not list the same item twice",
    ],
    [
      "enum",
      one({ enum: ["viewer", "approver", "admin"] }),
      "root",
      "must be one of viewer, approver, admin",
    ],
    ["enum of one", one({ enum: ["approve"] }), "x", "must be approve"],
    ["const", one({ const: "deny" }), "x", "must be deny"],
    ["type string", one({ type: "string" }), 1, "must be text"],
    ["type integer", one({ type: "integer" }), 1.5, "must be a whole number"],
    ["type boolean", one({ type: "boolean" }), "yes", "must be true or false"],
    ["type union", one({ type: ["string", "null"] }), 1, "must be text or null"],
    ["type array", one({ type: "array" }), {}, "must be a list"],
    [
      "pattern with a known form",
      one({ type: "string", pattern: "^sha256:[0-9a-f]{64}$" }),
      "nope",
      "must look like sha256:<64 lowercase hex digits>",
    ],
    [
      "pattern described by its field",
      one({ type: "string", pattern: "^x+$", description: "one or more x" }),
      "y",
      "is not in the expected form (one or more x)",
    ],
    [
      "pattern with nothing to say",
      one({ type: "string", pattern: "^x+$" }),
      "y",
      "is not in the expected form",
    ],
    ["anyOf", one({ anyOf: [{ type: "string" }, { type: "integer" }] }), true, "does not match"],
    ["oneOf", one({ oneOf: [{ type: "string" }, { type: "integer" }] }), true, "does not match"],
    ["not", one({ not: { type: "string" } }), "s", "is not allowed here"],
    ["false schema", { type: "object", properties: { value: false } }, "s", "is not allowed here"],
  ])("words %s", (_keyword, schema, value, expected) => {
    const message = words(schema, { value });
    expect(message).toContain(`value ${expected}`);
    // The field once, never the expression or ajv's own wording.
    expect(message.split("value").length - 1).toBe(1);
    expect(message).not.toMatch(/\^|\$|\\|must NOT|must match pattern|equal to one of/);
  });

  it("names a missing field, and an unknown one with the fields that exist", () => {
    const schema: SchemaNode = {
      type: "object",
      additionalProperties: false,
      required: ["username"],
      properties: { username: { type: "string" }, role: { type: "string" } },
    };
    expect(words(schema, {})).toBe("username is required");
    expect(words(schema, { username: "a", bogus: 1 })).toBe(
      "bogus is not a field this accepts (it accepts username, role)",
    );
    expect(words({ type: "object", additionalProperties: false }, { bogus: 1 })).toBe(
      "bogus is not a field this accepts",
    );
  });

  it("names a field of a dependency", () => {
    const schema: SchemaNode = { type: "object", dependencies: { to: ["from"] } };
    expect(words(schema, { to: 1 })).toBe("the input needs from as well");
  });

  it("words formats, and keywords it has no words for, without ajv's text", () => {
    const error = (keyword: string, params: Record<string, unknown>): ErrorObject => ({
      keyword,
      instancePath: "/from",
      schemaPath: `#/properties/from/${keyword}`,
      params,
      message: "ajv says something technical",
    });
    expect(fieldProblem(error("format", { format: "date-time" })).message).toBe(
      "from must be a date and time such as 2026-01-31T09:30:00Z",
    );
    expect(fieldProblem(error("format", { format: "semver" })).message).toBe(
      "from must be a valid semver",
    );
    expect(fieldProblem(error("someNewKeyword", {})).message).toBe("from is not valid");
  });

  it("puts fields in words: split at capitals, nested paths kept findable", () => {
    expect(fieldWords("receiptId")).toBe("receipt id");
    expect(fieldWords("requiredApprovals")).toBe("required approvals");
    expect(fieldWords("max_bytes")).toBe("max bytes");
    expect(fieldWords("inputs.message")).toBe("inputs.message");
    expect(fieldWords("")).toBe("the input");
  });

  it("keeps the machine path beside the words", () => {
    const schema: SchemaNode = one({ type: "object", required: ["decision"] });
    const validate = ajv.compile(schema);
    validate({ value: {} });
    expect(firstProblem(validate.errors, schema)).toMatchObject({
      path: "value.decision",
      field: "value.decision",
      problem: "is required",
      keyword: "required",
    });
  });
});

/** Every console contract's fields that take a pattern. */
function consolePatterns(): Array<{ contract: string; field: string; node: SchemaNode }> {
  const dir = join(import.meta.dirname, "..", "..", "schemas", "console");
  const out: Array<{ contract: string; field: string; node: SchemaNode }> = [];
  const walk = (contract: string, path: string, node: unknown): void => {
    if (node === null || typeof node !== "object") return;
    const n = node as SchemaNode;
    if (typeof n.pattern === "string") out.push({ contract, field: path, node: n });
    for (const [key, child] of Object.entries(n)) walk(contract, `${path}/${key}`, child);
  };
  for (const file of readdirSync(dir)) {
    walk(file, "#", JSON.parse(readFileSync(join(dir, file), "utf8")) as unknown);
  }
  return out;
}

describe("console contracts in plain words", () => {
  it("describes the form of every pattern a console contract uses", () => {
    const patterns = consolePatterns();
    expect(patterns.length).toBeGreaterThan(0);
    for (const { contract, field, node } of patterns) {
      const described = PATTERN_FORMS[node.pattern as string] !== undefined;
      expect(
        described,
        `${contract} ${field}: add the expected form of this pattern to PATTERN_FORMS`,
      ).toBe(true);
    }
  });

  function refusal(name: Parameters<typeof consoleInput>[0], value: unknown) {
    try {
      consoleInput(name, value);
    } catch (error) {
      if (!isRuntimeError(error)) throw error;
      return error;
    }
    throw new Error(`expected ${name} to refuse`);
  }

  it.each([
    [
      "operator-add",
      { username: "bob", role: "viewer", password: "short" },
      "password",
      "password must be at least 12 characters",
    ],
    [
      "operator-add",
      { username: "bob", role: "root", password: "correct horse battery" },
      "role",
      "role must be one of viewer, approver, admin",
    ],
    [
      "operator-set-role",
      { username: "bob", role: "owner" },
      "role",
      "role must be one of viewer, approver, admin",
    ],
    [
      "receipt-ref",
      { receiptId: "nope" },
      "receiptId",
      "receipt id must look like sha256:<64 lowercase hex digits>",
    ],
    [
      "run-ref",
      { runId: "../etc" },
      "runId",
      "run id must look like run_<letters, digits, _ or ->",
    ],
    ["auth-login", { username: "ada" }, "password", "password is required"],
    [
      "operator-add",
      { username: " bob", role: "viewer", password: "correct horse battery" },
      "username",
      "username may use only letters, digits, '.', '_' and '-', and must start with a letter or digit",
    ],
    [
      "runs-list",
      { bogus: 1 },
      "bogus",
      "bogus is not a field this accepts (it accepts limit, cursor, status, outcome, skill, skillSearch, from, to, waitingForApproval, waitingForMe)",
    ],
  ] as const)("%s: %j → %s", (name, value, path, message) => {
    const error = refusal(name, value);
    expect(error.code).toBe("INPUT_INVALID");
    expect(error.message).toBe(message);
    // What the API and the CLI print: the field once.
    expect(error.located).toBe(message);
    expect(error.details.path).toBe(path);
  });

  it("never repeats the rejected value (a password stays out of the answer)", () => {
    const error = refusal("operator-add", {
      username: "bob",
      role: "viewer",
      password: "hunter2",
    });
    expect(error.message).toContain("password");
    expect(JSON.stringify({ m: error.message, d: error.details })).not.toContain("hunter2");
  });
});
