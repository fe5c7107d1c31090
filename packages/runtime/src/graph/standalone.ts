/**
 * Standalone graph documents ("a graph may also be a standalone `graph.yaml`"): a
 * YAML file holding one graph, either under a `graph:` key or in the older dialect with
 * `name`, `owner` and `steps` at the top level. It runs as a package of its own with one graph
 * runner, so `runx skill <graph.yaml>` and `kind: graph` harness fixtures accept it. Pure: the
 * file text in, a package value out.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import type { SkillPackage, SourceText } from "../parser/package.js";
import { normalizeRunner } from "../parser/runners.js";
import { formatKeyPath, parseStrictYaml } from "../parser/strict-yaml.js";
import type { PathSegment, StrictYamlDocument } from "../parser/strict-yaml.js";
import { normalizeGraph } from "./document.js";

/** The name of the one runner a standalone graph document declares. */
export const GRAPH_DOCUMENT_RUNNER = "graph";

/** `steps[1].context.message` → `["steps", 1, "context", "message"]` (for line lookup). */
function segmentsOf(path: string): PathSegment[] {
  const out: PathSegment[] = [];
  for (const part of path.match(/[^.[\]]+|\[\d+\]/g) ?? []) {
    out.push(part.startsWith("[") ? Number(part.slice(1, -1)) : part);
  }
  return out;
}

/** Adds file, line and column to a GRAPH_INVALID raised while normalizing the document. */
function located<T>(document: StrictYamlDocument, file: string | undefined, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof RuntimeError && error.code === "GRAPH_INVALID") {
      const at = typeof error.details.path === "string" ? segmentsOf(error.details.path) : [];
      const position = document.locate(at);
      error.details.file = file;
      error.details.line = position.line;
      error.details.column = position.column;
    }
    throw error;
  }
}

/**
 * True when a parsed YAML value is shaped like a graph document (a `graph:` mapping, or a
 * top-level `steps` list), as opposed to some other YAML file such as a harness fixture.
 */
export function looksLikeGraphDocument(value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  if (isJsonObject(value.graph)) return true;
  return value.graph === undefined && Array.isArray(value.steps);
}

/**
 * Parses a standalone graph document into a package with one default graph runner named
 * `graph`; the package is named after the graph. Throws PACKAGE_INVALID for YAML that is not
 * a graph document and GRAPH_INVALID (with file, line and key path) for an invalid graph.
 */
export function buildGraphDocumentPackage(input: SourceText): SkillPackage {
  const file = input.file;
  const document = parseStrictYaml(input.text, { file });
  const root = document.value;
  if (!looksLikeGraphDocument(root) || !isJsonObject(root)) {
    throw new RuntimeError(
      "PACKAGE_INVALID",
      "not a skill package or graph document; pass a package directory, its SKILL.md, or a graph .yaml with steps",
      { file },
    );
  }
  const wrapped = root.graph !== undefined;
  const base: PathSegment[] = wrapped ? ["graph"] : [];
  if (wrapped) {
    const extra = Object.keys(root).find((key) => key !== "graph");
    if (extra !== undefined) {
      const position = document.locate([extra]);
      throw new RuntimeError(
        "GRAPH_INVALID",
        `unknown key "${extra}" beside graph: in a graph document`,
        { file, line: position.line, column: position.column, path: formatKeyPath([extra]) },
      );
    }
  }
  const graph = (wrapped ? root.graph : root) as JsonObject;
  const doc = located(document, file, () => normalizeGraph(graph, { path: base }));
  const runner = located(document, file, () =>
    normalizeRunner(
      GRAPH_DOCUMENT_RUNNER,
      { type: "graph", graph, default: true },
      {
        path: base,
        fail: (path, message) => {
          throw new RuntimeError("GRAPH_INVALID", message, { path: formatKeyPath(path) });
        },
      },
    ),
  );
  return {
    name: doc.name,
    frontmatter: {},
    body: "",
    runners: { [GRAPH_DOCUMENT_RUNNER]: runner },
    inputs: {},
    settings: {},
    files: { profile: file },
  };
}
