/**
 * Packet helpers shared by the native planning tools: named tool outputs returned in the
 * artifact envelope `{data}` (`<step>.<name>.data.<field>` in graph context), and small
 * readers over schema-validated JSON.
 */
import { artifactEnvelope } from "../graph/artifacts.js";
import type { Json, JsonRecord, NativeTool } from "./types.js";

/** True for a plain JSON object. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Calls `visit` on every string (object keys included) in a JSON value, with its path. */
export function eachString(
  value: Json,
  path: string,
  visit: (text: string, at: string) => void,
): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value))
    value.forEach((item, i) => eachString(item, `${path}[${i}]`, visit));
  else if (isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      const at = path === "" ? key : `${path}.${key}`;
      visit(key, at);
      eachString(item, at, visit);
    }
  }
}

/** A tool's named output: the output name graphs read and the packet id it carries. */
export interface NamedOutput {
  /** Output name (`<step>.<name>.data.<field>` in graph context), e.g. `provider_operation`. */
  name: string;
  /** Packet id, e.g. `runx.provider.operation.v1`. */
  packet: string;
}

/**
 * The contract of a named output: an envelope `{data}` under `name`, `data` being the packet
 * (the envelope's description names the packet id).
 */
export function namedOutputSchema(named: NamedOutput, dataSchema: JsonRecord): JsonRecord {
  const { $schema, $id, title, ...data } = dataSchema;
  const out: JsonRecord = {
    type: "object",
    additionalProperties: false,
    required: [named.name],
    properties: {
      [named.name]: {
        type: "object",
        description: `${named.packet} packet`,
        additionalProperties: false,
        required: ["data"],
        properties: { data },
      },
    },
  };
  if ($schema !== undefined) out.$schema = $schema;
  if ($id !== undefined) out.$id = $id;
  if (title !== undefined) out.title = title;
  return out;
}

/**
 * A tool whose successful output is returned as its named output packet (the
 * catalog's `named{output,packet}` / `wrapped{output,packet}` artifacts), so a graph reads
 * `<step>.<name>.data.<field>` as it does for every other native tool. The body keeps
 * producing the packet data (and effect ledgers keep recording it); failures, declines and
 * approval requests pass through unchanged.
 */
export function withNamedOutput(tool: NativeTool, named: NamedOutput): NativeTool {
  return {
    ...tool,
    outputSchema: namedOutputSchema(named, tool.outputSchema),
    async execute(input, ctx) {
      const result = await tool.execute(input, ctx);
      if (result.status !== "success") return result;
      return { ...result, output: { [named.name]: artifactEnvelope(result.output) } };
    },
  };
}
