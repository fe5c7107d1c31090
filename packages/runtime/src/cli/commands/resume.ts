/** `runx resume <run-id> <answers.json|->`: parse → one runtime call → render. */
import { RuntimeError } from "../../errors.js";
import { envelopeExitCode } from "../../contracts/envelope.js";
import { flagSet, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { renderEnvelope } from "../render.js";
import { COMMON_FLAGS, cliRuntime } from "../runtime.js";

/** Runs `runx resume`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        ...COMMON_FLAGS,
        "package-digest": { value: true },
        "execution-closure-digest": { value: true },
        "non-interactive": {},
        "allow-spawn": {},
      },
      { command: "resume" },
    );
    const [runId, source, extra] = args.positionals;
    if (runId === undefined || source === undefined) {
      throw new RuntimeError(
        "USAGE",
        "runx resume needs a run id and an answers file (or - for stdin)",
      );
    }
    if (extra !== undefined)
      throw new RuntimeError("USAGE", `unexpected argument '${extra}' for 'runx resume'`);
    const runtime = cliRuntime(ctx, flagValue(args, "receipt-dir"));
    try {
      const packageDigest = flagValue(args, "package-digest");
      const closureDigest = flagValue(args, "execution-closure-digest");
      const envelope = await runtime.resume(
        {
          runId,
          source,
          ...(packageDigest !== undefined ? { packageDigest } : {}),
          ...(closureDigest !== undefined ? { executionClosureDigest: closureDigest } : {}),
          ...(flagSet(args, "allow-spawn") ? { allowSpawn: true } : {}),
          origin: { via: "cli" },
        },
        { signal: ctx.signal },
      );
      ctx.out(ctx.json ? `${JSON.stringify(envelope)}\n` : renderEnvelope(envelope, ctx.env.color));
      return envelopeExitCode(envelope);
    } finally {
      runtime.close();
    }
  });
}
