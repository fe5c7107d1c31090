/**
 * Input flags of `runx skill` for the tokens the CLI did not consume itself:
 * `-i k=v`, `-i k v`, `--input k=v`, `--input=k=v`, `--input-json k=<json>`,
 * `--input-json k <json>`, direct `--name value` / `--name=value` / bare `--name`, and
 * `--inputs file|-` (exclusive with every per-key form). Pure; values never appear in errors.
 */
import { RuntimeError } from "../errors.js";
import type { JsonValue } from "./json.js";

/** One supplied input. `raw` keeps the original CLI text when the value was parsed from it. */
export interface SuppliedInput {
  value: JsonValue;
  raw?: string;
}

/** The result of {@link parseInputFlags}. */
export interface ParsedInputFlags {
  /** Per-key inputs, keys normalized (trimmed, leading `--` stripped, `-` → `_`). */
  inputs: Record<string, SuppliedInput>;
  /** The `--inputs` argument (`-` means stdin), when given. */
  inputsFile?: string;
  /** Tokens that are not flags (after `--`, or not consumed as a flag value). */
  positionals: string[];
}

const RETIRED: Readonly<Record<string, string>> = {
  runner:
    "--runner is retired; pass the runner as the second positional argument: runx skill <ref> <runner>",
  run_id: "--run-id is retired; continue a paused run with: runx resume <run-id> <answers.json>",
  answers: "--answers is retired; continue a paused run with: runx resume <run-id> <answers.json>",
  receipt: "--receipt is retired; use --receipt-dir <dir>",
  receiptDir: "--receiptDir is retired; use --receipt-dir <dir>",
};

/** Normalizes an input key: trim, strip leading `--`, replace `-` with `_`. */
export function normalizeInputKey(key: string): string {
  return key.trim().replace(/^--/, "").replace(/-/g, "_");
}

/** JSON when the text parses as JSON, else the text itself. */
function jsonOrText(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

function looksLikeFlag(token: string | undefined): boolean {
  return token !== undefined && (token.startsWith("--") || /^-[A-Za-z]/.test(token));
}

class FlagReader {
  readonly inputs = new Map<string, SuppliedInput>();
  inputsFile: string | undefined;
  readonly positionals: string[] = [];
  private index = 0;

  constructor(private readonly tokens: readonly string[]) {}

  private next(): string | undefined {
    const token = this.tokens[this.index];
    this.index += 1;
    return token;
  }

  private add(rawKey: string, input: SuppliedInput): void {
    const key = normalizeInputKey(rawKey);
    if (key === "")
      throw new RuntimeError("INPUT_INVALID", "input key must not be empty", { path: "inputs" });
    if (this.inputs.has(key)) {
      throw new RuntimeError("INPUT_DUPLICATE", `input ${key} was supplied more than once`, {
        path: `inputs.${key}`,
        input: key,
      });
    }
    this.inputs.set(key, input);
  }

  /** `k=v` in one token, or `k` then `v` in two. */
  private keyValue(flag: string, inline?: string): [string, string] {
    const first = inline ?? this.next();
    if (first === undefined)
      throw new RuntimeError("USAGE", `${flag} needs key=value or key value`);
    const eq = first.indexOf("=");
    if (eq >= 0) return [first.slice(0, eq), first.slice(eq + 1)];
    const value = this.next();
    if (value === undefined)
      throw new RuntimeError("USAGE", `${flag} ${first} needs a value`, {
        input: normalizeInputKey(first),
      });
    return [first, value];
  }

  private textInput(flag: string, inline?: string): void {
    const [key, raw] = this.keyValue(flag, inline);
    this.add(key, { value: jsonOrText(raw), raw });
  }

  private jsonInput(inline?: string): void {
    const [key, raw] = this.keyValue("--input-json", inline);
    let value: JsonValue;
    try {
      value = JSON.parse(raw) as JsonValue;
    } catch {
      const name = normalizeInputKey(key);
      throw new RuntimeError("INPUT_INVALID", `--input-json ${name} is invalid JSON`, {
        path: `inputs.${name}`,
        input: name,
      });
    }
    this.add(key, { value });
  }

  private setInputsFile(value: string | undefined): void {
    if (value === undefined || value === "")
      throw new RuntimeError("USAGE", "--inputs needs a file path or - for stdin");
    if (this.inputsFile !== undefined)
      throw new RuntimeError("USAGE", "--inputs may be given only once");
    this.inputsFile = value;
  }

  private directFlag(token: string): void {
    const eq = token.indexOf("=");
    const name = eq >= 0 ? token.slice(2, eq) : token.slice(2);
    const retired = RETIRED[name] ?? RETIRED[normalizeInputKey(name)];
    if (retired !== undefined) throw new RuntimeError("USAGE", retired, { flag: `--${name}` });
    if (eq >= 0) {
      const raw = token.slice(eq + 1);
      this.add(name, { value: jsonOrText(raw), raw });
    } else if (this.index < this.tokens.length && !looksLikeFlag(this.tokens[this.index])) {
      const raw = this.next() ?? "";
      this.add(name, { value: jsonOrText(raw), raw });
    } else {
      this.add(name, { value: true });
    }
  }

  read(): void {
    for (let token = this.next(); token !== undefined; token = this.next()) {
      if (token === "--") {
        this.positionals.push(...this.tokens.slice(this.index));
        return;
      }
      const eq = token.indexOf("=");
      const head = eq >= 0 ? token.slice(0, eq) : token;
      const inline = eq >= 0 ? token.slice(eq + 1) : undefined;
      if (token === "-i" || head === "--input") this.textInput(head, inline);
      else if (head === "--input-json") this.jsonInput(inline);
      else if (head === "--inputs") this.setInputsFile(inline ?? this.next());
      else if (token.startsWith("--")) this.directFlag(token);
      else if (looksLikeFlag(token))
        throw new RuntimeError("USAGE", `unknown flag ${head}`, { flag: head });
      else this.positionals.push(token);
    }
  }
}

/**
 * Parses input flags from the tokens the CLI did not recognise. Throws USAGE (retired or
 * malformed flags, `--inputs` mixed with per-key inputs), INPUT_INVALID (bad JSON, empty key)
 * and INPUT_DUPLICATE.
 */
export function parseInputFlags(tokens: readonly string[]): ParsedInputFlags {
  const reader = new FlagReader(tokens);
  reader.read();
  if (reader.inputsFile !== undefined && reader.inputs.size > 0) {
    throw new RuntimeError(
      "USAGE",
      "--inputs cannot be combined with -i, --input, --input-json or direct input flags",
    );
  }
  const result: ParsedInputFlags = {
    inputs: Object.fromEntries(reader.inputs),
    positionals: reader.positionals,
  };
  if (reader.inputsFile !== undefined) result.inputsFile = reader.inputsFile;
  return result;
}
