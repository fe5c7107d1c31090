/** `runx harness <package-dir|SKILL.md|fixture.yaml>…`: parse → one harness call → render. */
import { RuntimeError } from "../../errors.js";
import type { HarnessReport } from "../../harness/index.js";
import type { CaseResult } from "../../harness/run-case.js";
import { flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { styler } from "../render.js";
import { COMMON_FLAGS, cliRuntime } from "../runtime.js";

function render(report: HarnessReport, cases: CaseResult[], color: boolean): string {
  const s = styler(color);
  const lines = cases.map((c) => {
    if (c.errors.length === 0) return `${s.ok("✓")} ${c.name}`;
    const first = c.errors[0] ?? "";
    const more = c.errors.length > 1 ? s.dim(` (+${c.errors.length - 1} more)`) : "";
    return `${s.bad("✗")} ${c.name}\n    ${first}${more}`;
  });
  const verdict = report.status === "passed" ? s.ok("passed") : s.bad("failed");
  lines.push(
    `${verdict}: ${report.case_count} case(s), ${report.assertion_error_count} assertion error(s)`,
  );
  return `${lines.join("\n")}\n`;
}

/** Runs `runx harness`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(tokens, COMMON_FLAGS, { command: "harness" });
    if (args.positionals.length === 0) {
      throw new RuntimeError(
        "USAGE",
        "runx harness needs a package directory, SKILL.md or fixture file",
      );
    }
    const runtime = cliRuntime(ctx, flagValue(args, "receipt-dir"));
    try {
      // A progress line on a terminal (never with --json): cases can take a while each.
      const progress = !ctx.json && ctx.env.stderrIsTTY;
      let finished = 0;
      const { report, cases } = await runtime.harness({
        targets: args.positionals,
        signal: ctx.signal,
        ...(progress
          ? {
              onCase: (c: CaseResult) => {
                finished += 1;
                const mark = c.errors.length === 0 ? "✓" : "✗";
                ctx.status(`runx harness: ${finished} case(s) done, last ${mark} ${c.name}`);
              },
            }
          : {}),
      });
      if (progress && finished > 0) ctx.status("");
      if (!ctx.json) ctx.out(render(report, cases, ctx.env.color));
      // A single standalone fixture that passed prints its sealed receipt (runx.receipt.v1);
      // packages, several targets and any failure print the report with its assertion errors.
      else if (report.status === "passed" && report.receipt !== undefined)
        ctx.out(`${JSON.stringify(report.receipt)}\n`);
      else ctx.out(`${JSON.stringify(report)}\n`);
      return report.status === "passed" ? 0 : 1;
    } finally {
      runtime.close();
    }
  });
}
