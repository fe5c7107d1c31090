/**
 * Nesting bounds for untrusted documents. Every structure runx parses from a file, a request
 * or stdin (YAML packages, graphs and fixtures, JSON inputs, answers and receipts) is refused
 * past {@link MAX_NESTING_DEPTH} levels of containers, before anything walks it recursively:
 * recursion over a deeper value would end in a stack overflow instead of an error that names
 * the place. Real packages nest well under ten levels; the bound leaves room for data.
 */
import { RuntimeError } from "../errors.js";

/** Containers (mappings, sequences, objects, arrays) may nest this deep, the root included. */
export const MAX_NESTING_DEPTH = 64;

/**
 * Receipts read from disk nest at most this deep: looser than for documents people write,
 * since a receipt carries run outputs, which are cut at REDACTION_MAX_DEPTH (128) levels.
 */
export const RECEIPT_MAX_NESTING = 256;

/** A 1-based line and column. */
export interface NestingPosition {
  line: number;
  column: number;
}

/** The NESTING_TOO_DEEP error for a container opened at `details` (file, line, column, path). */
export function nestingTooDeep(details: Record<string, unknown>): RuntimeError {
  return new RuntimeError("NESTING_TOO_DEEP", `nesting deeper than ${MAX_NESTING_DEPTH} levels`, {
    ...details,
    limit: MAX_NESTING_DEPTH,
  });
}

/** A block mapping key at the cursor: a plain or quoted key, then `:` and a space or the end. */
const BLOCK_KEY =
  /(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'|[^\s#'"[\]{},:-][^\n#]*?|-[^\s][^\n#]*?)[ \t]*:(?=[ \t\r\n]|$)[ \t]*/y;
/** A block sequence entry indicator at the cursor, with the spaces after it. */
const ENTRY = /-(?:[ \t]+|(?=[\r\n]|$))/y;
const DOCUMENT_MARKER = /(?:---|\.\.\.)(?=\s|$)/y;

function matchAt(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex - at : -1;
}

/**
 * A linear pre-scan of YAML text for containers nested deeper than `limit`, so that hostile
 * input is refused before the YAML library parses it (its parser slows down quadratically
 * with nesting, and its composer recurses). It follows block structure by indentation and
 * compact `- ` entries, and flow collections by their brackets outside quotes and comments,
 * skipping block scalar bodies and plain scalar continuation lines. It counts no level the
 * document does not have (it misses some: a sequence at its parent key's indentation), so it
 * cannot refuse a document within the bound; the exact check runs on the parsed syntax tree
 * (strict-yaml.ts). Returns the position of the first container past the bound.
 */
export function scanYamlNesting(text: string, limit: number): NestingPosition | undefined {
  const blocks: number[] = [];
  let flow = 0;
  let quote: string | undefined;
  // Lines indented deeper than this belong to the scalar of the line that set it.
  let scalarOwner: number | undefined;
  let line = 0;
  let start = 0;

  const closeBlocks = (column: number): undefined => {
    while (blocks.length > 0 && (blocks[blocks.length - 1] ?? 0) > column) blocks.pop();
    return undefined;
  };
  const pushBlock = (column: number): NestingPosition | undefined => {
    closeBlocks(column);
    if (blocks.length === 0 || (blocks[blocks.length - 1] ?? 0) < column) blocks.push(column);
    return blocks.length > limit ? { line, column: column + 1 } : undefined;
  };

  // In flow context: true where a node may start (after `[`, `{`, `,` or `:`, line breaks
  // aside), so a quote there opens a quoted scalar.
  let atNodeStart = true;

  /** Continues a flow collection or a quoted scalar over `text[from, end)`. */
  const scanFlow = (from: number, end: number): NestingPosition | undefined => {
    for (let i = from; i < end; i++) {
      const ch = text[i];
      if (quote !== undefined) {
        if (quote === '"' && ch === "\\") i++;
        else if (ch === quote) {
          if (quote === "'" && text[i + 1] === "'") i++;
          else quote = undefined;
        }
        continue;
      }
      if (flow === 0) return undefined;
      if (ch === '"' || ch === "'") {
        // A quote opens a scalar only where a node starts; inside a plain scalar (`it's`) it
        // is a character, and taking it for a quote would hide the brackets after it.
        if (atNodeStart) quote = ch;
      } else if (ch === "[" || ch === "{") {
        flow++;
        if (blocks.length + flow > limit) return { line, column: i - start + 1 };
      } else if (ch === "]" || ch === "}") flow--;
      else if (ch === "#" && (i === start || /\s/.test(text[i - 1] ?? ""))) return undefined;
      if (ch !== " " && ch !== "\t" && ch !== "\r") atNodeStart = "[{,:".includes(ch ?? "");
    }
    return undefined;
  };

  /** The structure of one block-context line whose content starts at `content`. */
  const scanBlockLine = (content: number, end: number): NestingPosition | undefined => {
    const indent = content - start;
    if (indent === 0 && matchAt(DOCUMENT_MARKER, text, content) > 0) {
      blocks.length = 0;
      return undefined;
    }
    // Only an entry or a key opens a container; a scalar line just closes deeper levels.
    const opens = matchAt(ENTRY, text, content) >= 0 || matchAt(BLOCK_KEY, text, content) >= 0;
    let hit = opens ? pushBlock(indent) : closeBlocks(indent);
    let at = content;
    // A scalar's continuation lines are indented deeper than its key or its entry's `-`.
    let owner = indent;
    // Compact entries: each `- ` followed by another entry or a key opens a level inside.
    for (let n = matchAt(ENTRY, text, at); n >= 0 && hit === undefined;) {
      owner = at - start;
      at += n;
      n = matchAt(ENTRY, text, at);
      if (at < end && (n >= 0 || matchAt(BLOCK_KEY, text, at) >= 0)) hit = pushBlock(at - start);
    }
    if (hit !== undefined) return hit;
    const key = matchAt(BLOCK_KEY, text, at);
    if (key >= 0) {
      owner = at - start;
      at += key;
    }
    const first = at < end ? text[at] : undefined;
    if (first === "[" || first === "{") {
      flow = 1;
      atNodeStart = true;
      if (blocks.length + 1 > limit) return { line, column: at - start + 1 };
      return scanFlow(at + 1, end);
    }
    if (first === '"' || first === "'") {
      quote = first;
      return scanFlow(at + 1, end);
    }
    if (first !== undefined && first !== "#" && first !== "\r") scalarOwner = owner;
    return undefined;
  };

  for (;;) {
    line++;
    const newline = text.indexOf("\n", start);
    const end = newline === -1 ? text.length : newline;
    let content = start;
    while (content < end && text[content] === " ") content++;
    const blank = content >= end || text[content] === "\r" || text[content] === "#";
    let hit: NestingPosition | undefined;
    if (quote !== undefined || flow > 0) hit = scanFlow(start, end);
    else if (scalarOwner !== undefined && (blank || content - start > scalarOwner)) {
      // A block scalar's body or a plain scalar's continuation line.
    } else if (!blank) {
      scalarOwner = undefined;
      hit = scanBlockLine(content, end);
    }
    if (hit !== undefined) return hit;
    if (newline === -1) return undefined;
    start = newline + 1;
  }
}

/**
 * The position of the first JSON array or object opened past `limit` levels in `text`
 * (brackets outside strings; exact for JSON), with its character offset. Linear; run before
 * JSON.parse so that a refused document is never built.
 */
export function scanJsonNesting(
  text: string,
  limit: number = MAX_NESTING_DEPTH,
): (NestingPosition & { offset: number }) | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > limit) {
        const before = text.slice(0, i);
        const line = before.split("\n").length;
        return { line, column: i - before.lastIndexOf("\n"), offset: i };
      }
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return undefined;
}

