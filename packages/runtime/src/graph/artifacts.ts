/**
 * Artifact envelopes of graph step outputs (spec §2.1 "Artifact contract"): a step whose
 * artifact contract says `wrap_as` or `named_emits` exposes those outputs as envelopes
 * `{type, version: "1", data}`, so later steps read `<step>.<artifact>.data.<field>`.
 * - `wrap_as: W` (optional `packet: P`): the whole output becomes `{W: {type: P, data: output}}`.
 * - `named_emits: {name: source_field}` (optional `packets: {name: P}`): each `name` becomes an
 *   envelope of `output[source_field]`; other output fields stay as they are.
 * Without a packet id the artifact's own name is its type. Run-specific envelope metadata (ids,
 * timestamps) is left out so step outputs and the receipts that claim them stay deterministic.
 * Pure.
 */
import { isJsonObject } from "../parser/json.js";
import type { JsonObject, JsonValue } from "../parser/json.js";

/** One artifact envelope. */
export interface ArtifactEnvelope {
  type: string;
  version: "1";
  data: JsonValue;
}

/** True for a value already in envelope form (`{type?, version?, data}`). */
function isEnvelope(value: unknown): boolean {
  return isJsonObject(value) && Object.hasOwn(value, "data");
}

function envelope(type: string, data: JsonValue): JsonObject {
  const out: ArtifactEnvelope = { type, version: "1", data };
  return { ...out };
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
    const packet = typeof artifacts.packet === "string" ? artifacts.packet : wrapAs;
    return { [wrapAs]: envelope(packet, output) };
  }
  if (!isJsonObject(artifacts.named_emits)) return output;
  const packets = isJsonObject(artifacts.packets) ? artifacts.packets : {};
  const out: JsonObject = { ...output };
  for (const [name, source] of Object.entries(artifacts.named_emits)) {
    if (typeof source !== "string" || !Object.hasOwn(output, source)) continue;
    const packet = packets[name];
    out[name] = envelope(typeof packet === "string" ? packet : name, output[source] as JsonValue);
  }
  return out;
}
