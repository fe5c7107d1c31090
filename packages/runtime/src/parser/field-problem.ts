/**
 * One ajv error in plain words for the person who sent the value: the field named once, the
 * rule it breaks as a sentence ("password must be at least 12 characters", "role must be one
 * of viewer, approver, admin"), never the schema's own wording and never a regular expression.
 * The dotted `path` stays beside the sentence for machines. Values are never repeated (a
 * rejected secret must not come back in the answer); only key names, limits and allowed
 * values from the schema are.
 */
import type { ErrorObject } from "ajv";

/** A JSON Schema node, as far as the words need it. */
export interface SchemaNode {
  description?: unknown;
  properties?: unknown;
  [key: string]: unknown;
}

/** What is wrong with one field. */
export interface FieldProblem {
  /** Dotted path of the field (`inputs.message`), "" for the value as a whole. */
  path: string;
  /** The field in words: `receipt id`, `inputs.message`, `the input`. */
  field: string;
  /** The rule it breaks, without the field: `must be at least 12 characters`. */
  problem: string;
  /** `field` and `problem` as one sentence. */
  message: string;
  /** The schema keyword that failed (`minLength`, `enum`, ...). */
  keyword: string;
}

/**
 * The expected form of each pattern the contracts use, as the rule a person reads. A pattern
 * not listed here falls back to its field's `description`, then to "is not in the expected
 * form": the expression itself is never shown.
 */
export const PATTERN_FORMS: Readonly<Record<string, string>> = {
  "^sha256:[0-9a-f]{64}$": "must look like sha256:<64 lowercase hex digits>",
  "^refund:[0-9a-f]{64}$": "must look like refund:<64 lowercase hex digits>",
  "^runx:local-artifact:sha256:[0-9a-f]{64}$":
    "must look like runx:local-artifact:sha256:<64 lowercase hex digits>",
  "^run_[A-Za-z0-9_-]+$": "must look like run_<letters, digits, _ or ->",
  "^tok_[A-Za-z0-9]+$": "must look like tok_<letters and digits>",
  "^[A-Za-z0-9][A-Za-z0-9._-]*$":
    "may use only letters, digits, '.', '_' and '-', and must start with a letter or digit",
  "\\S": "must not be blank",
  "^\\S+$": "must not be empty or contain spaces",
  "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$":
    "must be a date and time such as 2026-01-31T09:30:00Z",
  "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$":
    "must be a UTC time with milliseconds, such as 2026-01-31T09:30:00.000Z",
  "^[A-Z]{3}$": "must be a three-letter currency code in capitals, such as EUR",
  "^[A-Z_][A-Z0-9_]{0,127}$":
    "must be an environment variable name: capitals, digits and '_', not starting with a digit",
  "^[A-Za-z0-9._-]{1,128}$": "must be 1 to 128 letters, digits, '.', '_' or '-'",
  "^[A-Za-z0-9._:-]{1,256}$": "must be 1 to 256 letters, digits, '.', '_', ':' or '-'",
  "^[A-Za-z0-9._:-]{3,200}$": "must be 3 to 200 letters, digits, '.', '_', ':' or '-'",
  "^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$":
    "must be names of letters, digits, '_' or '-' separated by single dots",
  "^[A-Za-z0-9_-]{1,64}$": "must be 1 to 64 letters, digits, '_' or '-'",
  "^[A-Za-z0-9_.-]+$": "may use only letters, digits, '.', '_' and '-'",
  "^[0-9]{1,9}$": "must be a whole number of 1 to 9 digits",
  "^[Hh][Tt][Tt][Pp][Ss]?://": "must be an http:// or https:// address",
  "^[^\\u0000]*$": "must not contain NUL characters",
};

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "text",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
};

const FORMAT_WORDS: Readonly<Record<string, string>> = {
  "date-time": "a date and time such as 2026-01-31T09:30:00Z",
  date: "a date such as 2026-01-31",
  time: "a time such as 09:30:00Z",
  uri: "an address (URI)",
  url: "an address (URL)",
  email: "an email address",
  uuid: "a UUID",
  ipv4: "an IPv4 address",
  ipv6: "an IPv6 address",
  hostname: "a host name",
};

/** A JSON pointer (`/a/0/b`) as a dotted path (`a.0.b`). */
export function pointerPath(pointer: string): string {
  if (pointer === "") return "";
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .join(".");
}

/**
 * A field path in words: a top-level key split at its capitals and underscores
 * (`receiptId` → `receipt id`), a nested one as its dotted path (`inputs.message`, so the
 * field can be found), the whole value as `the input`.
 */
export function fieldWords(path: string): string {
  if (path === "" || path === "$") return "the input";
  if (path.includes(".")) return path;
  return path
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_]+/g, " ")
    .toLowerCase();
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

const listWords = (values: readonly unknown[]): string =>
  values.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ");

