/**
 * Upstream's artifact contract (`SkillArtifactContract`): `emits` (a string or a list),
 * `named_emits`, `packets` bound to named outputs, `wrap_as` and `packet`, answered with those
 * snake_case keys (the contract type keeps them) and checked with upstream's sentences under the caller's field name. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import { invalid, optionalNonEmptyString, optionalObject, optionalStringArray } from "./fields.js";

/** Named outputs: every value a non-empty string. */
function namedOutputs(value: JsonValue | undefined, field: string): JsonObject | undefined {
  const record = optionalObject(value, field);
  if (record === undefined) return undefined;
  const out: JsonObject = {};
  for (const key of Object.keys(record).sort()) {
    const output = record[key];
    if (typeof output !== "string" || output.trim() === "")
      invalid(`${field}.${key} must be a non-empty string.`);
    out[key] = output;
  }
  return out;
}

/** The artifact contract under `field` (upstream's `SkillArtifactContract`). */
export function artifactContract(
  value: JsonValue | undefined,
  field: string,
): JsonObject | undefined {
  const record = optionalObject(value, field);
  if (record === undefined) return undefined;
  const emits =
    typeof record.emits === "string"
      ? [record.emits]
      : optionalStringArray(record.emits, `${field}.emits`);
  const named = namedOutputs(record.named_emits ?? record.namedEmits, `${field}.named_emits`);
  const packets = namedOutputs(record.packets, `${field}.packets`);
  if (packets !== undefined) {
    if (named === undefined) invalid(`${field}.packets requires ${field}.named_emits`);
    const stray = Object.keys(packets).find((output) => !(output in named));
    if (stray !== undefined)
      invalid(`${field}.packets.${stray} must name an output declared by ${field}.named_emits`);
  }
  const wrapAs = optionalNonEmptyString(record.wrap_as ?? record.wrapAs, `${field}.wrap_as`);
  const packet = optionalNonEmptyString(record.packet, `${field}.packet`);
  if (packet !== undefined && wrapAs === undefined)
    invalid(`${field}.packet requires ${field}.wrap_as. Use named_emits for named packet outputs.`);
  if (emits === undefined && named === undefined && packets === undefined && wrapAs === undefined)
    return undefined;
  const out: JsonObject = {};
  if (emits !== undefined) out.emits = emits;
  if (named !== undefined) out.named_emits = named;
  if (packets !== undefined) out.packets = packets;
  if (wrapAs !== undefined) out.wrap_as = wrapAs;
  if (packet !== undefined) out.packet = packet;
  return out;
}
