/**
 * Turns ajv errors from the precompiled validators into one located RuntimeError: the error
 * that appears earliest in the source wins, and unknown fields are named. Messages never
 * contain document values (only key names and allowed values from the schema).
 */
import type { ErrorObject } from "ajv";
import { RuntimeError } from "../errors.js";
import type { ErrorCode } from "../errors.js";
import type { JsonValue } from "./json.js";
import { formatKeyPath } from "./strict-yaml.js";
import type { PathSegment, StrictYamlDocument } from "./strict-yaml.js";

/** Messages for keys that a schema forbids with a `false` subschema, keyed by key name. */
const FORBIDDEN_KEY_MESSAGES: Readonly<Record<string, string>> = {
  instructions:
    "runner instructions are not allowed; put agent operating instructions in the owning SKILL.md",
};

/** Converts an ajv instance path (JSON pointer) to key path segments, using the data for indexes. */
function pointerToPath(pointer: string, data: JsonValue): PathSegment[] {
  if (pointer === "") return [];
  const out: PathSegment[] = [];
  let node: JsonValue | undefined = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      const index = Number(key);
      out.push(index);
      node = node[index];
    } else {
      out.push(key);
      node = node !== null && typeof node === "object" ? node[key] : undefined;
    }
  }
  return out;
}

interface Described {
  path: PathSegment[];
  message: string;
  field?: string;
}

function describe(error: ErrorObject, data: JsonValue): Described {
  const path = pointerToPath(error.instancePath, data);
  const params = error.params as Record<string, unknown>;
  const last = path[path.length - 1];
  switch (error.keyword) {
    case "additionalProperties": {
      const field = String(params.additionalProperty);
      return { path: [...path, field], message: `unknown field "${field}"`, field };
    }
    case "false schema": {
      const name = typeof last === "string" ? last : "";
      const parent = path[path.length - 2];
      const message =
        FORBIDDEN_KEY_MESSAGES[name] ??
        (parent === "runx"
          ? `runx.${name} is not allowed; declare ${name} on the runner itself`
          : `field "${name}" is not allowed here`);
      return { path, message, field: name };
    }
    case "required":
      return { path, message: `missing required field "${String(params.missingProperty)}"` };
    case "type":
      return { path, message: `must be ${String(params.type).split(",").join(" or ")}` };
    case "enum":
      return {
        path,
        message: `must be one of: ${(params.allowedValues as unknown[]).map(String).join(", ")}`,
      };
    case "anyOf":
    case "oneOf":
      return { path, message: "does not match any allowed form" };
    case "minItems":
    case "minProperties":
    case "minLength":
      return {
        path,
        message: params.limit === 1 ? "must not be empty" : (error.message ?? "is too short"),
      };
    case "dependencies":
      return { path, message: `"${String(params.property)}" requires "${String(params.deps)}"` };
    default:
      return { path, message: error.message ?? "is invalid" };
  }
}

/** Drops errors reported inside an anyOf/oneOf branch when the combinator error itself is present. */
function withoutBranchNoise(errors: readonly ErrorObject[]): ErrorObject[] {
  const combinators = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  return errors.filter(
    (e) =>
      !combinators.some(
        (c) =>
          c !== e &&
          e.schemaPath.startsWith(`${c.schemaPath}/`) &&
          e.instancePath.startsWith(c.instancePath),
      ),
  );
}

/** Options for {@link schemaError}. */
export interface SchemaErrorOptions {
  code: ErrorCode;
  file?: string;
  /** What was validated, e.g. "execution profile"; used when no error can be located. */
  subject: string;
}

/** Builds the RuntimeError for the earliest (in source order) of a validator's errors. */
export function schemaError(
  errors: readonly ErrorObject[],
  data: JsonValue,
  doc: StrictYamlDocument,
  options: SchemaErrorOptions,
): RuntimeError {
  const candidates = withoutBranchNoise(errors).map((error) => {
    const described = describe(error, data);
    return { ...described, position: doc.locate(described.path), keyword: error.keyword };
  });
  candidates.sort(
    (a, b) =>
      a.position.line - b.position.line ||
      a.position.column - b.position.column ||
      b.path.length - a.path.length,
  );
  const best = candidates[0];
  if (best === undefined)
    return new RuntimeError(options.code, `${options.subject} is invalid`, { file: options.file });
  const path = formatKeyPath(best.path);
  return new RuntimeError(options.code, best.message, {
    file: options.file,
    line: best.position.line,
    column: best.position.column,
    path,
    keyword: best.keyword,
    ...(best.field !== undefined ? { field: best.field } : {}),
  });
}
