/** `runx add owner/name@version [--to dir] [--digest sha256:…]`: materialise a registry package. */
import { RuntimeError } from "../../errors.js";
import { flagValue, parseArgs, expectPositionals } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { REGISTRY_FLAGS, cliFullRuntime, registryDirFlag } from "../runtime.js";

/** Runs `runx add`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        json: { aliases: ["-j"] },
        ...REGISTRY_FLAGS,
        to: { value: true },
        digest: { value: true },
        version: { value: true },
      },
      { command: "add" },
    );
    expectPositionals(args, 1, "add");
    let ref = args.positionals[0];
    if (ref === undefined) throw new RuntimeError("USAGE", "runx add needs owner/name@version");
    if (/^https?:\/\//i.test(ref)) {
      throw new RuntimeError(
        "USAGE",
        "runx add <github-url> needs the network and is not supported by this runtime; publish the package to a local registry and add owner/name@version",
      );
    }
    const version = flagValue(args, "version");
    if (version !== undefined) {
      if (ref.includes("@"))
        throw new RuntimeError(
          "USAGE",
          "give the version either in the ref or with --version, not both",
        );
      ref = `${ref}@${version}`;
    }
    const to = flagValue(args, "to");
    const digest = flagValue(args, "digest");
    const runtime = await cliFullRuntime(ctx, undefined, registryDirFlag(args.flags));
    const result = runtime.registry().add(ref, {
      ...(to !== undefined ? { to } : {}),
      ...(digest !== undefined ? { digest } : {}),
    });
    ctx.out(
      ctx.json
        ? `${JSON.stringify(result)}\n`
        : `${result.status} ${result.skill_id}@${result.version} (${result.trust_tier}) → ${result.destination}\nrun it: runx skill ${result.destination}\n`,
    );
    return 0;
  });
}
