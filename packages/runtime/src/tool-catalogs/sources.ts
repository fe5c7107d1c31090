/**
 * Tool catalog sources `runx tool search` and `runx tool inspect --source` read: the native
 * catalog (always) and imported catalogs such as the fixture MCP catalog (when enabled). An
 * entry describes a tool (name, summary, scopes, inputs); it is not a way to run it.
 */
import type { ToolCatalog } from "../tools/catalog.js";
import type { ToolInputDefinition } from "./manifest.js";

/** One tool as a catalog lists it. */
export interface CatalogTool {
  name: string;
  summary?: string;
  namespace: string;
  external_name: string;
  required_scopes: string[];
  tags: string[];
  inputs: Record<string, ToolInputDefinition>;
}

/** A named catalog of tools. */
export interface CatalogSource {
  /** The `--source` value, e.g. `native`, `fixture-mcp`. */
  id: string;
  label: string;
  /** Kind of catalog: `native`, `mcp`, … */
  type: string;
  tools(): CatalogTool[];
}

/** The source id of the native tool catalog. */
export const NATIVE_SOURCE = "native";

/** The native tool catalog as a catalog source (`native/<name>`, tags native + runx). */
export function nativeCatalogSource(catalog: ToolCatalog): CatalogSource {
  return {
    id: NATIVE_SOURCE,
    label: "runx native tools",
    type: "native",
    tools: () =>
      catalog.list().map((tool) => {
        const dot = tool.name.indexOf(".");
        return {
          name: tool.name,
          summary: tool.description,
          namespace: dot < 0 ? tool.name : tool.name.slice(0, dot),
          external_name: dot < 0 ? tool.name : tool.name.slice(dot + 1),
          required_scopes: [...tool.scopes],
          tags: ["native", "runx"],
          inputs: {},
        };
      }),
  };
}

/** The provenance block of a catalog entry (search results and inspect share it). */
export function catalogProvenance(source: CatalogSource, tool: CatalogTool) {
  return {
    source: source.id,
    source_label: source.label,
    source_type: source.type,
    namespace: tool.namespace,
    external_name: tool.external_name,
    catalog_ref: `${source.id}:${tool.name}`,
    tool_id: `${source.id}/${tool.name}`,
    tags: [...tool.tags],
  };
}
