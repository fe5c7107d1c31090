/**
 * The CLI shell: help, version, interrupt handling and dispatch to lazily loaded commands.
 * Commands parse, call one runtime service, and render; they hold no domain logic.
 */
import { COMMANDS, commandHelp, topLevelHelp } from "./catalog.js";
import type { CommandContext, CommandModule } from "./context.js";
import { readCliEnv } from "./env.js";
import { renderFailure } from "./failure.js";

/** The runtime release identity (also part of the execution-closure digest). */
export const RUNX_VERSION = "0.1.0";

const LOADERS: Record<string, () => Promise<CommandModule>> = {
  skill: () => import("./commands/skill.js"),
  history: () => import("./commands/history.js"),
  verify: () => import("./commands/verify.js"),
  list: () => import("./commands/list.js"),
  init: () => import("./commands/init.js"),
};

const INTERRUPT_EXIT = 130;
const CLEANUP_WINDOW_MS = 2000;

/** Runs the CLI with `argv` (without node and script) and exits the process. */
export function main(argv: string[]): void {
  void run(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`runx: internal error: ${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

async function run(argv: string[]): Promise<number> {
  const json = argv.includes("--json") || argv.includes("-j");
  const write = (stream: NodeJS.WriteStream) => (text: string) => {
    stream.write(text);
  };
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    const entry = COMMANDS.find((c) => c.name === topic);
    process.stdout.write(entry !== undefined ? commandHelp(entry) : topLevelHelp(RUNX_VERSION));
    return first === undefined ? 64 : 0;
  }
  if (first === "--version" || first === "-V") {
    process.stdout.write(
      json ? `${JSON.stringify({ version: RUNX_VERSION })}\n` : `${RUNX_VERSION}\n`,
    );
    return 0;
  }
  const loader = LOADERS[first];
  const entry = COMMANDS.find((c) => c.name === first);
  if (loader === undefined || entry === undefined) {
    const message = `unknown command '${first}' (see runx --help)`;
    renderFailure(
      { code: "USAGE", message },
      { json, out: write(process.stdout), err: write(process.stderr) },
    );
    return 64;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(commandHelp(entry));
    return 0;
  }

  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(INTERRUPT_EXIT);
    controller.abort();
    // Cleanup (killing process groups, sealing a receipt) gets a bounded window.
    setTimeout(() => process.exit(INTERRUPT_EXIT), CLEANUP_WINDOW_MS).unref();
  };
  try {
    process.on("SIGINT", onInterrupt);
    process.on("SIGTERM", onInterrupt);
  } catch {
    process.stderr.write("runx: could not install the interrupt handler; refusing to run\n");
    return 70;
  }

  const ctx: CommandContext = {
    env: readCliEnv(),
    signal: controller.signal,
    json,
    stdin: process.stdin,
    out: write(process.stdout),
    err: write(process.stderr),
  };
  const command = await loader();
  const code = await command.run(rest, ctx);
  return controller.signal.aborted ? INTERRUPT_EXIT : code;
}
