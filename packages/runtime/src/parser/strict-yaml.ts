/**
 * The strict YAML subset used by SKILL.md frontmatter, X.yaml profiles, graphs and fixtures.
 * One document of plain data: no anchors, aliases, merge keys, tags, directives, explicit
 * keys, duplicate keys, or plain scalars that YAML 1.1 and 1.2 readers disagree on. Every
 * refusal carries the 1-based line/column and the dotted key path of the offending node.
 * Containers nest at most MAX_NESTING_DEPTH levels (nesting.ts). Pure: text in, value out.
 */
import { Composer, LineCounter, Parser, isAlias, isMap, isScalar, isSeq } from "yaml";
import type { Document } from "yaml";
import { RuntimeError } from "../errors.js";
import type { JsonValue } from "./json.js";
import { MAX_NESTING_DEPTH, nestingTooDeep, scanYamlNesting } from "./nesting.js";
import { mustQuotePlainScalar, scanAmbiguousLines } from "./yaml-scan.js";

/** One step of a key path: a mapping key or a sequence index. */
export type PathSegment = string | number;

/** A 1-based line and column. */
export interface SourcePosition {
  line: number;
  column: number;
}

/** The construct a YAML_FORBIDDEN error refuses (reported as `details.construct`). */
export type ForbiddenConstruct =
  | "anchor"
  | "alias"
  | "merge_key"
  | "tag"
  | "directive"
  | "multiple_documents"
  | "duplicate_key"
  | "explicit_key"
  | "ambiguous_key"
  | "ambiguous_scalar"
  | "must_quote_scalar";

/** Where the text came from: `file` for error details, `lineOffset` added to every line. */
export interface StrictYamlOptions {
  file?: string;
  lineOffset?: number;
}

/** A parsed document: its plain value and a position lookup for key paths. */
export interface StrictYamlDocument {
  /** The document as plain JSON data; `null` for an empty document. */
  value: JsonValue;
  /** Position of the node at `path` (a mapping entry points at its key); nearest ancestor if absent. */
  locate(path: readonly PathSegment[]): SourcePosition;
}

const MESSAGES: Record<ForbiddenConstruct, string> = {
  anchor: "anchors are not allowed; write the value out",
  alias: "aliases are not allowed; write the value out",
  merge_key: "merge keys (<<) are not allowed; write the keys out",
  tag: "tags are not allowed; quote the value if it must be a string",
  directive: "YAML directives are not allowed",
  multiple_documents: "only one YAML document is allowed",
  duplicate_key: "duplicate mapping key",
  explicit_key: "explicit mapping keys (?) are not allowed",
  ambiguous_key: "ambiguous YAML key; quote the key",
  ambiguous_scalar: "ambiguous YAML construct; quote the value or key",
  must_quote_scalar: "this plain value reads differently across YAML versions; quote it",
};

/** Formats a key path as `runners.default.args[1]` (empty string for the root). */
export function formatKeyPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

interface IndexEntry {
  offset: number;
  depth: number;
  path: PathSegment[];
}

interface Violation {
  construct: ForbiddenConstruct;
  offset: number;
  path?: PathSegment[];
}

/** CST token types that are refused wherever they appear. */
const LEXICAL: Readonly<Record<string, ForbiddenConstruct>> = {
  anchor: "anchor",
  alias: "alias",
  tag: "tag",
  "explicit-key-ind": "explicit_key",
  directive: "directive",
  "doc-end": "multiple_documents",
};

/** CST token types that open a container (one nesting level). */
const CONTAINERS = new Set(["block-map", "block-seq", "flow-collection"]);

/**
 * Collects refused lexical tokens (and document starts) from the concrete syntax tree, and
 * returns the offset of the first container nested deeper than MAX_NESTING_DEPTH. Iterative,
 * in document order, so no input can exhaust the stack here.
 */
function scanTokens(root: unknown, out: Violation[], docStarts: number[]): number | undefined {
  let tooDeep: number | undefined;
  const stack: Array<{ node: unknown; depth: number }> = [{ node: root, depth: 0 }];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { node, depth } = entry;
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], depth });
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    const token = node as Record<string, unknown>;
    const type = token.type;
    const offset = typeof token.offset === "number" ? token.offset : -1;
    let inner = depth;
    if (typeof type === "string") {
      const construct = LEXICAL[type];
      if (construct !== undefined) out.push({ construct, offset });
      if (type === "document") docStarts.push(offset);
      if (CONTAINERS.has(type)) {
        inner = depth + 1;
        if (inner > MAX_NESTING_DEPTH && (tooDeep === undefined || offset < tooDeep))
          tooDeep = offset;
      }
    }
    for (const key of ["props", "end", "items", "value", "sep", "key", "start"]) {
      if (key in token) stack.push({ node: token[key], depth: inner });
    }
  }
  return tooDeep;
}

