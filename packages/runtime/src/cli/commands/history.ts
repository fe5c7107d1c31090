/** `runx history`: list receipts and paused runs, or inspect one with `--detail`. */
import { RuntimeError } from "../../errors.js";
import { flagSet, flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { renderHistoryDetail } from "../history-render.js";
import { styler } from "../render.js";
import { COMMON_FLAGS, cliRuntime } from "../runtime.js";

/** Runs `runx history`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        ...COMMON_FLAGS,
        detail: { value: true },
        limit: { value: true },
        before: { value: true },
        "include-internal": {},
        "include-harness": {},
      },
      { command: "history" },
    );
    expectPositionals(args, 0, "history");
    const limitText = flagValue(args, "limit");
    const limit = limitText === undefined ? 50 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) {
      throw new RuntimeError("USAGE", "--limit must be an integer from 1 to 10000");
    }
    const runtime = cliRuntime(ctx, flagValue(args, "receipt-dir"));
    const s = styler(!ctx.json && ctx.env.color);
    try {
      const detailId = flagValue(args, "detail");
      if (detailId !== undefined) {
        const detail = await runtime.historyDetail(detailId);
        if (ctx.json) ctx.out(`${JSON.stringify(detail)}\n`);
        else ctx.out(renderHistoryDetail(detail, !ctx.json && ctx.env.color));
        return 0;
      }
      const beforeId = flagValue(args, "before");
      let before: { created_at: string; receipt_id: string } | undefined;
      if (beforeId !== undefined) {
        if (!beforeId.startsWith("sha256:")) {
          throw new RuntimeError("USAGE", "--before must name a receipt id (sha256:…)");
        }
        const anchor = await runtime.historyDetail(beforeId);
        if (anchor.kind !== "receipt" || anchor.receipt === null) {
          throw new RuntimeError("USAGE", "--before must name a receipt id (sha256:…)");
        }
        before = { created_at: anchor.receipt.created_at, receipt_id: anchor.receipt.id };
      }
      const showProgress = !ctx.json && ctx.env.stderrIsTTY;
      const listing = await runtime.history({
        limit,
        includeInternal: flagSet(args, "include-internal"),
        includeHarness: flagSet(args, "include-harness"),
        ...(before !== undefined ? { before } : {}),
        ...(showProgress
          ? {
              progress: (done: number, total: number) =>
                ctx.status(
                  done === total ? "" : `runx: rebuilding the receipt index ${done}/${total}…`,
                ),
            }
          : {}),
      });
      if (ctx.json) ctx.out(`${JSON.stringify(listing)}\n`);
      else {
        if (listing.receipts.length === 0) {
          // Harness receipts are hidden by default; say so, or an empty store and a store of
          // harness replays look alike.
          const hidden = flagSet(args, "include-harness")
            ? ""
            : " (receipts of runx harness are listed with --include-harness)";
          ctx.out(`no receipts in ${listing.store_label}${hidden}\n`);
        }
        for (const r of listing.receipts) {
          // An invalid receipt says why; one that no longer decodes has no status or name.
          const v =
            r.verification.status === "invalid"
              ? s.bad(`invalid: ${r.verification.reason ?? "does not verify"}`)
              : s.dim(r.verification.status);
          const status = (r.status ?? "unknown").padEnd(9);
          const name = (r.name ?? "(unreadable)").padEnd(20);
          ctx.out(`${r.created_at}  ${status} ${name} ${r.id.slice(0, 19)}…  ${v}\n`);
        }
        if (listing.pendingRuns.length > 0) {
          ctx.out(`\npaused runs: ${listing.pendingRuns.length}\n`);
          for (const p of listing.pendingRuns)
            ctx.out(`  ${p.id}  ${p.name}  ${p.status}  since ${p.startedAt}\n`);
        }
      }
      return 0;
    } finally {
      runtime.close();
    }
  });
}
