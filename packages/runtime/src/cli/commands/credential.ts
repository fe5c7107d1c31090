/**
 * `runx credential set|list|remove|bind`: local credential profiles in $RUNX_HOME and project
 * bindings in <workspace>/.runx/credentials.json. Material comes from stdin only and is never
 * printed, not even in an error.
 */
import {
  bindProjectCredential,
  checkIdentifier,
  listCredentialProfiles,
  removeCredentialProfile,
  setCredentialProfile,
} from "../../credentials/store.js";
import type { CredentialProfileSummary } from "../../credentials/store.js";
import { RuntimeError } from "../../errors.js";
import { expectPositionals, flagSet, flagValue, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { readSecretFromStdin } from "../read-secret.js";
import { guard } from "../failure.js";

const SET_VALUE_FLAGS = new Set(["--profile", "--auth-mode", "--audience"]);
const SET_BOOLEAN_FLAGS = new Set(["--from-stdin", "--json", "-j"]);

/**
 * Refuses any `set` token outside the command's shape before anything else reads the
 * tokens, so that no error message can repeat material typed on the command line.
 */
function checkSetShape(tokens: readonly string[]): void {
  let positionals = 0;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] as string;
    const eq = token.startsWith("--") ? token.indexOf("=") : -1;
    const head = eq > 0 ? token.slice(0, eq) : token;
    if (SET_VALUE_FLAGS.has(head)) {
      if (eq < 0) i += 1;
      continue;
    }
    if (SET_BOOLEAN_FLAGS.has(token)) continue;
    if (!token.startsWith("-")) {
      positionals += 1;
      if (positionals === 1) continue;
    }
    throw new RuntimeError(
      "USAGE",
      "runx credential set takes only <provider> and its flags; credential material is never " +
        "accepted on the command line, pipe it on stdin: " +
        "printf '%s' \"$TOKEN\" | runx credential set <provider> --profile <name> --from-stdin",
    );
  }
}

async function set(tokens: string[], ctx: CommandContext): Promise<number> {
  checkSetShape(tokens);
  const args = parseArgs(
    tokens,
    {
      json: { aliases: ["-j"] },
      "from-stdin": {},
      profile: { value: true },
      "auth-mode": { value: true },
      audience: { value: true },
    },
    { command: "credential set" },
  );
  const provider = args.positionals[0];
  if (provider === undefined) {
    throw new RuntimeError("USAGE", "runx credential set needs a provider");
  }
  const profile = flagValue(args, "profile");
  if (profile === undefined) {
    throw new RuntimeError("USAGE", "runx credential set needs --profile <name>");
  }
  if (!flagSet(args, "from-stdin")) {
    throw new RuntimeError(
      "USAGE",
      "runx credential set reads the material from stdin only: add --from-stdin and pipe it in",
    );
  }
  const authMode = flagValue(args, "auth-mode");
  const audience = flagValue(args, "audience");
  // Names are checked before stdin is read, so a typo does not consume the material.
  checkIdentifier(provider, "provider");
  checkIdentifier(profile, "--profile");
  if (authMode !== undefined) checkIdentifier(authMode, "--auth-mode");
  const secret = await readSecretFromStdin(ctx, { code: "USAGE", subject: "credential material" });
  const summary = await setCredentialProfile(ctx.env.runxHome, {
    name: profile,
    provider,
    secret,
    ...(authMode !== undefined ? { authMode } : {}),
    ...(audience !== undefined ? { audience } : {}),
  });
  if (ctx.json) ctx.out(`${JSON.stringify({ status: "ok", action: "set", profile: summary })}\n`);
  else {
    ctx.out(
      `stored credential profile ${summary.name} (${summary.provider}, ${summary.auth_mode}); ` +
        `default for ${summary.provider}\n`,
    );
  }
  return 0;
}

function line(profile: CredentialProfileSummary): string {
  const audience = profile.audience !== undefined ? ` ${profile.audience}` : "";
  const marker = profile.is_default ? " (default)" : "";
  return `${profile.name.padEnd(20)} ${profile.provider.padEnd(16)} ${profile.auth_mode}${audience}${marker}\n`;
}

async function list(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "credential list" });
  expectPositionals(args, 0, "credential list");
  const profiles = await listCredentialProfiles(ctx.env.runxHome);
  if (ctx.json) ctx.out(`${JSON.stringify({ profiles })}\n`);
  else if (profiles.length === 0) ctx.out("no credential profiles\n");
  else for (const profile of profiles) ctx.out(line(profile));
  return 0;
}

async function remove(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "credential remove" });
  expectPositionals(args, 1, "credential remove");
  const name = args.positionals[0];
  if (name === undefined) throw new RuntimeError("USAGE", "runx credential remove needs a profile");
  const removed = await removeCredentialProfile(ctx.env.runxHome, name);
  if (ctx.json) {
    ctx.out(`${JSON.stringify({ status: "ok", action: "remove", profile: name, removed })}\n`);
  } else
    ctx.out(removed ? `removed credential profile ${name}\n` : `no credential profile ${name}\n`);
  return 0;
}

async function bind(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(
    tokens,
    {
      json: { aliases: ["-j"] },
      provider: { value: true },
      skill: { value: true },
      credential: { value: true },
    },
    { command: "credential bind" },
  );
  expectPositionals(args, 1, "credential bind");
  const profile = args.positionals[0];
  if (profile === undefined)
    throw new RuntimeError("USAGE", "runx credential bind needs a profile");
  const provider = flagValue(args, "provider");
  const skill = flagValue(args, "skill");
  const credential = flagValue(args, "credential");
  let target: string;
  if (provider !== undefined) {
    if (skill !== undefined || credential !== undefined) {
      throw new RuntimeError("USAGE", "give either --provider or --skill with --credential");
    }
    target = `provider:${checkIdentifier(provider, "--provider")}`;
  } else if (skill !== undefined && credential !== undefined) {
    target = `skill:${checkIdentifier(skill, "--skill")}:${checkIdentifier(credential, "--credential")}`;
  } else {
    throw new RuntimeError(
      "USAGE",
      "runx credential bind needs --provider <provider>, or --skill <skill> with --credential <name>",
    );
  }
  const file = await bindProjectCredential(
    ctx.env.workspaceRoot,
    ctx.env.runxHome,
    target,
    profile,
  );
  if (ctx.json) {
    ctx.out(`${JSON.stringify({ status: "ok", action: "bind", target, profile, file })}\n`);
  } else ctx.out(`bound ${target} to ${profile} in ${file}\n`);
  return 0;
}

/** Runs `runx credential`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const [action, ...rest] = tokens;
    switch (action) {
      case "set":
        return set(rest, ctx);
      case "list":
        return list(rest, ctx);
      case "remove":
        return remove(rest, ctx);
      case "bind":
        return bind(rest, ctx);
      default:
        throw new RuntimeError(
          "USAGE",
          action === undefined
            ? "runx credential needs an action: set, list, remove or bind"
            : "unknown credential action (set, list, remove, bind)",
        );
    }
  });
}
