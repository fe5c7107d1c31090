/**
 * Local credential profiles. Metadata (provider, auth mode, audience, a key-file reference)
 * and the provider defaults live in `$RUNX_HOME/config.json` under `credentials`; the
 * material itself is encrypted (AES-256-GCM) into `$RUNX_HOME/keys/<ref>.json` with a local
 * key in `$RUNX_HOME/keys/credential.key`. Files are 0600, the directory 0700. Project
 * bindings in `<workspace>/.runx/credentials.json` hold profile names only.
 *
 * Nothing here ever puts material into an error message or a return value other than
 * {@link loadProfileSecret}.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmod, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { readUserConfig, writeUserConfig } from "../agents/config.js";
import { isRuntimeError, RuntimeError } from "../errors.js";
import { readFileCapped } from "../packages/read-capped.js";
import { isJsonObject } from "../parser/json.js";
import type { JsonObject } from "../parser/json.js";
import { parseBoundedJson } from "../parser/nesting.js";

/** One stored profile as config.json records it. */
export interface CredentialProfile {
  provider: string;
  auth_mode: string;
  audience?: string;
  secret_ref: string;
}

/** A profile as `runx credential list` shows it: no material, no key reference. */
export interface CredentialProfileSummary {
  name: string;
  provider: string;
  auth_mode: string;
  audience?: string;
  is_default: boolean;
}

/** The `credentials` section of config.json. */
export interface CredentialsConfig {
  profiles: Record<string, CredentialProfile>;
  defaults: Record<string, string>;
}

/** Project bindings: `provider:<p>` or `skill:<skill>:<credential>` → profile name. */
export interface CredentialBindings {
  bindings: Record<string, string>;
}

/** The auth mode a profile gets when `--auth-mode` is not given. */
export const DEFAULT_AUTH_MODE = "api_key";
/** Where project bindings live, relative to the workspace root. */
export const PROJECT_BINDINGS_FILE = ".runx/credentials.json";

const IDENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const KEY_FILE = "credential.key";
const REF = /^cred_[0-9a-f]{32}$/;
const MAX_SECRET_BYTES = 64 * 1024;

function invalidConfig(message: string): never {
  throw new RuntimeError("CONFIG_INVALID", message, { file: "$RUNX_HOME/config.json" });
}

/** Checks a profile, provider or auth-mode name; `field` names it in the error. */
export function checkIdentifier(value: string, field: string): string {
  if (!IDENT.test(value)) {
    throw new RuntimeError(
      "USAGE",
      `${field} must be 1-128 letters, digits, '.', '_' or '-' and start with a letter or digit`,
      { field },
    );
  }
  return value;
}

/** Checks an audience: an https URL with a host and nothing secret-bearing. Returns it. */
export function checkAudience(value: string, field = "--audience"): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (
    url?.protocol !== "https:" ||
    url.hostname === "" ||
    url.username !== "" ||
    url.password !== "" ||
    url.search !== "" ||
    url.hash !== ""
  ) {
    throw new RuntimeError(
      "USAGE",
      `${field} must be an https URL with a host and no credentials, query or fragment`,
      { field },
    );
  }
  return value;
}

/** The normalized host an audience binds to (lower case, default port dropped). */
export function audienceHost(value: string): string {
  return new URL(value).host.toLowerCase();
}

function credentialsOf(config: JsonObject): CredentialsConfig {
  const section = config.credentials;
  if (section === undefined) return { profiles: {}, defaults: {} };
  if (!isJsonObject(section))
    invalidConfig("credentials in $RUNX_HOME/config.json is not an object");
  const profiles: Record<string, CredentialProfile> = {};
  const rawProfiles = section.profiles ?? {};
  if (!isJsonObject(rawProfiles)) invalidConfig("credentials.profiles is not an object");
  for (const [name, raw] of Object.entries(rawProfiles)) {
    if (
      !isJsonObject(raw) ||
      typeof raw.provider !== "string" ||
      typeof raw.auth_mode !== "string" ||
      typeof raw.secret_ref !== "string" ||
      !REF.test(raw.secret_ref) ||
      (raw.audience !== undefined && typeof raw.audience !== "string")
    ) {
      invalidConfig(`credentials.profiles.${name} in $RUNX_HOME/config.json is malformed`);
    }
    profiles[name] = {
      provider: raw.provider,
      auth_mode: raw.auth_mode,
      secret_ref: raw.secret_ref,
      ...(typeof raw.audience === "string" ? { audience: raw.audience } : {}),
    };
  }
  const defaults: Record<string, string> = {};
  const rawDefaults = section.defaults ?? {};
  if (!isJsonObject(rawDefaults)) invalidConfig("credentials.defaults is not an object");
  for (const [provider, profile] of Object.entries(rawDefaults)) {
    if (typeof profile !== "string")
      invalidConfig(`credentials.defaults.${provider} is not a string`);
    defaults[provider] = profile;
  }
  return { profiles, defaults };
}

