/** `runx parser eval --input <request.json|->`: parser requests answered in upstream's IR form. */
import { RuntimeError } from "../../errors.js";
import { evaluateParserRequest } from "../../parser-eval/eval.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { readDocumentInput } from "../read-document.js";

/** The request document (file or stdin; a request carries whole documents) and its cap. */
const PARSER_REQUEST = { what: "the parser request", maxBytes: 10 * 1024 * 1024 };

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
    const answer = evaluateParserRequest(await readDocumentInput(input, ctx, PARSER_REQUEST));
    // The answer is a data document in both modes; --json prints it on one line.
    ctx.out(ctx.json ? `${JSON.stringify(answer)}\n` : `${JSON.stringify(answer, null, 2)}\n`);
    return answer.status === "success" ? 0 : 1;
  });
}