/**
 * The key path (`a.b[0]`, relative to `value`) of the first container nested past `limit`
 * levels in a decoded value, or undefined. Iterative, for values that arrive already decoded
 * (API requests, MCP calls).
 */
export function findDeepNesting(
  value: unknown,
  limit: number = MAX_NESTING_DEPTH,
): string | undefined {
  interface Entry {
    node: unknown;
    depth: number;
    key?: string | number;
    parent?: Entry;
  }
  const pathOf = (entry: Entry): string => {
    const keys: Array<string | number> = [];
    for (let at: Entry | undefined = entry; at?.key !== undefined; at = at.parent)
      keys.push(at.key);
    return keys
      .reverse()
      .map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? key : `.${key}`))
      .join("");
  };
  const stack: Entry[] = [{ node: value, depth: 0 }];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const { node, depth } = entry;
    if (node === null || typeof node !== "object") continue;
    if (depth + 1 > limit) return pathOf(entry);
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--)
        stack.push({ node: node[i] as unknown, depth: depth + 1, key: i, parent: entry });
    } else {
      for (const [key, child] of Object.entries(node as Record<string, unknown>))
        stack.push({ node: child, depth: depth + 1, key, parent: entry });
    }
  }
  return undefined;
}

/**
 * JSON.parse for untrusted text, refusing nesting past MAX_NESTING_DEPTH with
 * NESTING_TOO_DEEP at its line and column (`details` adds the file or source). Other parse
 * errors are JSON.parse's own SyntaxError, for the caller to word.
 */
export function parseBoundedJson(text: string, details: Record<string, unknown> = {}): unknown {
  const deep = scanJsonNesting(text);
  if (deep !== undefined)
    throw nestingTooDeep({ ...details, line: deep.line, column: deep.column });
  return JSON.parse(text) as unknown;
}
