/**
 * `runx verify`: tree mode over the receipt store (on every core, per-receipt problems
 * printed as they are found), the trees touching a `--since`/`--until` window, one run's
 * tree with `--run` (reading only its receipts), or one receipt with `--receipt`.
 */
import { resolve } from "node:path";
import { RuntimeError } from "../../errors.js";
import { readFilePieces } from "../../packages/read-capped.js";
import { flagSet, flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { readDocumentInput } from "../read-document.js";
import { styler } from "../render.js";
import { COMMON_FLAGS, cliRuntime } from "../runtime.js";
import type { FileCheck } from "../../receipts/stored-receipt.js";
import { isTreeFinding } from "../../receipts/verify.js";
import { parseRangeBound } from "../../services/verify-store.js";
import type { CreatedRange } from "../../services/verify-store.js";

/** `verify --receipt` input cap. */
const MAX_RECEIPT_BYTES = 10 * 1024 * 1024;

/** Runs `runx verify`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        ...COMMON_FLAGS,
        receipt: { value: true },
        bundle: { value: true },
        run: { value: true },
        since: { value: true },
        until: { value: true },
        "allow-local-development-signatures": {},
      },
      { command: "verify" },
    );
    expectPositionals(args, 1, "verify");
    const allowLocalDevelopment = flagSet(args, "allow-local-development-signatures");
    const runtime = cliRuntime(ctx, flagValue(args, "receipt-dir"));
    const s = styler(!ctx.json && ctx.env.color);
    const single = flagValue(args, "receipt");
    // Reading a large store takes a while: a TTY sees how far it got (never --json output).
    const showProgress = !ctx.json && ctx.env.stderrIsTTY;
    let shown = 0;
    const readProgress = (done: number, total: number): void => {
      const now = Date.now();
      if (done !== total && now - shown < 100) return;
      shown = now;
      ctx.status(`runx verify: checked ${done}/${total} receipts…`);
    };
    if (single !== undefined) {
      const verdict = runtime.verifyReceipt(
        await readDocumentInput(single, ctx, { what: "the receipt", maxBytes: MAX_RECEIPT_BYTES }),
        {
          allowLocalDevelopment,
        },
      );
      if (ctx.json) ctx.out(`${JSON.stringify(verdict)}\n`);
      else {
        ctx.out(
          `${verdict.valid ? s.ok("valid") : s.bad("invalid")} ${verdict.receipt_id ?? "(unreadable)"}\n`,
        );
        ctx.out(
          `  digest: ${verdict.digest.status}  content_address: ${verdict.content_address.status}  signature: ${verdict.signature.status} (${verdict.signature.mode})\n`,
        );
        for (const f of verdict.findings) ctx.out(`  - ${f.code} at ${f.path}: ${f.message}\n`);
      }
      return verdict.valid ? 0 : 3;
    }
    const rootId = args.positionals[0];
    const bundle = flagValue(args, "bundle");
    const runId = flagValue(args, "run");
    if (runId !== undefined && (bundle !== undefined || rootId !== undefined)) {
      throw new RuntimeError("USAGE", "--run takes no receipt id and no --bundle");
    }
    const range = rangeOf(flagValue(args, "since"), flagValue(args, "until"));
    if (range !== undefined && (runId !== undefined || bundle !== undefined)) {
      throw new RuntimeError("USAGE", "--since and --until take no --run and no --bundle");
    }
    // Per-receipt problems are printed as soon as they are found (the trees come after).
    const streamed = (check: FileCheck): void => {
      if ("unreadable" in check) {
        ctx.out(`${s.bad("✗")} ${check.file_name}: ${check.unreadable}\n`);
        return;
      }
      for (const f of check.findings) {
        ctx.out(`${s.bad("✗")} ${check.file_name}: ${f.code} at ${f.path}: ${f.message}\n`);
      }
    };
    const report =
      runId !== undefined
        ? await runtime.verifyRun(runId, { allowLocalDevelopment })
        : bundle !== undefined
          ? // Read as it is verified, a piece at a time: a bundle has no size cap.
            await runtime.verifyBundle(
              bundle === "-"
                ? (ctx.stdin as AsyncIterable<string | Uint8Array>)
                : readFilePieces({
                    path: resolve(ctx.env.workspaceRoot, bundle),
                    shown: bundle,
                    what: "the bundle file",
                  }),
              {
                label: bundle === "-" ? "bundle:stdin" : `bundle:${bundle}`,
                allowLocalDevelopment,
                ...(showProgress ? { progress: readProgress } : {}),
              },
            )
          : await runtime.verifyStore({
              allowLocalDevelopment,
              ...(rootId !== undefined ? { rootId } : {}),
              ...(range !== undefined ? { range } : {}),
              ...(showProgress ? { progress: readProgress } : {}),
              // One tree (a receipt id) is reported once it is known, not file by file.
              ...(ctx.json || rootId !== undefined ? {} : { onFile: streamed }),
            });
    const storePass = runId === undefined && bundle === undefined && rootId === undefined;
    if (showProgress) ctx.status("");
    if (ctx.json) ctx.out(`${JSON.stringify(report)}\n`);
    else {
      ctx.out(`receipt store ${report.receipt_dir} (${report.signature_mode} signatures)\n`);
      const trees = `${report.trees.length} tree${report.trees.length === 1 ? "" : "s"}`;
      ctx.out(
        `${report.receipt_count} receipt${report.receipt_count === 1 ? "" : "s"} in ${trees}\n`,
      );
      for (const t of report.trees) {
        const mark = t.valid ? s.ok("✓") : s.bad("✗");
        ctx.out(
          `${mark} ${t.root_receipt_id}  ${t.status}  (${t.receipt_count} receipt${t.receipt_count === 1 ? "" : "s"})\n`,
        );
        // A store pass printed each receipt's own problems as it found them.
        for (const f of t.findings) {
          if (storePass && !isTreeFinding(f.code)) continue;
          ctx.out(`    - ${f.code} at ${f.path}: ${f.message}\n`);
        }
      }
      if (!storePass) {
        for (const u of report.unreadable_files)
          ctx.out(`${s.bad("✗")} ${u.file_name}: ${u.message}\n`);
      }
      if (report.trees.length === 0 && report.unreadable_files.length === 0)
        ctx.out("no receipts\n");
      ctx.out(report.valid ? `${s.ok("valid")}\n` : `${s.bad("not valid")}\n`);
    }
    return report.valid ? 0 : 3;
  });
}

function rangeOf(since: string | undefined, until: string | undefined): CreatedRange | undefined {
  if (since === undefined && until === undefined) return undefined;
  const range: CreatedRange = {
    ...(since !== undefined ? { since: parseRangeBound("--since", since) } : {}),
    ...(until !== undefined ? { until: parseRangeBound("--until", until) } : {}),
  };
  if (range.since !== undefined && range.until !== undefined && range.since > range.until) {
    throw new RuntimeError("USAGE", "--since must not be later than --until");
  }
  return range;
}