/** The object key a scalar mapping key becomes in the plain value (as `toJS` does). */
function keyString(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint")
    return String(value);
  return JSON.stringify(value) ?? "";
}

class Walker {
  readonly entries: IndexEntry[] = [];
  readonly positions = new Map<string, number>();
  readonly violations: Violation[] = [];

  constructor(private readonly text: string) {}

  private record(offset: number | undefined, path: PathSegment[], depth: number): void {
    if (offset === undefined) return;
    this.entries.push({ offset, depth, path });
    const key = JSON.stringify(path);
    if (!this.positions.has(key)) this.positions.set(key, offset);
  }

  walk(node: unknown, path: PathSegment[], depth: number): void {
    if (isAlias(node)) {
      this.record(node.range?.[0], path, depth);
    } else if (isScalar(node)) {
      this.record(node.range?.[0], path, depth);
      if (node.type === "PLAIN" && node.value !== null && node.range) {
        const source = this.text.slice(node.range[0], node.range[1]);
        if (mustQuotePlainScalar(source)) {
          this.violations.push({ construct: "must_quote_scalar", offset: node.range[0], path });
        }
      }
    } else if (isSeq(node)) {
      this.record(node.range?.[0], path, depth);
      node.items.forEach((item, index) => this.walk(item, [...path, index], depth + 1));
    } else if (isMap(node)) {
      this.record(node.range?.[0], path, depth);
      const seen = new Set<string>();
      for (const pair of node.items) {
        const key: unknown = pair.key;
        const valueNode: unknown = pair.value;
        const fallback =
          isScalar(valueNode) || isMap(valueNode) || isSeq(valueNode)
            ? valueNode.range?.[0]
            : undefined;
        if (!isScalar(key) || key.range === undefined || key.range === null) {
          const offset = isMap(key) || isSeq(key) ? key.range?.[0] : fallback;
          this.violations.push({
            construct: "ambiguous_key",
            offset: offset ?? node.range?.[0] ?? 0,
            path,
          });
          continue;
        }
        const name = keyString(key.value);
        const childPath = [...path, name];
        const keyOffset = key.range[0];
        if (key.type === "PLAIN")
          this.checkPlainKey(
            key.value,
            this.text.slice(keyOffset, key.range[1]),
            keyOffset,
            childPath,
          );
        if (seen.has(name))
          this.violations.push({ construct: "duplicate_key", offset: keyOffset, path: childPath });
        seen.add(name);
        this.record(keyOffset, childPath, depth + 1);
        this.walk(valueNode, childPath, depth + 1);
      }
    }
  }

  private checkPlainKey(value: unknown, source: string, offset: number, path: PathSegment[]): void {
    let construct: ForbiddenConstruct | undefined;
    if (source === "<<") construct = "merge_key";
    else if (value === null || source.includes(":")) construct = "ambiguous_key";
    else if (mustQuotePlainScalar(source)) construct = "must_quote_scalar";
    if (construct !== undefined) this.violations.push({ construct, offset, path });
  }

  /**
   * Path of the first indexed node starting at (or, when `strictlyAfter`, after) `offset`:
   * anchors and tags precede their node; an explicit-key indicator precedes its key.
   */
  pathAt(offset: number, strictlyAfter: boolean): PathSegment[] {
    let best: IndexEntry | undefined;
    for (const entry of this.entries) {
      if (entry.offset < offset || (strictlyAfter && entry.offset === offset)) continue;
      if (
        best === undefined ||
        entry.offset < best.offset ||
        (entry.offset === best.offset && entry.depth < best.depth)
      ) {
        best = entry;
      }
    }
    return best?.path ?? [];
  }
}

/**
 * Parses `text` as one strict-subset YAML document. Throws YAML_SYNTAX for malformed YAML and
 * YAML_FORBIDDEN (with `details.construct`) for refused constructs; the earliest problem in
 * the text wins.
 */
