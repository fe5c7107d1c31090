/**
 * A small built-in test catalog, source `fixture-mcp`: one imported MCP tool (`fixture.echo`)
 * that upstream's tool-catalog oracles describe. It exists so `runx tool search/inspect` over an
 * imported catalog can be exercised offline; the CLI offers it only when
 * RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1. It lists tools; it does not run them.
 */
import type { CatalogSource } from "./sources.js";

/** The fixture MCP catalog (test data; off unless RUNX_ENABLE_FIXTURE_TOOL_CATALOG=1). */
export const fixtureMcpCatalog: CatalogSource = {
  id: "fixture-mcp",
  label: "Fixture MCP Catalog",
  type: "mcp",
  tools: () => [
    {
      name: "fixture.echo",
      summary: "Echo a message through the fixture MCP server.",
      namespace: "fixture",
      external_name: "echo",
      required_scopes: ["fixture.echo"],
      tags: ["fixture", "mcp"],
      inputs: { message: { type: "string", required: true, description: "Message to echo." } },
    },
  ],
};
