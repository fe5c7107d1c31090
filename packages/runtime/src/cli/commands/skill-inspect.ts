/** `runx skill inspect <ref> [runner]`: parse → `runtime.inspectSkill` → render. */
import { RuntimeError } from "../../errors.js";
import type { JsonObject, JsonValue } from "../../parser/json.js";
import { isJsonObject } from "../../parser/json.js";
import type { SkillInspection } from "../../services/inspect-skill.js";
import { expectPositionals, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { guard } from "../failure.js";
import { REGISTRY_FLAGS, cliRuntime, registryDirFlag } from "../runtime.js";
import { terminalSafe } from "../terminal-safe.js";

const SOURCE_WORDS: Record<string, string> = {
  explicit_profile: "--profile",
  project_binding: "project binding",
  global_default: "default profile",
  environment: "environment",
};

function text(value: JsonValue | undefined): string {
  return typeof value === "string" ? value : "";
}

/** Where a ready credential came from, in words (`project binding, profile acme`). */
function credentialSource(credential: JsonObject): string {
  const source = SOURCE_WORDS[text(credential.source)] ?? text(credential.source);
  if (credential.source === "environment") {
    const where = credential.origin === "workspace_dotenv" ? "workspace .env" : "process";
    return `${source} (${where})`;
  }
  return credential.profile !== undefined
    ? `${source}, profile ${text(credential.profile)}`
    : source;
}

function credentialLines(credential: JsonObject): string[] {
  const head = `credential: ${text(credential.name)} (${text(credential.provider)})`;
  if (credential.status === "ready") {
    const delivery = isJsonObject(credential.delivery) ? text(credential.delivery.env) : "";
    return [
      `${head} ready via ${credentialSource(credential)}, delivered as ${delivery} (${text(credential.auth_mode)})`,
    ];
  }
  const setup = Array.isArray(credential.setup) ? credential.setup.map(text) : [];
  return [`${head} missing`, ...setup.map((command) => `  setup: ${command}`)];
}

function environmentLines(environment: JsonValue | undefined): string[] {
  if (!isJsonObject(environment) || !Array.isArray(environment.variables)) return [];
  return environment.variables.filter(isJsonObject).map((v) => {
    const need = v.required === true ? "required" : "optional";
    return `environment: ${text(v.name)} (${need}, ${v.available === true ? "available" : "missing"})`;
  });
}

/** The human view: the skill, its runner, readiness and what would make it ready. */
export function renderInspection(inspection: SkillInspection): string {
  const { runner } = inspection;
  const lines = [`skill: ${inspection.name}`];
  if (inspection.description !== undefined)
    lines.push(`description: ${text(inspection.description)}`);
  if (inspection.version !== undefined) lines.push(`version: ${text(inspection.version)}`);
  lines.push(`runner: ${text(runner.name)}`, `type: ${text(runner.type)}`);
  lines.push(`readiness: ${inspection.readiness.status}`);
  lines.push(...environmentLines(inspection.environment));
  if (isJsonObject(inspection.credential)) lines.push(...credentialLines(inspection.credential));
  const inputs = Array.isArray(runner.inputs) ? runner.inputs.filter(isJsonObject) : [];
  if (inputs.length > 0) {
    lines.push("inputs:");
    for (const input of inputs) {
      const need = input.required === true ? "required" : "optional";
      lines.push(`  - ${text(input.name)}: ${text(input.type)} (${need})`);
    }
  }
  if (inspection.runners.length > 1) lines.push(`runners: ${inspection.runners.join(", ")}`);
  lines.push(`run: runx skill ${inspection.skill_path} ${text(runner.name)}`);
  return `${lines.map(terminalSafe).join("\n")}\n`;
}

/** Runs `runx skill inspect`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const args = parseArgs(
      tokens,
      {
        json: { aliases: ["-j"] },
        profile: { value: true },
        digest: { value: true },
        ...REGISTRY_FLAGS,
      },
      { command: "skill inspect" },
    );
    expectPositionals(args, 2, "skill inspect");
    const [ref, runner] = args.positionals;
    if (ref === undefined) {
      throw new RuntimeError("USAGE", "runx skill inspect needs a skill reference", {
        field: "ref",
      });
    }
    const runtime = cliRuntime(ctx, undefined, registryDirFlag(args.flags));
    try {
      const profile = flagValue(args, "profile");
      const digest = flagValue(args, "digest");
      const inspection = await runtime.inspectSkill({
        ref,
        ...(runner !== undefined ? { runner } : {}),
        ...(profile !== undefined ? { profile } : {}),
        ...(digest !== undefined ? { registryDigest: digest } : {}),
      });
      ctx.out(ctx.json ? `${JSON.stringify(inspection)}\n` : renderInspection(inspection));
      return 0;
    } finally {
      runtime.close();
    }
  });
}
