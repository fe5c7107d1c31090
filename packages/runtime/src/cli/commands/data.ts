/** `runx data migrate|sources|tail`: operator views and the SQLite schema migration. */
import { RuntimeError } from "../../errors.js";
import { migrateSqliteStore } from "../../data/migrate.js";
import { listDataSources, tailStream } from "../../data/views.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { styler } from "../render.js";

/** Runs `runx data`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, () => dataCommand(tokens, ctx));
}

const bindingEnv = (ctx: CommandContext) => ({
  workspaceRoot: ctx.env.workspaceRoot,
  env: ctx.env.processEnv,
});

async function dataCommand(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(
    tokens,
    {
      json: { aliases: ["-j"] },
      database: { value: true },
      source: { value: true },
      backup: { value: true },
      limit: { value: true },
    },
    { command: "data" },
  );
  const [action] = args.positionals;
  const s = styler(!ctx.json && ctx.env.color);
  if (action === "migrate") {
    expectPositionals(args, 1, "data migrate");
    const database = flagValue(args, "database");
    const source = flagValue(args, "source");
    if (
      database === undefined ||
      database.trim() === "" ||
      source === undefined ||
      source.trim() === ""
    ) {
      throw new RuntimeError(
        "USAGE",
        "runx data migrate: --database <path> and --source <ref> are required",
      );
    }
    const backup = flagValue(args, "backup");
    const proof = await migrateSqliteStore({
      workspaceRoot: ctx.env.workspaceRoot,
      database,
      source,
      ...(backup !== undefined ? { backup } : {}),
    });
    if (ctx.json) ctx.out(`${JSON.stringify({ status: "success", result: proof })}\n`);
    else {
      ctx.out(
        `${s.bold(proof.status)}  ${proof.database_path} (${proof.source_schema} -> schema v${proof.target_schema_version})\n`,
      );
      ctx.out(`  events ${proof.event_count}, streams ${proof.stream_count}, verified\n`);
      ctx.out(`  result ${proof.result_digest}\n`);
      if (proof.backup_path !== null)
        ctx.out(`  backup ${proof.backup_path} ${proof.backup_digest ?? ""}\n`);
    }
    return 0;
  }
  if (action === "sources") {
    expectPositionals(args, 1, "data sources");
    const view = listDataSources(bindingEnv(ctx));
    if (ctx.json) ctx.out(`${JSON.stringify({ status: "success", ...view })}\n`);
    else {
      if (view.sources.length === 0) ctx.out("no configured data sources\n");
      for (const source of view.sources) {
        const where = source.database_path ?? source.endpoint ?? "";
        const prefix = source.key_prefix !== undefined ? `  prefix ${source.key_prefix}` : "";
        ctx.out(
          `${s.bold(source.data_source_ref ?? "")}  ${source.adapter}  ${where}${prefix}  ${s.dim(`(${source.origin})`)}\n`,
        );
      }
      ctx.out(
        s.dim(`unbound local://… refs: data.sqlite at ${view.local_default.database_path}\n`),
      );
    }
    return 0;
  }
  if (action === "tail") {
    expectPositionals(args, 4, "data tail");
    const [, source, resource, aggregateId] = args.positionals;
    if (source === undefined || resource === undefined || aggregateId === undefined) {
      throw new RuntimeError(
        "USAGE",
        "runx data tail <data_source_ref> <resource> <aggregate_id> [--limit N]",
      );
    }
    const limitText = flagValue(args, "limit") ?? "20";
    const limit = /^\d+$/.test(limitText) ? Number(limitText) : Number.NaN;
    const result = await tailStream(
      { ...bindingEnv(ctx), now: () => new Date() },
      { source, resource, aggregateId, limit },
    );
    if (ctx.json) ctx.out(`${JSON.stringify({ status: "success", result })}\n`);
    else {
      ctx.out(
        `${s.bold(`${resource}:${aggregateId}`)}  version ${result.after_version}  ${s.dim(result.projection_digest)}\n`,
      );
      for (const event of result.events) {
        ctx.out(
          `${String(event.version).padStart(6)}  ${event.committed_at}  ${event.event_type}  ${s.dim(event.idempotency_key)}\n`,
        );
      }
      if (result.events.length < result.after_version) {
        ctx.out(s.dim(`(showing the newest ${result.events.length} of ${result.after_version})\n`));
      }
    }
    return 0;
  }
  throw new RuntimeError(
    "USAGE",
    action === undefined
      ? "runx data: expected 'migrate', 'sources' or 'tail'"
      : `runx data ${action}: unknown action (expected 'migrate', 'sources' or 'tail')`,
  );
}
