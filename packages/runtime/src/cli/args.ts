/** A small, strict flag parser shared by every CLI command. */
import { RuntimeError } from "../errors.js";

/** Declares one flag a command understands. */
export interface FlagSpec {
  /** Takes a value (`--flag v` / `--flag=v`); otherwise boolean. */
  value?: boolean;
  /** Extra spellings, e.g. `-j`, `-R`. */
  aliases?: string[];
  /** May be given more than once (values collected in order). */
  repeatable?: boolean;
}

/** The result of parsing a command's arguments. */
export interface ParsedArgs {
  flags: Map<string, string[] | true>;
  positionals: string[];
  /** Tokens not recognised, in order; only when `passThrough` is set. */
  rest: string[];
}

/** Parses `tokens` against `spec`. Unknown flags are usage errors unless `passThrough`. */
export function parseArgs(
  tokens: readonly string[],
  spec: Record<string, FlagSpec>,
  options: { passThrough?: boolean; command: string },
): ParsedArgs {
  const byName = new Map<string, string>();
  for (const [name, s] of Object.entries(spec)) {
    byName.set(`--${name}`, name);
    for (const alias of s.aliases ?? []) byName.set(alias, name);
  }
  const flags = new Map<string, string[] | true>();
  const positionals: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const head = eq > 0 ? token.slice(0, eq) : token;
    const name = byName.get(head);
    if (name === undefined) {
      if (options.passThrough === true) {
        rest.push(token);
      } else if (token.startsWith("-") && token !== "-") {
        throw new RuntimeError("USAGE", `unknown flag ${head} for 'runx ${options.command}'`, {
          flag: head,
        });
      } else {
        positionals.push(token);
      }
      continue;
    }
    const s = spec[name] as FlagSpec;
    if (s.value !== true) {
      if (eq > 0) throw new RuntimeError("USAGE", `flag ${head} takes no value`, { flag: head });
      flags.set(name, true);
      continue;
    }
    let v: string | undefined;
    if (eq > 0) v = token.slice(eq + 1);
    else {
      v = tokens[i + 1];
      if (v === undefined || (v.startsWith("-") && v !== "-")) {
        throw new RuntimeError("USAGE", `flag ${head} needs a value`, { flag: head });
      }
      i++;
    }
    const prev = flags.get(name);
    if (Array.isArray(prev)) {
      if (s.repeatable !== true) {
        throw new RuntimeError("USAGE", `flag ${head} was given more than once`, { flag: head });
      }
      prev.push(v);
    } else flags.set(name, [v]);
  }
  return { flags, positionals, rest };
}

/** The single value of a value flag, if given. */
export function flagValue(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return Array.isArray(v) ? v[0] : undefined;
}

/** Whether a boolean flag was given. */
export function flagSet(args: ParsedArgs, name: string): boolean {
  return args.flags.has(name);
}

/** Refuses more positionals than a command accepts. */
export function expectPositionals(args: ParsedArgs, max: number, command: string): void {
  if (args.positionals.length > max) {
    throw new RuntimeError(
      "USAGE",
      `unexpected argument '${args.positionals[max]}' for 'runx ${command}'`,
    );
  }
}
