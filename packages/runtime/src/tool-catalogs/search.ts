/**
 * `runx tool search <query>`: case-insensitive match on name, summary/description and tags
 * across catalog sources (native, local, and imported catalogs when enabled).
 */
import { RuntimeError } from "../errors.js";
import { catalogProvenance, type CatalogSource } from "./sources.js";

/** One search hit. */
export interface ToolSearchResult {
  tool_id: string;
  name: string;
  summary?: string;
  source: string;
  source_label: string;
  source_type: string;
  namespace: string;
  external_name: string;
  required_scopes: string[];
  tags: string[];
  catalog_ref: string;
}

/** The `runx tool search --json` document. */
export interface ToolSearchReport {
  status: "success";
  query: string;
  /** The `--source` asked for, or `all`. */
  source: string;
  results: ToolSearchResult[];
}

/** At most this many results are returned. */
export const SEARCH_LIMIT = 20;

/** Searches `sources` (or the one named `source`); an unknown source is a usage error. */
export function searchTools(
  sources: readonly CatalogSource[],
  query: string,
  source?: string,
): ToolSearchReport {
  if (query.trim() === "") throw new RuntimeError("USAGE", "runx tool search: give a query");
  const selected = source === undefined ? sources : sources.filter((s) => s.id === source);
  if (source !== undefined && selected.length === 0) {
    throw new RuntimeError(
      "USAGE",
      `runx tool search: unknown tool source ${JSON.stringify(source)} (known: ${sources.map((s) => s.id).join(", ")})`,
      { source },
    );
  }
  const needle = query.toLowerCase();
  const results: ToolSearchResult[] = [];
  for (const catalog of selected) {
    for (const tool of catalog.tools()) {
      const haystack = [tool.name, tool.summary ?? "", ...tool.tags].join("\n").toLowerCase();
      if (!haystack.includes(needle)) continue;
      const p = catalogProvenance(catalog, tool);
      results.push({
        tool_id: p.tool_id,
        name: tool.name,
        ...(tool.summary !== undefined ? { summary: tool.summary } : {}),
        source: p.source,
        source_label: p.source_label,
        source_type: p.source_type,
        namespace: p.namespace,
        external_name: p.external_name,
        required_scopes: [...tool.required_scopes],
        tags: p.tags,
        catalog_ref: p.catalog_ref,
      });
    }
  }
  return {
    status: "success",
    query,
    source: source ?? "all",
    results: results.slice(0, SEARCH_LIMIT),
  };
}
