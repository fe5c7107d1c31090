/** What every command receives from the CLI shell. */
import type { CliEnv } from "./env.js";

/** The CLI-side context handed to a command: environment, streams and the interrupt signal. */
export interface CommandContext {
  env: CliEnv;
  /** Aborted on the first Ctrl-C; commands pass it to every supervised process. */
  signal: AbortSignal;
  /** Whether `--json`/`-j` appeared anywhere in the arguments. */
  json: boolean;
  stdin: NodeJS.ReadableStream;
  /** Writes to stdout; control sequences in `text` are spelled out (cli/terminal-safe.ts). */
  out(text: string): void;
  /** Writes to stderr, made safe like `out`. */
  err(text: string): void;
  /** Redraws the status line on stderr ("" clears it); call only when stderr is a TTY. */
  status(text: string): void;
}

/** A lazily loaded command implementation. Returns the process exit code. */
export interface CommandModule {
  run(tokens: string[], ctx: CommandContext): Promise<number>;
}
