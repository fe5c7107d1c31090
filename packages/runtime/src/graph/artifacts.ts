/**
 * Artifact envelopes of step outputs (spec §2.1 "Artifact contract"): a runner whose contract
 * says `artifacts.wrap_as: <name>` emits its whole output as one artifact, so later steps read
 * it as `<step>.<name>.data.<field>` (the older graph dialect's `first.result.data.message`).
 * The envelope carries `type` (the declared `packet`, else the artifact name), `version: "1"`
 * and `data`. Run-specific envelope metadata (ids, timestamps) is left out so step outputs and
 * the receipts that claim them stay deterministic. Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";

/** The envelope version every artifact carries. */
export const ARTIFACT_VERSION = "1";

/** True for a value already in envelope form (`{type?, version?, data}`). */
function isEnvelope(value: unknown): boolean {
  return isJsonObject(value) && Object.hasOwn(value, "data");
}

/**
 * Applies a runner's `artifacts.wrap_as` to its output. Without `wrap_as`, or when the output
 * already holds exactly that artifact as an envelope (an answer written in the wrapped shape),
 * the output is returned unchanged.
 */
export function wrapDeclaredOutput(
  output: JsonObject,
  artifacts: JsonObject | undefined,
): JsonObject {
  const name = artifacts?.wrap_as;
  if (typeof name !== "string" || name === "") return output;
  const keys = Object.keys(output);
  if (keys.length === 1 && keys[0] === name && isEnvelope(output[name])) return output;
  const packet = artifacts?.packet;
  return {
    [name]: {
      type: typeof packet === "string" && packet !== "" ? packet : name,
      version: ARTIFACT_VERSION,
      data: output,
    },
  };
}
