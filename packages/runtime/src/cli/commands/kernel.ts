/** `runx kernel eval --input <file|-> --json`: one deterministic kernel decision. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { RuntimeError } from "../../errors.js";
import { evaluateKernel } from "../../kernel/eval.js";
import type { JsonValue } from "../../parser/json.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";

/** Cap on the decision document (file or stdin). */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

async function readInput(source: string, ctx: CommandContext): Promise<string> {
  if (source === "-") {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.stdin as AsyncIterable<Buffer | string>) {
      const b = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      size += b.length;
      if (size > MAX_INPUT_BYTES)
        throw new RuntimeError("INPUTS_TOO_LARGE", "the kernel input on stdin exceeds 16 MiB");
      chunks.push(b);
    }
    return Buffer.concat(chunks).toString("utf8");
  }
  let data: Buffer;
  try {
    data = await readFile(resolve(ctx.env.workspaceRoot, source));
  } catch {
    throw new RuntimeError("IO_ERROR", "cannot read the kernel input file", { file: source });
  }
  if (data.length > MAX_INPUT_BYTES)
    throw new RuntimeError("INPUTS_TOO_LARGE", "the kernel input file exceeds 16 MiB", {
      file: source,
    });
  return data.toString("utf8");
}

/** Runs `runx kernel`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      { json: { aliases: ["-j"] }, input: { value: true } },
      { command: "kernel" },
    );
    expectPositionals(args, 1, "kernel");
    if (args.positionals[0] !== "eval")
      throw new RuntimeError("USAGE", "usage: runx kernel eval --input <file|-> --json");
    if (!ctx.json) throw new RuntimeError("USAGE", "runx kernel eval requires --json");
    const source = flagValue(args, "input");
    if (source === undefined)
      throw new RuntimeError("USAGE", "runx kernel eval needs --input <file|->");
    const label = source === "-" ? "<stdin>" : source;
    let document: JsonValue;
    try {
      document = JSON.parse(await readInput(source, ctx)) as JsonValue;
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      throw new RuntimeError("INPUTS_DOCUMENT_INVALID", "the kernel input is not valid JSON", {
        file: label,
      });
    }
    const result = evaluateKernel(document);
    ctx.out(`${JSON.stringify({ status: "success", result })}\n`);
    return 0;
  });
}
