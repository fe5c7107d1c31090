/** `runx history`: list receipts and paused runs, or inspect one with `--detail`. */
import { RuntimeError } from "../../errors.js";
import { flagSet, flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
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
        else {
          if (detail.run !== null) {
            const r = detail.run;
            ctx.out(
              `run ${r.id}\n  skill: ${r.skillName} (runner ${r.runner})\n  status: ${r.status}${r.disposition !== null ? ` / ${r.disposition}` : ""}\n  package_digest: ${r.packageDigest}\n  created_at: ${r.createdAt}\n`,
            );
            if (r.result !== null) ctx.out(`  result: ${JSON.stringify(r.result)}\n`);
            if (r.requests !== null) ctx.out(`  requests: ${JSON.stringify(r.requests)}\n`);
            for (const step of detail.steps)
              ctx.out(
                `  step ${step.stepId}: ${step.status}${step.receiptId !== null ? ` ${step.receiptId}` : ""}\n`,
              );
          }
          if (detail.receipt !== null) {
            const rc = detail.receipt;
            ctx.out(
              `receipt ${rc.id}\n  verification: ${detail.verification?.status ?? "-"}\n  seal: ${rc.seal.disposition} (${rc.seal.reason_code}) ${rc.seal.summary}\n  created_at: ${rc.created_at}\n  issuer: ${rc.issuer.type}/${rc.issuer.kid}\n  children: ${rc.lineage?.children.length ?? 0}\n`,
            );
          }
        }
        return 0;
      }
      const listing = await runtime.history({
        limit,
        includeInternal: flagSet(args, "include-internal"),
        includeHarness: flagSet(args, "include-harness"),
      });
      if (ctx.json) ctx.out(`${JSON.stringify(listing)}\n`);
      else {
        if (listing.receipts.length === 0) ctx.out(`no receipts in ${listing.store_label}\n`);
        for (const r of listing.receipts) {
          const v =
            r.verification.status === "invalid"
              ? s.bad(r.verification.status)
              : s.dim(r.verification.status);
          ctx.out(
            `${r.created_at}  ${r.status.padEnd(9)} ${r.name.padEnd(20)} ${r.id.slice(0, 19)}…  ${v}\n`,
          );
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