/** Reads the credentials section of `$RUNX_HOME/config.json` (empty when there is none). */
export async function readCredentialsConfig(runxHome: string): Promise<CredentialsConfig> {
  return credentialsOf(await readUserConfig(runxHome));
}

async function writeCredentials(runxHome: string, credentials: CredentialsConfig): Promise<void> {
  const config = await readUserConfig(runxHome);
  config.credentials = credentials as unknown as JsonObject;
  await writeUserConfig(runxHome, config);
}

function keysDir(runxHome: string): string {
  return path.join(runxHome, "keys");
}

async function ensureKeysDir(runxHome: string): Promise<string> {
  await mkdir(runxHome, { recursive: true, mode: 0o700 });
  const dir = keysDir(runxHome);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  return dir;
}

/** Writes `data` to `file` atomically with mode 0600. */
async function writePrivate(file: string, data: string | Buffer): Promise<void> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw new RuntimeError("IO_ERROR", "cannot write the runx credential store", {
      file: `$RUNX_HOME/keys/${path.basename(file)}`,
      cause: (error as NodeJS.ErrnoException).code ?? "unknown",
    });
  }
}

/** The local key, created on first use. */
async function localKey(runxHome: string, create: boolean): Promise<Buffer> {
  const file = path.join(keysDir(runxHome), KEY_FILE);
  try {
    const key = Buffer.from((await readFile(file, "utf8")).trim(), "base64");
    if (key.length !== 32) invalidConfig("$RUNX_HOME/keys/credential.key is not a 256-bit key");
    return key;
  } catch (error) {
    if (isRuntimeError(error)) throw error;
    if ((error as NodeJS.ErrnoException).code !== "ENOENT" || !create) {
      throw new RuntimeError("CREDENTIAL_UNAVAILABLE", "the local credential key cannot be read", {
        file: "$RUNX_HOME/keys/credential.key",
      });
    }
  }
  await ensureKeysDir(runxHome);
  const key = randomBytes(32);
  await writePrivate(file, `${key.toString("base64")}\n`);
  return key;
}

async function storeSecret(runxHome: string, secret: string): Promise<string> {
  const dir = await ensureKeysDir(runxHome);
  const key = await localKey(runxHome, true);
  const ref = `cred_${randomBytes(16).toString("hex")}`;
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(ref));
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()]);
  const payload = {
    alg: "aes-256-gcm",
    iv: iv.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
    ciphertext: ciphertext.toString("base64"),
  };
  await writePrivate(path.join(dir, `${ref}.json`), `${JSON.stringify(payload)}\n`);
  return ref;
}

async function removeSecret(runxHome: string, ref: string): Promise<void> {
  if (!REF.test(ref)) return;
  await rm(path.join(keysDir(runxHome), `${ref}.json`), { force: true });
}

/** The material of a stored profile. The only function that returns it. */
export async function loadProfileSecret(
  runxHome: string,
  profileName: string,
  ref: string,
): Promise<string> {
  const unavailable = (): never => {
    throw new RuntimeError(
      "CREDENTIAL_UNAVAILABLE",
      `the material of credential profile '${profileName}' cannot be read; store it again with runx credential set`,
      { profile: profileName },
    );
  };
  if (!REF.test(ref)) return unavailable();
  let payload: unknown;
  try {
    const shown = `$RUNX_HOME/keys/${ref}.json`;
    const text = (
      await readFileCapped({
        path: path.join(keysDir(runxHome), `${ref}.json`),
        shown,
        what: shown,
        maxBytes: 4 * MAX_SECRET_BYTES,
      })
    ).toString("utf8");
    payload = parseBoundedJson(text, { file: shown });
  } catch {
    return unavailable();
  }
  if (
    !isJsonObject(payload) ||
    payload.alg !== "aes-256-gcm" ||
    typeof payload.iv !== "string" ||
    typeof payload.tag !== "string" ||
    typeof payload.ciphertext !== "string"
  ) {
    return unavailable();
  }
  try {
    const key = await localKey(runxHome, false);
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(payload.iv, "base64"));
    decipher.setAAD(Buffer.from(ref));
    decipher.setAuthTag(Buffer.from(payload.tag, "base64"));
    return Buffer.concat([
      decipher.update(Buffer.from(payload.ciphertext, "base64")),
      decipher.final(),
    ]).toString("utf8");
  } catch {
    return unavailable();
  }
}

/** What `runx credential set` stores. */
export interface SetProfileRequest {
  name: string;
  provider: string;
  authMode?: string;
  audience?: string;
  secret: string;
}

/**
 * Stores (or rotates) a profile and makes it the provider's default. A rotation without
 * `--audience` keeps the profile's earlier audience.
 */