export function parseStrictYaml(text: string, options: StrictYamlOptions = {}): StrictYamlDocument {
  const lineOffset = options.lineOffset ?? 0;
  // The YAML library's parser slows down quadratically with nesting and its composer
  // recurses, so nesting is bounded on the text first and exactly on the syntax tree after.
  const deep = scanYamlNesting(text, MAX_NESTING_DEPTH);
  if (deep !== undefined)
    throw nestingTooDeep({ file: options.file, line: deep.line + lineOffset, column: deep.column });
  const lineCounter = new LineCounter();
  const tokens = Array.from(new Parser(lineCounter.addNewLine).parse(text));
  const violations: Violation[] = [];
  const docStarts: number[] = [];
  const tooDeep = scanTokens(tokens, violations, docStarts);
  if (tooDeep !== undefined) {
    const pos = lineCounter.linePos(Math.max(0, tooDeep));
    throw nestingTooDeep({ file: options.file, line: pos.line + lineOffset, column: pos.col });
  }
  // Duplicate keys are detected by the walker (so the error can name the key path), hence
  // uniqueKeys is off here; merge is off so `<<` stays an ordinary key that the walker refuses.
  const composer = new Composer({
    version: "1.2",
    schema: "core",
    merge: false,
    uniqueKeys: false,
    prettyErrors: false,
  });
  const docs: Document.Parsed[] = Array.from(composer.compose(tokens, false, text.length));
  const walker = new Walker(text);
  for (const doc of docs.slice(0, 1)) walker.walk(doc.contents, [], 0);

  const toPosition = (offset: number): SourcePosition => {
    const pos = lineCounter.linePos(Math.max(0, offset));
    return { line: pos.line + lineOffset, column: pos.col };
  };
  const fail = (
    construct: ForbiddenConstruct,
    position: SourcePosition,
    path: readonly PathSegment[],
  ): never => {
    throw new RuntimeError("YAML_FORBIDDEN", MESSAGES[construct], {
      file: options.file,
      line: position.line,
      column: position.column,
      path: formatKeyPath(path),
      construct,
    });
  };

  for (const start of docStarts.slice(1))
    violations.push({ construct: "multiple_documents", offset: start });
  const pathOf = (v: Violation): PathSegment[] =>
    v.path ??
    (v.construct === "multiple_documents"
      ? []
      : walker.pathAt(v.offset, v.construct === "explicit_key"));

  const syntaxErrors = docs.flatMap((doc) => doc.errors).sort((a, b) => a.pos[0] - b.pos[0]);
  const firstError = syntaxErrors[0];
  if (firstError !== undefined) {
    // A refused token at or before the parse error explains it better (e.g. an alias to an
    // anchor that does not exist), so it wins.
    const lexical = violations
      .filter((v) => v.offset <= firstError.pos[0])
      .sort((a, b) => a.offset - b.offset)[0];
    if (lexical !== undefined) fail(lexical.construct, toPosition(lexical.offset), pathOf(lexical));
    const errorLine = lineCounter.linePos(firstError.pos[0]).line;
    const ambiguous = scanAmbiguousLines(text, errorLine);
    if (ambiguous !== undefined) {
      const keyEntry = walker.entries
        .filter((entry) => {
          const pos = lineCounter.linePos(entry.offset);
          return (
            pos.line === ambiguous.line && pos.col === (ambiguous.keyColumn ?? ambiguous.column)
          );
        })
        .sort((a, b) => b.depth - a.depth)[0];
      fail(
        ambiguous.construct,
        { line: ambiguous.line + lineOffset, column: ambiguous.column },
        keyEntry?.path ?? [],
      );
    }
    const position = toPosition(firstError.pos[0]);
    throw new RuntimeError(
      "YAML_SYNTAX",
      `invalid YAML: ${firstError.message.split("\n")[0] ?? firstError.code}`,
      {
        file: options.file,
        line: position.line,
        column: position.column,
        yamlCode: firstError.code,
      },
    );
  }

  violations.push(...walker.violations);
  violations.sort((a, b) => a.offset - b.offset);
  const first = violations[0];
  if (first !== undefined) fail(first.construct, toPosition(first.offset), pathOf(first));

  const doc = docs[0];
  const value = doc === undefined ? null : (doc.toJS() as JsonValue);
  const rootOffset = walker.positions.get("[]");
  return {
    value: value ?? null,
    locate(path) {
      for (let n = path.length; n >= 0; n--) {
        const offset = walker.positions.get(JSON.stringify(path.slice(0, n)));
        if (offset !== undefined) return toPosition(offset);
      }
      return toPosition(rootOffset ?? 0);
    },
  };
}
