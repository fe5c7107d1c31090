/** `runx adapter list|trust|attempts|cancel`: parse → one runtime call → render. */
import { RuntimeError } from "../../errors.js";
import { flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { COMMON_FLAGS, cliFullRuntime } from "../runtime.js";

/** Runs `runx adapter`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(tokens, { ...COMMON_FLAGS }, { command: "adapter" });
    const [action, target, extra] = args.positionals;
    if (extra !== undefined)
      throw new RuntimeError("USAGE", `unexpected argument '${extra}' for 'runx adapter'`);
    const needs = (what: string): string => {
      if (target === undefined)
        throw new RuntimeError("USAGE", `runx adapter ${action ?? ""} needs ${what}`);
      return target;
    };
    const runtime = await cliFullRuntime(ctx, flagValue(args, "receipt-dir"));
    try {
      const print = (value: unknown, text: string): void =>
        ctx.out(ctx.json ? `${JSON.stringify(value)}\n` : text);
      switch (action) {
        case "list": {
          const items = runtime.adapters.list();
          print(
            { adapters: items },
            items.length === 0
              ? "no adapters in adapters/\n"
              : items
                  .map(
                    (a) =>
                      `${a.id.padEnd(20)} ${a.trust}${a.problem !== null ? `  ${a.problem}` : ""}\n`,
                  )
                  .join(""),
          );
          return 0;
        }
        case "trust": {
          const record = runtime.adapters.trust(needs("an adapter id"));
          print(
            record,
            `trusted ${record.id} at ${record.definition_digest} (${record.payload_files.length} payload files)\n`,
          );
          return 0;
        }
        case "attempts": {
          const attempts = await runtime.adapters.attempts(needs("a run id"));
          print(
            { attempts },
            attempts.length === 0
              ? "no dispatch attempts\n"
              : attempts
                  .map(
                    (a) =>
                      `${a.dispatch.step_id}#${a.dispatch.attempt} ${a.dispatch.status}${a.dispatch.failure !== null ? ` ${a.dispatch.failure.code}` : ""} receipt ${a.receipt_id}${a.verified ? "" : " (NOT VERIFIED)"}\n`,
                  )
                  .join(""),
          );
          return 0;
        }
        case "cancel": {
          const result = runtime.adapters.cancel(needs("a run id"));
          print(result, `cancel requested for ${result.run_id}\n`);
          return 0;
        }
        default:
          throw new RuntimeError(
            "USAGE",
            "runx adapter needs list, trust <id>, attempts <run-id> or cancel <run-id>",
          );
      }
    } finally {
      runtime.close();
    }
  });
}
