/**
 * Artifact envelopes of graph step outputs: a step whose
 * artifact contract says `wrap_as` or `named_emits` exposes those outputs as envelopes
 * `{data}`, so later steps read `<step>.<artifact>.data.<field>`.
 * - `wrap_as: W`: the whole output becomes `{W: {data: output}}`.
 * - `named_emits: {name: source_field}`: each `name` becomes an envelope of
 *   `output[source_field]`; other output fields stay as they are.
 * The envelope is exactly `{data}`, as upstream runx builds it: the packet id (`packet`,
 * `packets`) names the contract of `data` and is not repeated in the envelope, and
 * run-specific metadata (ids, timestamps) stays out, so step outputs and the receipts that
 * claim them are deterministic. Upstream's pinned graph-step receipt ids commit this shape
 * (conformance fixtures/harness/sequential-graph.yaml). Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";

/** True for a value already in envelope form (`{data}`). */
function isEnvelope(value: unknown): boolean {
  return isJsonObject(value) && Object.hasOwn(value, "data");
}

/** The envelope `{data}` of one artifact value. */
export function artifactEnvelope(data: JsonValue): JsonObject {
  return { data };
}

/** The step output with its declared artifacts wrapped; unchanged without such a contract. */
export function packageArtifacts(
  output: JsonObject,
  artifacts: JsonObject | undefined,
): JsonObject {
  if (artifacts === undefined) return output;
  const wrapAs = artifacts.wrap_as;
  if (typeof wrapAs === "string" && wrapAs !== "") {
    // An answer already written in the wrapped shape stays as it is.
    const keys = Object.keys(output);
    if (keys.length === 1 && keys[0] === wrapAs && isEnvelope(output[wrapAs])) return output;
    return { [wrapAs]: artifactEnvelope(output) };
  }
  if (!isJsonObject(artifacts.named_emits)) return output;
  const out: JsonObject = { ...output };
  for (const [name, source] of Object.entries(artifacts.named_emits)) {
    if (typeof source !== "string" || !Object.hasOwn(output, source)) continue;
    out[name] = artifactEnvelope(output[source] as JsonValue);
  }
  return out;
}
