/**
 * `runx operator add <username> --role <viewer|approver|admin>`: creates a console operator.
 * The password is read from stdin (one line; never a flag, never echoed: a terminal is put
 * in raw mode while it is typed).
 */
import { consoleInput } from "../../console/validate.js";
import { RuntimeError } from "../../errors.js";
import { flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { cliFullRuntime } from "../runtime.js";

const MAX_PASSWORD_BYTES = 1024;

/** Reads one line from stdin without echoing it on a terminal. */
async function readSecretLine(ctx: CommandContext): Promise<string> {
  const stdin = ctx.stdin as NodeJS.ReadStream;
  const tty = stdin.isTTY === true && typeof stdin.setRawMode === "function";
  if (tty) {
    ctx.err("password: ");
    stdin.setRawMode(true);
  }
  try {
    let text = "";
    for await (const chunk of stdin as AsyncIterable<Buffer | string>) {
      text += typeof chunk === "string" ? chunk : chunk.toString("utf8");
      if (tty && text.includes("\u0003")) throw new RuntimeError("INTERRUPTED", "cancelled");
      if (/[\r\n]/.test(text) || Buffer.byteLength(text) > MAX_PASSWORD_BYTES) break;
    }
    const line = text.split(/\r?\n|\r/)[0] ?? "";
    if (Buffer.byteLength(line) > MAX_PASSWORD_BYTES) {
      throw new RuntimeError("INPUT_INVALID", "password: longer than 1024 bytes", {
        path: "password",
      });
    }
    return line;
  } finally {
    if (tty) {
      stdin.setRawMode(false);
      stdin.pause();
      ctx.err("\n");
    }
  }
}

/** Runs `runx operator`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      { json: { aliases: ["-j"] }, role: { value: true } },
      { command: "operator" },
    );
    expectPositionals(args, 2, "operator");
    const [sub, username] = args.positionals;
    if (sub !== "add" || username === undefined) {
      throw new RuntimeError("USAGE", "usage: runx operator add <username> --role <role>", {
        path: "operator",
      });
    }
    const input = consoleInput("operator-add", {
      username,
      role: flagValue(args, "role") ?? "",
      password: await readSecretLine(ctx),
    });
    const operator = await (await cliFullRuntime(ctx)).console.operators.add(input);
    if (ctx.json) ctx.out(`${JSON.stringify(operator)}\n`);
    else ctx.out(`operator ${operator.username} (${operator.role}) created\n`);
    return 0;
  });
}
