/** `runx parser eval --input <request.json|->`: parser requests answered in upstream's IR form. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { RuntimeError } from "../../errors.js";
import { evaluateParserRequest } from "../../parser-eval/eval.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";

/** Request size cap (a request carries whole documents). */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

async function readRequest(source: string, ctx: CommandContext): Promise<string> {
  if (source === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.stdin as AsyncIterable<Buffer | string>) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > MAX_REQUEST_BYTES)
        throw new RuntimeError("INPUTS_TOO_LARGE", "the parser request on stdin exceeds 10 MiB");
      chunks.push(b);
    }
    return Buffer.concat(chunks).toString("utf8");
  }
  let data: Buffer;
  try {
    data = await readFile(resolve(ctx.env.workspaceRoot, source));
  } catch {
    throw new RuntimeError("IO_ERROR", "cannot read the parser request file", { file: source });
  }
  if (data.length > MAX_REQUEST_BYTES)
    throw new RuntimeError("INPUTS_TOO_LARGE", "the parser request file exceeds 10 MiB", {
      file: source,
    });
  return data.toString("utf8");
}

/** Runs `runx parser <action>`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      { json: { aliases: ["-j"] }, input: { value: true } },
      { command: "parser" },
    );
    const action = args.positionals[0];
    if (action !== "eval")
      throw new RuntimeError(
        "USAGE",
        action === undefined
          ? "missing action for 'runx parser' (expected: eval)"
          : `unknown action '${action}' for 'runx parser' (expected: eval)`,
      );
    expectPositionals(args, 1, "parser eval");
    const input = flagValue(args, "input");
    if (input === undefined)
      throw new RuntimeError("USAGE", "runx parser eval needs --input <request.json|->");
    const answer = evaluateParserRequest(await readRequest(input, ctx));
    // The answer is a data document in both modes; --json prints it on one line.
    ctx.out(ctx.json ? `${JSON.stringify(answer)}\n` : `${JSON.stringify(answer, null, 2)}\n`);
    return answer.status === "success" ? 0 : 1;
  });
}
