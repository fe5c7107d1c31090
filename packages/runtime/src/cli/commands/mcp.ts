/** `runx mcp serve <skill…> [--http [--host h] [--port n]]`: parse → load tools → serve. */
import { RuntimeError } from "../../errors.js";
import { flagSet, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { REGISTRY_FLAGS, cliFullRuntime, registryDirFlag } from "../runtime.js";
import { RUNX_VERSION } from "../version.js";

const DEFAULT_PORT = 8765;

/** Runs `runx mcp`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        "receipt-dir": { value: true, aliases: ["-R", "--receipts"] },
        runner: { value: true },
        http: {},
        host: { value: true },
        port: { value: true },
        "allow-non-loopback": {},
        ...REGISTRY_FLAGS,
      },
      { command: "mcp" },
    );
    const [action, ...refs] = args.positionals;
    if (action !== "serve") {
      throw new RuntimeError(
        "USAGE",
        action === undefined
          ? "runx mcp needs an action: serve"
          : `unknown action 'runx mcp ${action}'; use serve`,
      );
    }
    const http = flagSet(args, "http");
    const host = flagValue(args, "host");
    const portText = flagValue(args, "port");
    if (
      !http &&
      (host !== undefined || portText !== undefined || flagSet(args, "allow-non-loopback"))
    ) {
      throw new RuntimeError("USAGE", "--host, --port and --allow-non-loopback need --http");
    }
    const port = portText === undefined ? DEFAULT_PORT : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
      throw new RuntimeError("USAGE", "--port must be an integer between 0 and 65535");
    }
    const receiptDir = flagValue(args, "receipt-dir");
    const runner = flagValue(args, "runner");
    const runtime = await cliFullRuntime(ctx, receiptDir, registryDirFlag(args.flags));
    try {
      // Loaded on demand: only this command needs the MCP SDK.
      const { loadMcpTools, serveHttp, serveStdio } = await import("../../mcp/server.js");
      const tools = await loadMcpTools(runtime, refs, runner !== undefined ? { runner } : {});
      const common = {
        version: RUNX_VERSION,
        signal: ctx.signal,
        ...(receiptDir !== undefined ? { receiptDir } : {}),
      };
      ctx.err(`runx MCP serving ${tools.map((t) => t.name).join(", ")}\n`);
      if (http) {
        await serveHttp(runtime, tools, {
          ...common,
          host: host ?? "127.0.0.1",
          port,
          allowNonLoopback: flagSet(args, "allow-non-loopback"),
          log: (line) => ctx.err(`${line}\n`),
        });
      } else {
        await serveStdio(runtime, tools, common);
      }
      return ctx.signal.aborted ? 130 : 0;
    } finally {
      runtime.close();
    }
  });
}
