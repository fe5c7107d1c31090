/** `runx skill`: parse → one runtime call → render. */
import { RuntimeError } from "../../errors.js";
import { parseInputFlags } from "../../parser/inputs.js";
import { envelopeExitCode } from "../../contracts/envelope.js";
import { flagSet, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { renderEnvelope } from "../render.js";
import { COMMON_FLAGS, REGISTRY_FLAGS, cliRuntime, registryDirFlag } from "../runtime.js";

/** Runs `runx skill`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  if (tokens[0] === "inspect") {
    const inspect = await import("./skill-inspect.js");
    return inspect.run(tokens.slice(1), ctx);
  }
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        ...COMMON_FLAGS,
        "secret-env": { value: true, repeatable: true },
        profile: { value: true },
        "package-digest": { value: true },
        "execution-closure-digest": { value: true },
        "non-interactive": {},
        "allow-spawn": {},
        ...REGISTRY_FLAGS,
        digest: { value: true },
      },
      { passThrough: true, command: "skill" },
    );
    const parsed = parseInputFlags(args.rest);
    const [ref, runner, extra] = parsed.positionals;
    if (ref === undefined) throw new RuntimeError("USAGE", "runx skill needs a skill reference");
    if (extra !== undefined)
      throw new RuntimeError("USAGE", `unexpected argument '${extra}' for 'runx skill'`);
    if (
      flagValue(args, "execution-closure-digest") !== undefined &&
      flagValue(args, "package-digest") === undefined
    ) {
      throw new RuntimeError("USAGE", "--execution-closure-digest needs --package-digest");
    }
    const secretEnv = args.flags.get("secret-env");
    const runtime = cliRuntime(ctx, flagValue(args, "receipt-dir"), registryDirFlag(args.flags));
    const registryDigest = flagValue(args, "digest");
    const profile = flagValue(args, "profile");
    const showProgress = !ctx.json && ctx.env.stderrIsTTY;
    if (showProgress)
      ctx.status(`runx: running ${ref}${runner !== undefined ? ` (${runner})` : ""}…`);
    try {
      const packageDigest = flagValue(args, "package-digest");
      const executionClosureDigest = flagValue(args, "execution-closure-digest");
      const envelope = await runtime.runSkill(
        {
          ref,
          ...(runner !== undefined ? { runner } : {}),
          inputs: parsed.inputs,
          ...(parsed.inputsFile !== undefined ? { inputsFile: parsed.inputsFile } : {}),
          secretEnv: Array.isArray(secretEnv) ? secretEnv : [],
          ...(packageDigest !== undefined ? { packageDigest } : {}),
          ...(executionClosureDigest !== undefined ? { executionClosureDigest } : {}),
          ...(flagSet(args, "allow-spawn") ? { allowSpawn: true } : {}),
          ...(registryDigest !== undefined ? { registryDigest } : {}),
          origin: { via: "cli" },
          ...(profile !== undefined ? { profile } : {}),
        },
        { signal: ctx.signal },
      );
      if (showProgress) ctx.status("");
      ctx.out(ctx.json ? `${JSON.stringify(envelope)}\n` : renderEnvelope(envelope, ctx.env.color));
      return envelopeExitCode(envelope);
    } finally {
      runtime.close();
    }
  });
}
