/**
 * Publisher keys and registry trust (signed manifests, keys trusted via env).
 *
 * The publisher key signs registry manifests with Ed25519 (the receipt signer's primitives):
 * `RUNX_REGISTRY_PUBLISHER_KID` + `RUNX_REGISTRY_PUBLISHER_ED25519_SEED_BASE64` (both or
 * neither), else `$RUNX_HOME/keys/registry-publisher.json`, which `runx registry publish`
 * creates (mode 0600) on first use.
 *
 * Trust: a reader accepts a signature only from a known key. Known keys are the entries of
 * `RUNX_REGISTRY_TRUSTED_KEYS` (comma- or whitespace-separated `<kid>:<public key base64>[:<tier>]`)
 * and the local publisher key. Each key has a highest trust tier (default `community`; the
 * local key too unless the trusted-keys list raises it): a record claiming a higher tier than
 * its signing key carries is refused. Promotion is therefore out-of-band configuration.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { RuntimeError } from "../errors.js";
import { sha256Prefixed } from "../receipts/canonical.js";
import {
  decodeBase64Flexible,
  ED25519_KEY_BYTES,
  ed25519FromSeed,
  encodeBase64UrlNoPad,
  generateEd25519Seed,
} from "../receipts/ed25519.js";
import type { Ed25519KeyPair } from "../receipts/ed25519.js";

/** Trust tiers, lowest first. */
export const TRUST_TIERS = ["community", "verified", "first_party"] as const;
/** A trust tier. */
export type TrustTier = (typeof TRUST_TIERS)[number];

/** True for a known tier name. */
export function isTrustTier(value: unknown): value is TrustTier {
  return typeof value === "string" && (TRUST_TIERS as readonly string[]).includes(value);
}

/** The environment variables this module reads. */
export const REGISTRY_KEY_ENV = {
  publisherKid: "RUNX_REGISTRY_PUBLISHER_KID",
  publisherSeed: "RUNX_REGISTRY_PUBLISHER_ED25519_SEED_BASE64",
  trustedKeys: "RUNX_REGISTRY_TRUSTED_KEYS",
} as const;

type Env = Readonly<Record<string, string | undefined>>;

/** A publisher's signing key. */
export interface PublisherKey {
  kid: string;
  pair: Ed25519KeyPair;
  /** base64url (no padding) of the raw public key. */
  publicKey: string;
  /** Where the key came from (for messages; never the key itself). */
  source: "env" | "runx-home";
}

/** A key a reader trusts, with the highest tier it may sign. */
export interface TrustedKey {
  kid: string;
  publicKey: Uint8Array;
  maxTier: TrustTier;
}

const KEY_FILE_SCHEMA = "runx.registry.publisher_key.v1";
const KID = /^[A-Za-z0-9._-]{1,128}$/;

function configError(message: string): never {
  throw new RuntimeError("SIGNER_CONFIG_INVALID", message);
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function keyFrom(kid: string, seedText: string, source: PublisherKey["source"]): PublisherKey {
  if (!KID.test(kid)) configError("registry publisher key id must match [A-Za-z0-9._-]{1,128}");
  const seed = decodeBase64Flexible(seedText);
  if (seed === undefined || seed.length !== ED25519_KEY_BYTES) {
    configError(
      source === "env"
        ? `${REGISTRY_KEY_ENV.publisherSeed} is not a base64 32-byte Ed25519 seed`
        : "$RUNX_HOME/keys/registry-publisher.json holds malformed key material",
    );
  }
  const pair = ed25519FromSeed(seed);
  return { kid, pair, publicKey: encodeBase64UrlNoPad(pair.publicKey), source };
}

/** The key file under `$RUNX_HOME`. */
export function publisherKeyFile(runxHome: string): string {
  return path.join(runxHome, "keys", "registry-publisher.json");
}

/**
 * The publisher key from the environment or `$RUNX_HOME`. With `create`, a missing key file is
 * generated (publishing); otherwise undefined is returned when there is none.
 */
export function loadPublisherKey(
  env: Env,
  runxHome: string,
  options: { create: boolean },
): PublisherKey | undefined {
  const kid = nonEmpty(env, REGISTRY_KEY_ENV.publisherKid);
  const seed = nonEmpty(env, REGISTRY_KEY_ENV.publisherSeed);
  if (kid !== undefined && seed !== undefined) return keyFrom(kid, seed, "env");
  if (kid !== undefined || seed !== undefined) {
    configError(
      `set both ${REGISTRY_KEY_ENV.publisherKid} and ${REGISTRY_KEY_ENV.publisherSeed}, or neither`,
    );
  }
  const file = publisherKeyFile(runxHome);
  if (existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      return configError("$RUNX_HOME/keys/registry-publisher.json is not valid JSON");
    }
    const doc = parsed as { schema?: unknown; kid?: unknown; seed?: unknown };
    if (
      doc.schema !== KEY_FILE_SCHEMA ||
      typeof doc.kid !== "string" ||
      typeof doc.seed !== "string"
    ) {
      return configError(
        `$RUNX_HOME/keys/registry-publisher.json is not a ${KEY_FILE_SCHEMA} document`,
      );
    }
    return keyFrom(doc.kid, doc.seed, "runx-home");
  }
  if (!options.create) return undefined;
  const fresh = generateEd25519Seed();
  const pair = ed25519FromSeed(fresh);
  const newKid = `local-${sha256Prefixed(pair.publicKey).slice(7, 23)}`;
  const body = {
    schema: KEY_FILE_SCHEMA,
    kid: newKid,
    seed: encodeBase64UrlNoPad(fresh),
    public_key: encodeBase64UrlNoPad(pair.publicKey),
  };
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, file);
  return keyFrom(newKid, body.seed, "runx-home");
}

function tierRank(tier: TrustTier): number {
  return TRUST_TIERS.indexOf(tier);
}

/** True when `tier` is at most `max`. */
export function tierAllowed(tier: TrustTier, max: TrustTier): boolean {
  return tierRank(tier) <= tierRank(max);
}

/** The keys a reader trusts: `RUNX_REGISTRY_TRUSTED_KEYS` plus the local publisher key. */
export function trustedKeys(env: Env, runxHome: string): Map<string, TrustedKey> {
  const out = new Map<string, TrustedKey>();
  const listed = nonEmpty(env, REGISTRY_KEY_ENV.trustedKeys);
  for (const item of listed === undefined ? [] : listed.split(/[\s,]+/)) {
    if (item === "") continue;
    const [kid = "", key = "", tier = "community", extra] = item.split(":");
    const bytes = decodeBase64Flexible(key);
    if (
      !KID.test(kid) ||
      bytes === undefined ||
      bytes.length !== ED25519_KEY_BYTES ||
      !isTrustTier(tier) ||
      extra !== undefined
    ) {
      throw new RuntimeError(
        "VERIFIER_CONFIG_INVALID",
        `${REGISTRY_KEY_ENV.trustedKeys} entries read <kid>:<Ed25519 public key base64>[:community|verified|first_party]`,
        { entry: kid },
      );
    }
    out.set(kid, { kid, publicKey: bytes, maxTier: tier });
  }
  const local = loadPublisherKey(env, runxHome, { create: false });
  if (local !== undefined && !out.has(local.kid)) {
    out.set(local.kid, { kid: local.kid, publicKey: local.pair.publicKey, maxTier: "community" });
  }
  return out;
}
