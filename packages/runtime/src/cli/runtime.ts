/** Builds the runtime for a CLI command from the CLI environment. */
import type { Runtime } from "../create-runtime.js";
import { createRuntimeCore } from "../runtime-core.js";
import type { CoreRuntime, RuntimeOptions } from "../runtime-core-types.js";
import type { FlagSpec } from "./args.js";
import type { CommandContext } from "./context.js";

function cliOptions(
  ctx: CommandContext,
  receiptDir?: string,
  registryDir?: string,
): RuntimeOptions {
  return {
    workspaceRoot: ctx.env.workspaceRoot,
    runxHome: ctx.env.runxHome,
    receiptDir,
    registryDir,
    env: ctx.env.processEnv,
    workspaceEnv: ctx.env.workspace.env,
    dotenvNames: ctx.env.workspace.fromDotenv,
    readStdin: () => ctx.stdin as AsyncIterable<Uint8Array | string>,
    // main() exits the process once the command returns.
    releaseStateAtExit: true,
  };
}

/**
 * The runtime core for this invocation (optionally with an explicit receipt directory): runs,
 * resumes, history, verification, harness, init. Its start-up loads nothing else.
 */
export function cliRuntime(
  ctx: CommandContext,
  receiptDir?: string,
  registryDir?: string,
): CoreRuntime {
  return createRuntimeCore(cliOptions(ctx, receiptDir, registryDir)).runtime;
}

/** The whole runtime (console, adapter, registry services too), loaded on demand. */
export async function cliFullRuntime(
  ctx: CommandContext,
  receiptDir?: string,
  registryDir?: string,
): Promise<Runtime> {
  const { createRuntime } = await import("../create-runtime.js");
  return createRuntime(cliOptions(ctx, receiptDir, registryDir));
}

/** `--registry-dir <dir>` and its `--registry <path|file://…>` spelling. */
export const REGISTRY_FLAGS: Record<string, FlagSpec> = {
  "registry-dir": { value: true },
  registry: { value: true },
};

/** The registry directory the flags name, if any (`--registry-dir` wins). */
export function registryDirFlag(flags: ReadonlyMap<string, string[] | true>): string | undefined {
  const pick = (name: string): string | undefined => {
    const v = flags.get(name);
    return Array.isArray(v) ? v[0] : undefined;
  };
  return pick("registry-dir") ?? pick("registry");
}

/** The shared `--json` and `--receipt-dir` flag specs. */
export const COMMON_FLAGS: Record<string, FlagSpec> = {
  json: { aliases: ["-j"] },
  "receipt-dir": { value: true, aliases: ["-R", "--receipts"] },
};
