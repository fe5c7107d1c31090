/**
 * The help-only entry (dist/help.cjs): `runx`, `runx --help`, `runx <command> --help` and
 * `runx --version` are answered from the catalog without loading the runtime.
 */
import { COMMANDS, commandHelp, topLevelHelp } from "./catalog.js";
import { writeAllSync } from "./stdio.js";
import { RUNX_VERSION } from "./version.js";

/** Prints help or the version for `argv` and returns the exit code, or undefined when `argv` asks for neither. */
export function helpOnly(argv: string[]): number | undefined {
  const [first, ...rest] = argv;
  const json = argv.includes("--json") || argv.includes("-j");
  if (first === "--version" || first === "-V") {
    writeAllSync(1, json ? `${JSON.stringify({ version: RUNX_VERSION })}\n` : `${RUNX_VERSION}\n`);
    return 0;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const entry = COMMANDS.find((c) => c.name === (first === "help" ? rest[0] : undefined));
    writeAllSync(1, entry !== undefined ? commandHelp(entry) : topLevelHelp(RUNX_VERSION));
    return first === undefined ? 64 : 0;
  }
  const entry = COMMANDS.find((c) => c.name === first);
  if (entry !== undefined && (rest.includes("--help") || rest.includes("-h"))) {
    writeAllSync(1, commandHelp(entry));
    return 0;
  }
  return undefined;
}

/** The command names (bin/runx.cjs keeps one chunk pack per command, and one for the rest). */
export const COMMAND_NAMES: readonly string[] = COMMANDS.map((c) => c.name);