export async function setCredentialProfile(
  runxHome: string,
  request: SetProfileRequest,
): Promise<CredentialProfileSummary> {
  const name = checkIdentifier(request.name, "--profile");
  const provider = checkIdentifier(request.provider, "provider");
  const authMode = checkIdentifier(request.authMode ?? DEFAULT_AUTH_MODE, "--auth-mode");
  const audience = request.audience !== undefined ? checkAudience(request.audience) : undefined;
  if (request.secret.trim() === "") {
    throw new RuntimeError("USAGE", "no credential material on stdin");
  }
  if (Buffer.byteLength(request.secret, "utf8") > MAX_SECRET_BYTES) {
    throw new RuntimeError("USAGE", "the credential material on stdin exceeds 64 KiB");
  }
  if (request.secret.includes("\0")) {
    throw new RuntimeError("USAGE", "the credential material on stdin contains a NUL byte");
  }
  const credentials = await readCredentialsConfig(runxHome);
  const prior = credentials.profiles[name];
  const kept = audience ?? prior?.audience;
  const secretRef = await storeSecret(runxHome, request.secret);
  credentials.profiles[name] = {
    provider,
    auth_mode: authMode,
    ...(kept !== undefined ? { audience: kept } : {}),
    secret_ref: secretRef,
  };
  // A profile that moved to another provider no longer defaults the old one.
  for (const [p, profile] of Object.entries(credentials.defaults)) {
    if (profile === name && p !== provider) delete credentials.defaults[p];
  }
  credentials.defaults[provider] = name;
  await writeCredentials(runxHome, credentials);
  if (prior !== undefined && prior.secret_ref !== secretRef)
    await removeSecret(runxHome, prior.secret_ref);
  return {
    name,
    provider,
    auth_mode: authMode,
    ...(kept !== undefined ? { audience: kept } : {}),
    is_default: true,
  };
}

/** Every stored profile, without material. */
export async function listCredentialProfiles(
  runxHome: string,
): Promise<CredentialProfileSummary[]> {
  const credentials = await readCredentialsConfig(runxHome);
  return Object.entries(credentials.profiles)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, profile]) => ({
      name,
      provider: profile.provider,
      auth_mode: profile.auth_mode,
      ...(profile.audience !== undefined ? { audience: profile.audience } : {}),
      is_default: credentials.defaults[profile.provider] === name,
    }));
}

/** Removes a profile, its material and any default naming it; false when there was none. */
export async function removeCredentialProfile(runxHome: string, name: string): Promise<boolean> {
  checkIdentifier(name, "profile");
  const credentials = await readCredentialsConfig(runxHome);
  const profile = credentials.profiles[name];
  if (profile === undefined) return false;
  delete credentials.profiles[name];
  for (const [provider, selected] of Object.entries(credentials.defaults)) {
    if (selected === name) delete credentials.defaults[provider];
  }
  await writeCredentials(runxHome, credentials);
  await removeSecret(runxHome, profile.secret_ref);
  return true;
}

/** Reads `<workspace>/.runx/credentials.json`; a missing file has no bindings. */
export async function readProjectBindings(workspaceRoot: string): Promise<CredentialBindings> {
  const shown = PROJECT_BINDINGS_FILE;
  let text: string;
  try {
    text = (
      await readFileCapped({
        path: path.join(workspaceRoot, shown),
        shown,
        what: shown,
        maxBytes: 1024 * 1024,
      })
    ).toString("utf8");
  } catch (error) {
    if (isRuntimeError(error) && error.details.cause === "ENOENT") return { bindings: {} };
    throw error;
  }
  let value: unknown;
  try {
    value = parseBoundedJson(text, { file: shown });
  } catch (error) {
    if (isRuntimeError(error)) throw error;
    value = undefined;
  }
  const bad = (message: string): never => {
    throw new RuntimeError("CONFIG_INVALID", `${shown} ${message}`, { file: shown });
  };
  if (!isJsonObject(value)) return bad("is not a JSON object");
  for (const key of Object.keys(value))
    if (key !== "bindings") bad(`has an unknown field "${key}"`);
  const raw = value.bindings ?? {};
  if (!isJsonObject(raw)) return bad("bindings is not an object");
  const bindings: Record<string, string> = {};
  for (const [target, profile] of Object.entries(raw)) {
    if (typeof profile !== "string") return bad(`bindings.${target} is not a profile name`);
    bindings[target] = profile;
  }
  return { bindings };
}

/** Binds `target` (`provider:<p>` or `skill:<s>:<c>`) to a stored profile in the project. */
export async function bindProjectCredential(
  workspaceRoot: string,
  runxHome: string,
  target: string,
  profile: string,
): Promise<string> {
  checkIdentifier(profile, "profile");
  const credentials = await readCredentialsConfig(runxHome);
  if (credentials.profiles[profile] === undefined) {
    throw new RuntimeError(
      "CREDENTIAL_PROFILE_NOT_FOUND",
      `credential profile '${profile}' is not configured (runx credential list shows the stored profiles)`,
      { profile },
    );
  }
  const current = await readProjectBindings(workspaceRoot);
  current.bindings[target] = profile;
  const file = path.join(workspaceRoot, PROJECT_BINDINGS_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const sorted = Object.fromEntries(
    Object.entries(current.bindings).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const handle = await open(temp, "wx", 0o644);
  try {
    await handle.writeFile(`${JSON.stringify({ bindings: sorted }, null, 2)}\n`);
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  return PROJECT_BINDINGS_FILE;
}
