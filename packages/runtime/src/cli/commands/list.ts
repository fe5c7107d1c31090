/** `runx list skills`. */
import { RuntimeError } from "../../errors.js";
import { flagSet, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { styler } from "../render.js";
import { cliRuntime } from "../runtime.js";

/** Runs `runx list`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      { json: { aliases: ["-j"] }, "ok-only": {}, "invalid-only": {} },
      { command: "list" },
    );
    expectPositionals(args, 1, "list");
    const what = args.positionals[0] ?? "skills";
    if (what !== "skills")
      throw new RuntimeError(
        "USAGE",
        `runx list ${what}: only 'skills' can be listed in this release`,
      );
    const listing = await cliRuntime(ctx).listSkills();
    const items = listing.items.filter(
      (i) =>
        (!flagSet(args, "ok-only") || i.status === "ok") &&
        (!flagSet(args, "invalid-only") || i.status === "invalid"),
    );
    if (ctx.json) ctx.out(`${JSON.stringify({ items })}\n`);
    else {
      const s = styler(ctx.env.color);
      if (items.length === 0) ctx.out("no skill packages under skills/\n");
      for (const i of items) {
        if (i.status === "ok") {
          const runners = i.runners.map((r) => `${r.name}:${r.type}`).join(", ");
          ctx.out(`${s.ok("ok")}       ${i.name.padEnd(20)} ${i.path.padEnd(28)} ${runners}\n`);
          if (i.description !== null) ctx.out(`         ${s.dim(i.description)}\n`);
        } else {
          ctx.out(`${s.bad("invalid")}  ${i.name.padEnd(20)} ${i.path}\n`);
          for (const d of i.diagnostics) {
            const at =
              d.file !== undefined
                ? `${d.file}${d.line !== undefined ? `:${d.line}:${d.column ?? 1}` : ""}: `
                : "";
            ctx.out(
              `         ${at}${d.path !== undefined ? `${d.path}: ` : ""}${d.message} [${d.code}]\n`,
            );
          }
        }
      }
    }
    return 0;
  });
}
