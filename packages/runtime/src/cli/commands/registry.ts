/** `runx registry package|publish|search|read|resolve|install`: parse → one registry call → render. */
import { RuntimeError } from "../../errors.js";
import { isTrustTier } from "../../registry/keys.js";
import { flagSet, flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { REGISTRY_FLAGS, cliFullRuntime, registryDirFlag } from "../runtime.js";

const ACTIONS = ["package", "publish", "search", "read", "resolve", "install"] as const;

/** Runs `runx registry`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        json: { aliases: ["-j"] },
        ...REGISTRY_FLAGS,
        owner: { value: true },
        version: { value: true },
        "trust-tier": { value: true },
        upsert: {},
        limit: { value: true },
        to: { value: true },
        digest: { value: true },
      },
      { command: "registry" },
    );
    const [action, subject] = args.positionals;
    if (action === undefined || !(ACTIONS as readonly string[]).includes(action)) {
      throw new RuntimeError(
        "USAGE",
        `runx registry needs an action: ${ACTIONS.join(", ")}${action !== undefined ? ` (got '${action}')` : ""}`,
      );
    }
    expectPositionals(args, 2, `registry ${action}`);
    if (subject === undefined) {
      const what =
        action === "search"
          ? "a query"
          : action === "package" || action === "publish"
            ? "a package directory"
            : "a registry ref";
      throw new RuntimeError("USAGE", `runx registry ${action} needs ${what}`);
    }
    const runtime = await cliFullRuntime(ctx, undefined, registryDirFlag(args.flags));
    const registry = runtime.registry();
    const owner = flagValue(args, "owner");
    const version = flagValue(args, "version");
    const print = (value: unknown, human: string): number => {
      ctx.out(ctx.json ? `${JSON.stringify(value)}\n` : human);
      return 0;
    };
    switch (action) {
      case "package": {
        const p = await registry.package(subject, {
          ...(owner !== undefined ? { owner } : {}),
          ...(version !== undefined ? { version } : {}),
        });
        const files = p.files.map((f) => `  ${f.path} (${f.bytes} bytes, ${f.sha256})\n`).join("");
        return print(
          p,
          `${p.skill_id ?? p.name}@${p.version}\npackage digest ${p.package_digest}\n${p.files.length} file(s), ${p.total_bytes} bytes:\n${files}`,
        );
      }
      case "publish": {
        if (owner === undefined)
          throw new RuntimeError("USAGE", "runx registry publish needs --owner <owner>");
        const tier = flagValue(args, "trust-tier") ?? "community";
        if (!isTrustTier(tier)) {
          throw new RuntimeError(
            "USAGE",
            "--trust-tier must be community, verified or first_party",
          );
        }
        const r = await runtime.publishSkill(subject, {
          owner,
          ...(version !== undefined ? { version } : {}),
          trustTier: tier,
          upsert: flagSet(args, "upsert"),
        });
        return print(
          r,
          `${r.status} ${r.skill_id}@${r.version} (${r.trust_tier}, signed by ${r.publisher.id})\npackage digest ${r.package_digest}\n${r.path}\n`,
        );
      }
      case "search": {
        const limitText = flagValue(args, "limit");
        const limit = limitText === undefined ? 20 : Number(limitText);
        if (!Number.isInteger(limit) || limit <= 0) {
          throw new RuntimeError("USAGE", "--limit must be a positive integer");
        }
        const r = registry.search(subject, { limit });
        const lines = r.items.map(
          (i) =>
            `${i.skill_id}@${i.version}  [${i.trust_tier}]  ${i.description ?? ""}\n    ${i.run_command}\n`,
        );
        const refused = r.refused.map((x) => `refused ${x.skill_id}: ${x.reason}\n`);
        return print(
          r,
          lines.length === 0 && refused.length === 0
            ? `no skills match '${subject}'\n`
            : [...lines, ...refused].join(""),
        );
      }
      case "read": {
        const record = registry.read(subject);
        return print(record, `${JSON.stringify(record, null, 2)}\n`);
      }
      case "resolve": {
        const record = registry.read(subject);
        const identity = {
          skill_id: record.skill_id,
          version: record.version,
          digest: record.digest,
          profile_digest: record.profile_digest,
          package_digest: record.package_digest,
          trust_tier: record.trust_tier,
          publisher: record.publisher.id,
        };
        return print(
          identity,
          `${record.skill_id}@${record.version} ${record.package_digest} (${record.trust_tier})\n`,
        );
      }
      case "install": {
        const to = flagValue(args, "to");
        const digest = flagValue(args, "digest");
        const r = registry.add(subject, {
          ...(to !== undefined ? { to } : {}),
          ...(digest !== undefined ? { digest } : {}),
        });
        return print(r, `${r.status} ${r.skill_id}@${r.version} → ${r.destination}\n`);
      }
    }
    return 64;
  });
}
