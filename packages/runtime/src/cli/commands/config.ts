/** `runx config set|get|list|unset`: the user config in $RUNX_HOME/config.json. */
import {
  getUserConfigEntry,
  isSecretConfigKey,
  listUserConfig,
  resolveConfigKey,
  setUserConfigValue,
  unsetUserConfigValue,
} from "../../agents/config.js";
import type { ConfigEntry } from "../../agents/config.js";
import { RuntimeError } from "../../errors.js";
import { expectPositionals, flagSet, parseArgs } from "../args.js";
import type { CommandContext } from "../context.js";
import { readSecretFromStdin } from "../read-secret.js";
import { guard } from "../failure.js";

function line(entry: ConfigEntry): string {
  const shown = entry.set ? (entry.value ?? "") : "(not set)";
  const fallback = !entry.set && entry.default !== undefined ? ` [default ${entry.default}]` : "";
  return `${entry.key.padEnd(16)} ${shown}${fallback}\n`;
}

const SET_FLAGS = new Set(["--from-stdin", "--json", "-j"]);

async function set(tokens: string[], ctx: CommandContext): Promise<number> {
  const name = tokens.find((token) => !token.startsWith("-"));
  if (name === undefined) throw new RuntimeError("USAGE", "runx config set needs a key");
  const key = resolveConfigKey(name);
  // Checked before flag parsing so that no error message can echo a secret-looking token.
  if (isSecretConfigKey(key) && tokens.some((t) => t !== name && !SET_FLAGS.has(t))) {
    // The value may already be in shell history; say how to do it right, never repeat it.
    throw new RuntimeError(
      "USAGE",
      `${key} is a secret and is never accepted on the command line; pipe it on stdin: ` +
        `printf '%s' "$OPENAI_API_KEY" | runx config set ${key} --from-stdin`,
      { key },
    );
  }
  const args = parseArgs(
    tokens,
    { json: { aliases: ["-j"] }, "from-stdin": {} },
    { command: "config set" },
  );
  expectPositionals(args, 2, "config set");
  const given = args.positionals[1];
  const fromStdin = flagSet(args, "from-stdin");
  if (fromStdin && given !== undefined) {
    throw new RuntimeError("USAGE", "give the value either as an argument or with --from-stdin");
  }
  if (!fromStdin && given === undefined) {
    throw new RuntimeError("USAGE", `runx config set ${key} needs a value`, { key });
  }
  const value =
    given ??
    (await readSecretFromStdin(ctx, {
      code: "CONFIG_INVALID",
      subject: `value for ${key}`,
      details: { key },
    }));
  const entry = await setUserConfigValue(ctx.env.runxHome, key, value);
  if (ctx.json) ctx.out(`${JSON.stringify({ status: "ok", action: "set", ...entry })}\n`);
  else ctx.out(`set ${entry.key}${entry.secret ? " (secret, stored with mode 0600)" : ""}\n`);
  return 0;
}

async function get(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "config get" });
  expectPositionals(args, 1, "config get");
  const name = args.positionals[0];
  if (name === undefined) throw new RuntimeError("USAGE", "runx config get needs a key");
  const entry = await getUserConfigEntry(ctx.env.runxHome, resolveConfigKey(name));
  if (ctx.json) ctx.out(`${JSON.stringify(entry)}\n`);
  else ctx.out(entry.set ? `${entry.value ?? ""}\n` : line(entry));
  return 0;
}

async function list(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "config list" });
  expectPositionals(args, 0, "config list");
  const entries = await listUserConfig(ctx.env.runxHome);
  if (ctx.json) ctx.out(`${JSON.stringify({ entries })}\n`);
  else for (const entry of entries) ctx.out(line(entry));
  return 0;
}

async function unset(tokens: string[], ctx: CommandContext): Promise<number> {
  const args = parseArgs(tokens, { json: { aliases: ["-j"] } }, { command: "config unset" });
  expectPositionals(args, 1, "config unset");
  const name = args.positionals[0];
  if (name === undefined) throw new RuntimeError("USAGE", "runx config unset needs a key");
  const key = resolveConfigKey(name);
  const removed = await unsetUserConfigValue(ctx.env.runxHome, key);
  if (ctx.json) ctx.out(`${JSON.stringify({ status: "ok", action: "unset", key, removed })}\n`);
  else ctx.out(removed ? `unset ${key}\n` : `${key} was not set\n`);
  return 0;
}

/** Runs `runx config`. */
export async function run(tokens: string[], ctx: CommandContext): Promise<number> {
  return guard(ctx, async () => {
    const [action, ...rest] = tokens;
    switch (action) {
      case "set":
        return set(rest, ctx);
      case "get":
        return get(rest, ctx);
      case "list":
        return list(rest, ctx);
      case "unset":
        return unset(rest, ctx);
      default:
        throw new RuntimeError(
          "USAGE",
          action === undefined
            ? "runx config needs an action: set, get, list or unset"
            : `unknown config action '${action}' (set, get, list, unset)`,
        );
    }
  });
}
