/** `runx init [-g]`. */
import { flagSet, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { cliRuntime } from "../runtime.js";

/** Runs `runx init`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      { json: { aliases: ["-j"] }, global: { aliases: ["-g"] } },
      { command: "init" },
    );
    expectPositionals(args, 0, "init");
    const result = await cliRuntime(ctx).init({ global: flagSet(args, "global") });
    if (ctx.json) ctx.out(`${JSON.stringify(result)}\n`);
    else {
      for (const c of result.created) ctx.out(`created ${c}\n`);
      for (const e of result.existing) ctx.out(`exists  ${e}\n`);
      ctx.out(`runx ${result.scope} initialised\n`);
    }
    return 0;
  });
}
