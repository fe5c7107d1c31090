/** `runx kernel eval --input <file|-> --json`: one deterministic kernel decision. */
import { RuntimeError } from "../../errors.js";
import { evaluateKernel } from "../../kernel/eval.js";
import type { JsonValue } from "../../parser/json.js";
import { parseBoundedJson } from "../../parser/nesting.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { renderFailure, toFailure } from "../failure.js";
import { readDocumentInput } from "../read-document.js";

/** The decision document (file or stdin) and its cap. */
/** Upstream evaluates documents of at most 1 MiB. */
const KERNEL_INPUT = { what: "the kernel input", maxBytes: 1024 * 1024 };

/**
 * Upstream's kernel surface prints its own failure envelope: exactly `{status: "failure",
 * error: {code, message}}` with codes invalid_args (exit 64), read_input / read_stdin,
 * invalid_document (not JSON) and invalid_input (the document does not evaluate), all exit 1.
 */
function kernelFailure(error: unknown, source: string | undefined): [string, string, number] {
  const failure = toFailure(error);
  const details = failure.details ?? {};
  const detail = typeof details.detail === "string" ? details.detail : undefined;
  const path = typeof details.path === "string" ? details.path : "";
  switch (failure.code) {
    case "USAGE":
      return ["invalid_args", failure.message, 64];
    case "INPUTS_DOCUMENT_INVALID":
      return ["invalid_document", failure.message, 1];
    case "NESTING_TOO_DEEP":
      return ["invalid_input", `kernel eval input exceeds JSON depth: ${failure.message}`, 1];
    case "KERNEL_EVALUATION_FAILED": {
      const message = detail ?? failure.message;
      // The field stays named, as upstream's deserializer names it.
      const located = path === "" || path.endsWith("kind") ? message : `${path}: ${message}`;
      return ["invalid_input", located, 1];
    }
    case "IO_ERROR":
    case "FILE_TOO_LARGE":
    case "INPUTS_TOO_LARGE": {
      const cause = typeof details.cause === "string" ? ` (${details.cause})` : "";
      const code = source === "-" ? "read_stdin" : "read_input";
      return [code, `failed to read kernel input ${failure.message}${cause}`, 1];
    }
    default:
      return ["", "", 0];
  }
}

/** Runs `runx kernel`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  let source: string | undefined;
  try {
    return await evaluate(tokens, ctx, (s) => (source = s));
  } catch (error) {
    const [code, message, exit] = kernelFailure(error, source);
    if (code === "") return renderFailure(toFailure(error), ctx);
    if (!ctx.json) {
      ctx.err(`runx: ${message}\n`);
      return exit;
    }
    ctx.out(`${JSON.stringify({ status: "failure", error: { code, message } })}\n`);
    return exit;
  }
}

async function evaluate(
  tokens: string[],
  ctx: CommandContext,
  noteSource: (source: string) => void,
): Promise<number> {
  const args = parseArgs(
    tokens,
    { json: { aliases: ["-j"] }, input: { value: true } },
    { command: "kernel" },
  );
  expectPositionals(args, 1, "kernel");
  if (args.positionals[0] !== "eval")
    throw new RuntimeError("USAGE", `unknown kernel subcommand ${args.positionals[0]}`);
  if (!ctx.json) throw new RuntimeError("USAGE", "runx kernel eval requires --json");
  const source = flagValue(args, "input");
  if (source === undefined)
    throw new RuntimeError("USAGE", "runx kernel eval requires --input <file|->");
  noteSource(source);
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
}
