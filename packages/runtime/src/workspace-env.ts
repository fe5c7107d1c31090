/**
 * The workspace environment snapshot: the exported process environment, with the workspace's
 * `.env` filling only the names the process does not set. `.env` is read as data, never run
 * through a shell, so no expansion, command substitution or multi-line continuation happens.
 * One snapshot serves a whole command (or MCP server session).
 */
import { RuntimeError, isRuntimeError } from "./errors.js";
import { readFileCappedSync } from "./packages/read-capped.js";

/** A `.env` larger than this is refused: it is configuration, not data. */
export const DOTENV_MAX_BYTES = 256 * 1024;

/** The merged snapshot and which of its names `.env` supplied. */
export interface WorkspaceEnvSnapshot {
  env: Readonly<Record<string, string | undefined>>;
  /** Names whose value came from `.env` (the process did not export them). */
  fromDotenv: ReadonlySet<string>;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function invalid(file: string, line: number, message: string): never {
  throw new RuntimeError("CONFIG_INVALID", message, { file, line });
}

/** The value of a double-quoted string: `\n`, `\r`, `\t`, `\"` and `\\` are the escapes. */
function unescapeDouble(body: string, file: string, line: number): string {
  let out = "";
  for (let i = 0; i < body.length; i += 1) {
    const ch = body[i];
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const next = body[i + 1];
    i += 1;
    if (next === "n") out += "\n";
    else if (next === "r") out += "\r";
    else if (next === "t") out += "\t";
    else if (next === '"' || next === "\\" || next === "$") out += next;
    else invalid(file, line, `unsupported escape \\${next ?? ""} in a double-quoted value`);
  }
  return out;
}

/** Parses a value after `=`; the original line is never echoed, it may be a secret. */
function parseValue(raw: string, file: string, line: number): string {
  const text = raw.trim();
  const quote = text[0];
  if (quote === '"' || quote === "'") {
    // The closing quote is the last unescaped one; only a comment may follow it.
    let end = -1;
    for (let i = 1; i < text.length; i += 1) {
      if (quote === '"' && text[i] === "\\") {
        i += 1;
        continue;
      }
      if (text[i] === quote) {
        end = i;
        break;
      }
    }
    if (end === -1) invalid(file, line, "a quoted value is not closed on its line");
    const rest = text.slice(end + 1).trim();
    if (rest !== "" && !rest.startsWith("#")) {
      invalid(file, line, "only a comment may follow a quoted value");
    }
    const body = text.slice(1, end);
    return quote === "'" ? body : unescapeDouble(body, file, line);
  }
  // Unquoted: a `#` after whitespace starts a comment.
  const comment = /\s#/.exec(text);
  return (comment === null ? text : text.slice(0, comment.index)).trim();
}

/**
 * Parses `.env` text: `KEY=VALUE` lines, optional `export ` prefix, blank lines and `#`
 * comments. A later assignment of the same name wins. Malformed lines fail with file:line.
 */
export function parseDotenv(text: string, file = ".env"): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  lines.forEach((rawLine, index) => {
    const lineNo = index + 1;
    const lineText = rawLine.trim();
    if (lineText === "" || lineText.startsWith("#")) return;
    const body = lineText.startsWith("export ") ? lineText.slice(7).trimStart() : lineText;
    const eq = body.indexOf("=");
    if (eq <= 0) invalid(file, lineNo, "expected KEY=VALUE");
    const name = body.slice(0, eq).trim();
    if (!NAME.test(name)) invalid(file, lineNo, "the name is not a valid environment variable");
    const value = parseValue(body.slice(eq + 1), file, lineNo);
    if (value.includes("\0")) invalid(file, lineNo, "a value cannot contain NUL");
    values[name] = value;
  });
  return values;
}

/**
 * The snapshot for a workspace: process values win, `.env` at the workspace root fills only
 * missing names. A missing `.env` is an empty one.
 */
export function readWorkspaceEnv(
  workspaceRoot: string,
  processEnv: Readonly<Record<string, string | undefined>>,
): WorkspaceEnvSnapshot {
  let text: string;
  try {
    text = readFileCappedSync({
      path: `${workspaceRoot}/.env`,
      shown: ".env",
      what: ".env",
      maxBytes: DOTENV_MAX_BYTES,
    }).toString("utf8");
  } catch (error) {
    if (isRuntimeError(error) && error.details.cause === "ENOENT") {
      return { env: processEnv, fromDotenv: new Set() };
    }
    throw error;
  }
  const merged: Record<string, string | undefined> = { ...processEnv };
  const fromDotenv = new Set<string>();
  for (const [name, value] of Object.entries(parseDotenv(text))) {
    if (merged[name] !== undefined) continue;
    merged[name] = value;
    fromDotenv.add(name);
  }
  return { env: Object.freeze(merged), fromDotenv };
}
