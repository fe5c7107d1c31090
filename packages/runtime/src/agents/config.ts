/**
 * User configuration `$RUNX_HOME/config.json`: the managed
 * agent's provider, model, endpoint and API key. The file is written atomically with mode
 * 0600 and keeps every key it does not own. The API key is a secret: it is only ever set
 * from stdin (enforced by the CLI), and every read-out masks it.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, open, rename, rm } from "node:fs/promises";
import path from "node:path";
import { isRuntimeError, RuntimeError } from "../errors.js";
import { readFileCapped } from "../packages/read-capped.js";
import { parseBoundedJson } from "../parser/nesting.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";

/** The user config file name under RUNX_HOME. */
export const USER_CONFIG_FILE = "config.json";
/** What a secret value reads as. */
export const SECRET_MASK = "********";
/** The endpoint used when `agent.base_url` is unset (provider `openai` only). */
export const DEFAULT_AGENT_BASE_URL = "https://api.openai.com/v1";

interface KeySpec {
  alias: string;
  secret: boolean;
  default?: string;
}

/** Every key `runx config` understands, with its short alias. */
export const CONFIG_KEYS = {
  "agent.provider": { alias: "provider", secret: false },
  "agent.model": { alias: "model", secret: false },
  "agent.base_url": { alias: "base-url", secret: false, default: DEFAULT_AGENT_BASE_URL },
  "agent.api_key": { alias: "api-key", secret: true },
} as const satisfies Record<string, KeySpec>;

/** A fully-qualified config key. */
export type ConfigKey = keyof typeof CONFIG_KEYS;

/** One key as `get`/`list` show it; secret values are masked. */
export interface ConfigEntry {
  key: ConfigKey;
  alias: string;
  secret: boolean;
  set: boolean;
  /** The stored value, `********` for a set secret, null when unset. */
  value: string | null;
  /** The value used when unset, if the key has one. */
  default?: string;
}

/** The managed agent's settings, read from the user config. */
export interface AgentSettings {
  provider: string;
  model: string;
  baseUrl: string;
  apiKey: string;
}

const KEY_NAMES = Object.keys(CONFIG_KEYS) as ConfigKey[];
const PROVIDER = /^[a-z0-9][a-z0-9._-]{0,63}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function spec(key: ConfigKey): KeySpec {
  return CONFIG_KEYS[key];
}

/** Maps a short alias or fully-qualified key to its key; anything else is CONFIG_INVALID. */
export function resolveConfigKey(name: string): ConfigKey {
  for (const key of KEY_NAMES) if (name === key || name === spec(key).alias) return key;
  throw new RuntimeError("CONFIG_INVALID", `unknown config key '${name}'`, {
    key: name,
    known: KEY_NAMES.flatMap((k) => [k, spec(k).alias]),
  });
}

/** Whether the key holds a secret (settable only from stdin, always masked). */
export function isSecretConfigKey(key: ConfigKey): boolean {
  return spec(key).secret;
}

/** True for `localhost`, 127.0.0.0/8 and `::1` (as URL.hostname spells them). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host === "::1") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Checks an endpoint URL: https, or http only on a loopback host; no credentials, query or
 * fragment. Returns it without trailing slashes.
 */
export function normalizeBaseUrl(value: string): string {
  const refuse = (message: string): never => {
    throw new RuntimeError("CONFIG_INVALID", `agent.base_url ${message}`, {
      key: "agent.base_url",
    });
  };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return refuse("is not a valid URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") refuse("must be an http(s) URL");
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    refuse("must use https unless the host is loopback (localhost, 127.0.0.1, ::1)");
  }
  if (url.username !== "" || url.password !== "") refuse("must not carry credentials");
  if (url.search !== "" || url.hash !== "") refuse("must not have a query or fragment");
  return url.href.replace(/\/+$/, "");
}

/** Validates and normalizes a value for a key (secret values are never echoed in errors). */
export function normalizeConfigValue(key: ConfigKey, raw: string): string {
  const value = spec(key).secret ? raw : raw.trim();
  const refuse = (message: string): never => {
    throw new RuntimeError("CONFIG_INVALID", `${key} ${message}`, { key });
  };
  if (value === "") refuse("must not be empty");
  switch (key) {
    case "agent.provider":
      if (!PROVIDER.test(value)) refuse("must be a lowercase provider name such as 'openai'");
      return value;
    case "agent.model":
      if (value.length > 256 || CONTROL.test(value)) refuse("must be a model name");
      return value;
    case "agent.base_url":
      return normalizeBaseUrl(value);
    case "agent.api_key":
      if (value.length > 8192) refuse("is longer than 8192 characters");
      if (/\s/.test(value) || CONTROL.test(value)) {
        refuse("must be one token without whitespace or control characters");
      }
      return value;
  }
}

const MIB = 1024 * 1024;

function configFile(runxHome: string): string {
  return path.join(runxHome, USER_CONFIG_FILE);
}