/** The schema node a schema path points at (`#/properties/role/enum` → the `role` node). */
function schemaAt(root: SchemaNode | undefined, schemaPath: string): SchemaNode | undefined {
  if (root === undefined || !schemaPath.startsWith("#")) return undefined;
  let node: unknown = root;
  const parts = schemaPath.slice(1).split("/").filter(Boolean);
  // The last part is the keyword itself; its parent is the field's node.
  for (const raw of parts.slice(0, -1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node !== null && typeof node === "object" ? (node as SchemaNode) : undefined;
}

function limitOf(params: Record<string, unknown>): number {
  return typeof params.limit === "number" ? params.limit : Number(params.limit);
}

/** The rule an error names, without the field. */
function problemOf(error: ErrorObject, node: SchemaNode | undefined): string {
  const params = error.params as Record<string, unknown>;
  const limit = limitOf(params);
  switch (error.keyword) {
    case "required":
      return "is required";
    case "additionalProperties": {
      const known =
        node !== undefined && node.properties !== null && typeof node.properties === "object"
          ? Object.keys(node.properties)
          : [];
      return known.length > 0
        ? `is not a field this accepts (it accepts ${known.join(", ")})`
        : "is not a field this accepts";
    }
    case "minLength":
      return limit === 1 ? "must not be empty" : `must be at least ${limit} characters`;
    case "maxLength":
      return `must be at most ${plural(limit, "character", "characters")}`;
    case "minimum":
      return `must be at least ${limit}`;
    case "maximum":
      return `must be at most ${limit}`;
    case "exclusiveMinimum":
      return `must be more than ${limit}`;
    case "exclusiveMaximum":
      return `must be less than ${limit}`;
    case "multipleOf":
      return `must be a multiple of ${String(params.multipleOf)}`;
    case "minItems":
      return limit === 1 ? "must not be empty" : `must have at least ${limit} items`;
    case "maxItems":
      return `must have at most ${plural(limit, "item", "items")}`;
    case "minProperties":
      return limit === 1 ? "must not be empty" : `must have at least ${limit} entries`;
    case "maxProperties":
      return `must have at most ${plural(limit, "entry", "entries")}`;
    case "uniqueItems":
      return "must not list the same item twice";
    case "enum": {
      const allowed = Array.isArray(params.allowedValues) ? params.allowedValues : [];
      return allowed.length === 1
        ? `must be ${listWords(allowed)}`
        : `must be one of ${listWords(allowed)}`;
    }
    case "const":
      return `must be ${listWords([params.allowedValue])}`;
    case "type": {
      const types = Array.isArray(params.type)
        ? (params.type as unknown[]).map(String)
        : String(params.type).split(",");
      return `must be ${types.map((t) => TYPE_WORDS[t] ?? t).join(" or ")}`;
    }
    case "pattern": {
      const form = PATTERN_FORMS[String(params.pattern)];
      if (form !== undefined) return form;
      const description = node?.description;
      return typeof description === "string" && description.trim() !== ""
        ? `is not in the expected form (${description.trim()})`
        : "is not in the expected form";
    }
    case "format": {
      const format = String(params.format);
      return `must be ${FORMAT_WORDS[format] ?? `a valid ${format}`}`;
    }
    case "anyOf":
    case "oneOf":
      return "does not match any of the accepted forms";
    case "not":
    case "false schema":
      return "is not allowed here";
    case "dependencies":
    case "dependentRequired":
      return `needs ${String(params.deps)} as well`;
    default:
      return "is not valid";
  }
}

/**
 * One ajv error in plain words. `schema` is the validated root schema, when the validator
 * carries it: it lets an unknown field be answered with the accepted ones, and a pattern
 * without a known form be described by its field's `description`.
 */
export function fieldProblem(error: ErrorObject, schema?: SchemaNode): FieldProblem {
  const params = error.params as Record<string, unknown>;
  const base = pointerPath(error.instancePath);
  const child =
    error.keyword === "required"
      ? params.missingProperty
      : error.keyword === "additionalProperties"
        ? params.additionalProperty
        : undefined;
  const path = [base, typeof child === "string" ? child : ""].filter((p) => p !== "").join(".");
  const field = fieldWords(path);
  const problem = problemOf(error, schemaAt(schema, error.schemaPath));
  return { path, field, problem, message: `${field} ${problem}`, keyword: error.keyword };
}

/**
 * The first of a validator's errors in plain words (undefined when there is none). The errors
 * of the branches of a failed anyOf/oneOf are passed over for the combinator's own: a branch
 * saying "must be text" is wrong when a number was also accepted.
 */
export function firstProblem(
  errors: readonly ErrorObject[] | null | undefined,
  schema?: SchemaNode,
): FieldProblem | undefined {
  const all = errors ?? [];
  const combinators = all.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  const first = all.find(
    (e) =>
      !combinators.some(
        (c) =>
          c !== e &&
          e.schemaPath.startsWith(`${c.schemaPath}/`) &&
          e.instancePath.startsWith(c.instancePath),
      ),
  );
  return first === undefined ? undefined : fieldProblem(first, schema);
}
