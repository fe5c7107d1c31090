/**
 * `runx new <name> [--objective <text>] [--directory dir]`. With an objective it runs the
 * bundled skill-lab package's `build` runner (agent acts propose, native authoring tools
 * write): a configured managed agent drives it to a sealed run, otherwise the run pauses
 * `needs_agent` for `runx resume`. Without one it writes the fixed starting package.
 */
import { envelopeExitCode } from "../../contracts/envelope.js";
import { RuntimeError } from "../../errors.js";
import { checkNewSkill, officialSkillDir, scaffoldSkill } from "../../scaffold.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { renderEnvelope } from "../render.js";
import { COMMON_FLAGS, cliRuntime } from "../runtime.js";

/** Runs skill-lab for a checked request and renders its envelope as `runx skill` does. */
async function runSkillLab(
  ctx: CommandContext,
  request: { name: string; objective: string; targetDir: string },
  receiptDir: string | undefined,
): Promise<number> {
  const runtime = cliRuntime(ctx, receiptDir);
  try {
    const envelope = await runtime.runSkill(
      {
        ref: officialSkillDir("skill-lab"),
        runner: "build",
        inputs: {
          objective: { value: request.objective },
          package_name: { value: request.name },
          target_dir: { value: request.targetDir },
          repo_root: { value: "." },
        },
        secretEnv: [],
        origin: { via: "cli" },
      },
      { signal: ctx.signal },
    );
    ctx.out(ctx.json ? `${JSON.stringify(envelope)}\n` : renderEnvelope(envelope, ctx.env.color));
    return envelopeExitCode(envelope);
  } finally {
    runtime.close();
  }
}

/** Runs `runx new`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        ...COMMON_FLAGS,
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
        "runx new needs a skill name: runx new <name> [--objective <text>]",
        { field: "name" },
      );
    }
    const objective = flagValue(args, "objective");
    const directory = flagValue(args, "directory");
    const options = {
      name,
      workspaceRoot: ctx.env.workspaceRoot,
      ...(objective !== undefined ? { objective } : {}),
      ...(directory !== undefined ? { directory } : {}),
    };
    if (objective !== undefined) {
      const checked = await checkNewSkill(options);
      return runSkillLab(
        ctx,
        {
          name: checked.name,
          objective: checked.objective ?? objective,
          targetDir: checked.targetDir,
        },
        flagValue(args, "receipt-dir"),
      );
    }
    const result = await scaffoldSkill(options);
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
