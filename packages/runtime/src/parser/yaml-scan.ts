/**
 * Lexical helpers for the strict YAML subset: the "must quote" plain-scalar patterns and a
 * quote-aware line scanner that explains syntax errors caused by ambiguous constructs.
 * Pure functions over strings.
 */

/**
 * Plain scalars that YAML 1.1 and 1.2 readers resolve differently, so the subset refuses them.
 * Date-like plain values (`2026-05-22T00:00:00Z`, `2026-01-01`) are deliberately NOT refused:
 * upstream packages and fixtures in the conformance corpus (skills/issue-intake/X.yaml, the
 * spend graph stages, nitrosend fixtures) carry them unquoted, and the YAML 1.2 core schema
 * used here always reads them as the literal string, so no reader ambiguity reaches runx.
 */
const MUST_QUOTE_PATTERNS: readonly RegExp[] = [
  /^(?:y|n|yes|no|on|off)$/i, // YAML 1.1 booleans
  /^[-+]?0x[0-9a-f_]+$/i, // hexadecimal integers
  /^[-+]?0o[0-7_]+$/i, // octal integers
  /^[-+]?0[0-7_]+$/, // YAML 1.1 octal integers such as 0755
  /^[-+]?0b[01_]+$/i, // YAML 1.1 binary integers
  /^[-+]?\d[\d_]*(?::[0-5]?\d)+(?:\.\d*)?$/, // sexagesimal numbers such as 12:30
  /^[-+]?\.(?:inf|nan)$/i, // special floats
];

/** True when a plain (unquoted) scalar's source text must be quoted in the strict subset. */
export function mustQuotePlainScalar(source: string): boolean {
  return MUST_QUOTE_PATTERNS.some((pattern) => pattern.test(source));
}

/** An ambiguous construct found on one line, with 1-based positions relative to the text. */
export interface AmbiguousLine {
  construct: "explicit_key" | "ambiguous_scalar";
  line: number;
  column: number;
  /** Column of the mapping key on that line, when the construct is a value. */
  keyColumn?: number;
}

/** Index of the `:` that separates a block mapping key from its value, or -1. */
function findMappingSeparator(rest: string): number {
  let i = 0;
  const quote = rest[0];
  if (quote === '"' || quote === "'") {
    i = 1;
    while (i < rest.length) {
      if (quote === '"' && rest[i] === "\\") i += 2;
      else if (rest[i] === quote) {
        if (quote === "'" && rest[i + 1] === "'") i += 2;
        else break;
      } else i += 1;
    }
    i += 1;
  }
  for (; i < rest.length; i++) {
    const ch = rest[i];
    if (ch === "#" && i > 0 && /\s/.test(rest[i - 1] ?? "")) return -1;
    if (ch === ":" && (i + 1 === rest.length || /\s/.test(rest[i + 1] ?? ""))) return i;
  }
  return -1;
}

/** The value text with a trailing ` # comment` removed (plain values only). */
function stripComment(value: string): string {
  const match = /\s#/.exec(value);
  return match === null ? value : value.slice(0, match.index);
}

/**
 * Scans block-context lines up to `lastLine` for explicit keys (`? `) and plain values that
 * contain `": "`. Used only to classify a syntax error: the YAML parser rejects these lines
 * with a generic message, and the subset wants to name the ambiguity instead. Flow
 * collections, quoted values and block scalar bodies are skipped.
 */
export function scanAmbiguousLines(text: string, lastLine: number): AmbiguousLine | undefined {
  const lines = text.split(/\r?\n/);
  let blockOwnerIndent: number | undefined;
  for (let i = 0; i < lines.length && i < lastLine; i++) {
    const line = lines[i] ?? "";
    const trimmed = line.trimStart();
    const indent = line.length - trimmed.length;
    if (blockOwnerIndent !== undefined) {
      if (trimmed === "" || indent > blockOwnerIndent) continue;
      blockOwnerIndent = undefined;
    }
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith("%")) continue;
    if (/^(?:---|\.\.\.)(?:\s|$)/.test(line)) continue;
    let column = indent;
    let rest = trimmed;
    for (let m = /^-(?:\s+|$)/.exec(rest); m !== null; m = /^-(?:\s+|$)/.exec(rest)) {
      column += m[0].length;
      rest = rest.slice(m[0].length);
    }
    if (/^\?(?:\s|$)/.test(rest))
      return { construct: "explicit_key", line: i + 1, column: column + 1 };
    if (rest.startsWith("[") || rest.startsWith("{")) continue;
    const sep = findMappingSeparator(rest);
    if (sep < 0) continue;
    const after = rest.slice(sep + 1);
    const valueStart = sep + 1 + (after.length - after.trimStart().length);
    const value = stripComment(rest.slice(valueStart)).trimEnd();
    const first = value[0];
    if (first === undefined) continue;
    if (first === "|" || first === ">") {
      blockOwnerIndent = column;
      continue;
    }
    if (`"'[{&*!`.includes(first)) continue;
    if (/:(?:\s|$)/.test(value)) {
      return {
        construct: "ambiguous_scalar",
        line: i + 1,
        column: column + valueStart + 1,
        keyColumn: column + 1,
      };
    }
  }
  return undefined;
}