/** Reads the whole user config; a missing file is `{}`, a malformed one CONFIG_INVALID. */
export async function readUserConfig(runxHome: string): Promise<JsonObject> {
  let text: string;
  try {
    // Capped on the descriptor: a FIFO or a device there is refused, not waited on.
    const shown = "$RUNX_HOME/config.json";
    text = (
      await readFileCapped({ path: configFile(runxHome), shown, what: shown, maxBytes: MIB })
    ).toString("utf8");
  } catch (error) {
    if (isRuntimeError(error) && error.details.cause === "ENOENT") return {};
    if (isRuntimeError(error) && error.code === "FILE_TOO_LARGE") throw error;
    throw new RuntimeError("IO_ERROR", "cannot read $RUNX_HOME/config.json", {
      file: "$RUNX_HOME/config.json",
    });
  }
  let value: unknown;
  try {
    value = parseBoundedJson(text, { file: "$RUNX_HOME/config.json" });
  } catch (error) {
    if (isRuntimeError(error)) throw error;
    value = undefined;
  }
  if (!isJsonObject(value) || (value.agent !== undefined && !isJsonObject(value.agent))) {
    throw new RuntimeError("CONFIG_INVALID", "$RUNX_HOME/config.json is not a valid config", {
      file: "$RUNX_HOME/config.json",
    });
  }
  return value;
}

/** Writes the config atomically (temp file, fsync, rename) with mode 0600. */
export async function writeUserConfig(runxHome: string, config: JsonObject): Promise<void> {
  await mkdir(runxHome, { recursive: true, mode: 0o700 });
  const file = configFile(runxHome);
  const temp = path.join(
    runxHome,
    `.${USER_CONFIG_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(config, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw new RuntimeError("IO_ERROR", "cannot write $RUNX_HOME/config.json", {
      file: "$RUNX_HOME/config.json",
      cause: (error as NodeJS.ErrnoException).code ?? "unknown",
    });
  }
}

function storedValue(config: JsonObject, key: ConfigKey): string | undefined {
  const [section, field] = key.split(".") as [string, string];
  const holder = config[section];
  if (!isJsonObject(holder) || holder[field] === undefined) return undefined;
  const value = holder[field];
  if (typeof value !== "string") {
    throw new RuntimeError("CONFIG_INVALID", `${key} in $RUNX_HOME/config.json is not a string`, {
      key,
    });
  }
  return value;
}

function entryOf(config: JsonObject, key: ConfigKey): ConfigEntry {
  const s = spec(key);
  const value = storedValue(config, key);
  const entry: ConfigEntry = {
    key,
    alias: s.alias,
    secret: s.secret,
    set: value !== undefined,
    value: value === undefined ? null : s.secret ? SECRET_MASK : value,
  };
  if (s.default !== undefined) entry.default = s.default;
  return entry;
}

/** Validates and stores one value; returns the (masked) entry. */
export async function setUserConfigValue(
  runxHome: string,
  key: ConfigKey,
  raw: string,
): Promise<ConfigEntry> {
  const value = normalizeConfigValue(key, raw);
  const config = await readUserConfig(runxHome);
  const [section, field] = key.split(".") as [string, string];
  const holder = config[section];
  config[section] = { ...(isJsonObject(holder) ? holder : {}), [field]: value };
  await writeUserConfig(runxHome, config);
  return entryOf(config, key);
}

/** Removes one value; false when it was not set. */
export async function unsetUserConfigValue(runxHome: string, key: ConfigKey): Promise<boolean> {
  const config = await readUserConfig(runxHome);
  const [section, field] = key.split(".") as [string, string];
  const holder = config[section];
  if (!isJsonObject(holder) || holder[field] === undefined) return false;
  const rest = Object.fromEntries(Object.entries(holder).filter(([name]) => name !== field));
  config[section] = rest;
  await writeUserConfig(runxHome, config);
  return true;
}

/** One key as shown by `runx config get` (masked). */
export async function getUserConfigEntry(runxHome: string, key: ConfigKey): Promise<ConfigEntry> {
  return entryOf(await readUserConfig(runxHome), key);
}

/** Every known key as shown by `runx config list` (masked). */
export async function listUserConfig(runxHome: string): Promise<ConfigEntry[]> {
  const config = await readUserConfig(runxHome);
  return KEY_NAMES.map((key) => entryOf(config, key));
}

/**
 * The managed agent's settings. Throws AGENT_NOT_CONFIGURED naming what is missing; a
 * provider other than `openai` needs an explicit `agent.base_url`, so a key is never sent
 * to an endpoint its provider did not name.
 */
export async function loadAgentSettings(runxHome: string): Promise<AgentSettings> {
  const config = await readUserConfig(runxHome);
  const provider = storedValue(config, "agent.provider");
  const model = storedValue(config, "agent.model");
  const apiKey = storedValue(config, "agent.api_key");
  const baseUrl = storedValue(config, "agent.base_url");
  const missing: string[] = [];
  if (provider === undefined) missing.push("agent.provider");
  if (model === undefined) missing.push("agent.model");
  if (apiKey === undefined) missing.push("agent.api_key");
  if (provider !== undefined && provider !== "openai" && baseUrl === undefined) {
    missing.push("agent.base_url");
  }
  if (provider === undefined || model === undefined || apiKey === undefined || missing.length) {
    throw new RuntimeError(
      "AGENT_NOT_CONFIGURED",
      `the managed agent is not configured: set ${missing.join(", ")} with runx config set ` +
        "(the API key from stdin: runx config set agent.api_key --from-stdin)",
      { missing },
    );
  }
  return {
    provider,
    model,
    apiKey,
    baseUrl: normalizeBaseUrl(baseUrl ?? DEFAULT_AGENT_BASE_URL),
  };
}
