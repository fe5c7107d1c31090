/** `runx kernel eval --input <file|-> --json`: one deterministic kernel decision. */
import { RuntimeError } from "../../errors.js";
import { evaluateKernel } from "../../kernel/eval.js";
import type { JsonValue } from "../../parser/json.js";
import { parseBoundedJson } from "../../parser/nesting.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { readDocumentInput } from "../read-document.js";

/** The decision document (file or stdin) and its cap. */
/** Upstream evaluates documents of at most 1 MiB. */
const KERNEL_INPUT = { what: "the kernel input", maxBytes: 1024 * 1024 };

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
      // Bounded before the kernel's evaluators walk it (they recurse).
      document = parseBoundedJson(await readDocumentInput(source, ctx, KERNEL_INPUT), {
        file: label,
      }) as JsonValue;
    } catch (error) {
      if (error instanceof RuntimeError) throw error;
      throw new RuntimeError("INPUTS_DOCUMENT_INVALID", "the kernel input is not valid JSON", {
        file: label,
      });
    }
    // Upstream's eval surfaces wrap a decision as a typed result (`parser eval` does too).
    const result = { kind: "output", value: evaluateKernel(document) };
    ctx.out(`${JSON.stringify({ status: "success", result })}\n`);
    return 0;
  });
}
