/**
 * Upstream's output declaration (`source.outputs`): a map of field name to a bare type name or
 * a field spec (`type`, `description`, `required`, `wrap_as`, `enum`, `schema`). A value that is
 * neither is refused the way upstream's deserializer words it. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { invalid } from "./fields.js";

const OUTPUT_TYPES = new Set(["string", "number", "integer", "boolean", "array", "object", "null"]);
const SPEC_FIELDS = new Set(["type", "description", "required", "wrap_as", "enum", "schema"]);

const absent = (value: JsonValue | undefined): boolean => value === undefined || value === null;

function isSpec(value: JsonObject): boolean {
  for (const key of Object.keys(value)) if (!SPEC_FIELDS.has(key)) return false;
  const { type, description, required, wrap_as: wrapAs, enum: values, schema } = value;
  if (!absent(type) && !(typeof type === "string" && OUTPUT_TYPES.has(type))) return false;
  if (!absent(description) && typeof description !== "string") return false;
  if (!absent(required) && typeof required !== "boolean") return false;
  if (!absent(wrapAs) && !(typeof wrapAs === "string" && wrapAs.trim() !== "")) return false;
  if (!absent(values) && !(Array.isArray(values) && values.every((v) => typeof v === "string")))
    return false;
  if (!absent(schema) && !isJsonObject(schema)) return false;
  return true;
}

/** Checks an output declaration; `prefix` is prepended to the failure sentence. */
export function outputContract(outputs: JsonObject, prefix: string): void {
  for (const name of Object.keys(outputs).sort()) {
    const field = outputs[name];
    const ok =
      (typeof field === "string" && OUTPUT_TYPES.has(field)) ||
      (isJsonObject(field) && isSpec(field));
    if (!ok)
      invalid(
        `${prefix}output declaration is invalid: data did not match any variant of untagged enum OutputField`,
      );
  }
}
