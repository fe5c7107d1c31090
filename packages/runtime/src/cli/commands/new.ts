/** `runx new <name> --objective <text> [--directory dir]`. */
import { RuntimeError } from "../../errors.js";
import { scaffoldSkill } from "../../scaffold.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";

/** Runs `runx new`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        json: { aliases: ["-j"] },
        objective: { value: true },
        directory: { value: true },
      },
      { command: "new" },
    );
    expectPositionals(args, 1, "new");
    const name = args.positionals[0];
    if (name === undefined) {
      throw new RuntimeError(
        "USAGE",
        "runx new needs a skill name: runx new <name> --objective <text>",
        {
          field: "name",
        },
      );
    }
    const objective = flagValue(args, "objective");
    if (objective === undefined) {
      throw new RuntimeError("USAGE", "runx new needs --objective <text>: what the skill is for", {
        field: "objective",
      });
    }
    const directory = flagValue(args, "directory");
    const result = await scaffoldSkill({
      name,
      objective,
      workspaceRoot: ctx.env.workspaceRoot,
      ...(directory !== undefined ? { directory } : {}),
    });
    if (ctx.json) {
      ctx.out(
        `${JSON.stringify({
          status: "success",
          new: {
            action: "skill",
            name: result.name,
            directory: result.directory,
            files: result.files,
            next_steps: result.next_steps,
          },
        })}\n`,
      );
    } else {
      ctx.out(`created skill ${result.name} in ${result.directory}\n`);
      for (const file of result.files) ctx.out(`  ${file}\n`);
      ctx.out(`next: ${result.next_steps.join(" && ")}\n`);
    }
    return 0;
  });
}
