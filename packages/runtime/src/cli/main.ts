/**
 * The CLI shell: help, version, interrupt handling and dispatch to lazily loaded commands.
 * Commands parse, call one runtime service, and render; they hold no domain logic.
 */
import { COMMANDS } from "./catalog.js";
import type { CommandContext, CommandModule } from "./context.js";
import { readCliEnv } from "./env.js";
import { renderFailure } from "./failure.js";
import { helpOnly } from "./help-main.js";
import { writeAllSync } from "./stdio.js";
import { statusLine, terminalSafe } from "./terminal-safe.js";

const LOADERS: Record<string, () => Promise<CommandModule>> = {
  skill: () => import("./commands/skill.js"),
  resume: () => import("./commands/resume.js"),
  history: () => import("./commands/history.js"),
  verify: () => import("./commands/verify.js"),
  list: () => import("./commands/list.js"),
  init: () => import("./commands/init.js"),
  new: () => import("./commands/new.js"),
  config: () => import("./commands/config.js"),
  credential: () => import("./commands/credential.js"),
  tool: () => import("./commands/tool.js"),
  harness: () => import("./commands/harness.js"),
  kernel: () => import("./commands/kernel.js"),
  parser: () => import("./commands/parser.js"),
  adapter: () => import("./commands/adapter.js"),
  operator: () => import("./commands/operator.js"),
  registry: () => import("./commands/registry.js"),
  add: () => import("./commands/add.js"),
  mcp: () => import("./commands/mcp.js"),
  data: () => import("./commands/data.js"),
};

const INTERRUPT_EXIT = 130;
const CLEANUP_WINDOW_MS = 2000;

/** Runs the CLI with `argv` (without node and script) and exits the process. */
export function main(argv: string[]): void {
  void run(argv).then(
    (code) => {
      // Output is written synchronously, so nothing is pending: exit now rather than wait
      // for the environment's teardown (closing the native SQLite addon alone costs
      // milliseconds), which a short-lived command would otherwise pay on every run.
      process.exitCode = code;
      process.exit();
    },
    (error: unknown) => {
      writeAllSync(2, `runx: internal error: ${String(error)}\n`);
      process.exitCode = 1;
    },
  );
}

async function run(argv: string[]): Promise<number> {
  const json = argv.includes("--json") || argv.includes("-j");
  const write = (fd: number) => (text: string) => writeAllSync(fd, terminalSafe(text));
  const help = helpOnly(argv);
  if (help !== undefined) return help;
  const first = argv[0] ?? "";
  const rest = argv.slice(1);
  const loader = LOADERS[first];
  const entry = COMMANDS.find((c) => c.name === first);
  if (loader === undefined || entry === undefined) {
    const message = `unknown command '${first}' (see runx --help)`;
    renderFailure({ code: "USAGE", message }, { json, out: write(1), err: write(2) });
    return 64;
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
    // A closed terminal (SIGHUP) is an interrupt too: by default Node would exit at once and
    // leave the skill's processes (which lead their own group) running.
    process.on("SIGHUP", onInterrupt);
  } catch {
    writeAllSync(2, "runx: could not install the interrupt handler; refusing to run\n");
    return 70;
  }

  const ctx: CommandContext = {
    env: readCliEnv(),
    signal: controller.signal,
    json,
    // Opened only when a command reads it (creating the stream costs start-up time).
    get stdin() {
      return process.stdin;
    },
    out: write(1),
    err: write(2),
    status: (text) => writeAllSync(2, statusLine(text)),
  };
  const command = await loader();
  const code = await command.run(rest, ctx);
  return controller.signal.aborted ? INTERRUPT_EXIT : code;
}
