/** Builds the runtime for a CLI command from the CLI environment. */
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import type { FlagSpec } from "./args.js";
import type { CommandContext } from "./context.js";

/** A runtime for this invocation (optionally with an explicit receipt directory). */
export function cliRuntime(ctx: CommandContext, receiptDir?: string): Runtime {
  return createRuntime({
    workspaceRoot: ctx.env.workspaceRoot,
    runxHome: ctx.env.runxHome,
    receiptDir,
    env: ctx.env.processEnv,
    readStdin: () => ctx.stdin as AsyncIterable<Uint8Array | string>,
  });
}

/** The shared `--json` and `--receipt-dir` flag specs. */
export const COMMON_FLAGS: Record<string, FlagSpec> = {
  json: { aliases: ["-j"] },
  "receipt-dir": { value: true, aliases: ["-R", "--receipts"] },
};
