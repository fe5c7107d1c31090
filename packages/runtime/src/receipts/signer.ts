/**
 * Receipt signers and their configuration from environment values. A signer signs the
 * ASCII bytes of the body-digest string. The local-development signer writes the pseudo
 * signature `sig:<digest>`; the production signer is Ed25519 from a 32-byte seed.
 * Environment values arrive as a plain record: only `env.ts` files read `process.env`.
 */
import { RuntimeError } from "../errors.js";
import { isSha256Digest, sha256Prefixed } from "./canonical.js";
import { decodeBase64Flexible, ED25519_KEY_BYTES, ed25519FromSeed } from "./ed25519.js";
import { encodeBase64UrlNoPad } from "./ed25519.js";
import type { Issuer, IssuerType } from "./model.js";
import { ed25519Verifier, SIGNATURE_BASE64_PREFIX } from "./verifier.js";
import type { ReceiptVerifier, SignatureMode } from "./verifier.js";

/** Something that seals receipts: its issuer identity and a signature over a body digest. */
export interface ReceiptSigner {
  readonly issuer: Issuer;
  readonly mode: SignatureMode;
  /** Returns the `signature.value` for a body digest string (`sha256:<hex>`). */
  sign(bodyDigest: string): string;
  /** A verifier that accepts this signer's signatures (production signers). */
  readonly verifier?: ReceiptVerifier;
}

/** A production signer, which also exposes its raw public key. */
export interface Ed25519ReceiptSigner extends ReceiptSigner {
  readonly mode: "production";
  readonly publicKey: Uint8Array;
  readonly verifier: ReceiptVerifier;
}

/** Environment variable names of the production signer and the verification key. */
export const RECEIPT_KEY_ENV = {
  signKid: "RUNX_RECEIPT_SIGN_KID",
  signSeed: "RUNX_RECEIPT_SIGN_ED25519_SEED_BASE64",
  signIssuerType: "RUNX_RECEIPT_SIGN_ISSUER_TYPE",
  verifyKid: "RUNX_RECEIPT_VERIFY_KID",
  verifyPublicKey: "RUNX_RECEIPT_VERIFY_ED25519_PUBLIC_KEY_BASE64",
} as const;

/** Environment values as handed down by an `env.ts`. */
export type EnvRecord = Readonly<Record<string, string | undefined>>;

/** The issuer of local-development receipts. */
export const LOCAL_DEVELOPMENT_ISSUER: Readonly<Issuer> = Object.freeze({
  type: "local",
  kid: "runtime-skeleton",
  public_key_sha256: "sha256:runtime-skeleton-public",
});

/** The local-development signer: pseudo signature `sig:<body digest>`. */
export function localDevelopmentSigner(): ReceiptSigner {
  return {
    issuer: { ...LOCAL_DEVELOPMENT_ISSUER },
    mode: "local-development",
    sign: (bodyDigest) => `sig:${bodyDigest}`,
  };
}

/** Why an issuer cannot seal production receipts, or undefined when it can. */
export function productionIssuerProblem(issuer: Issuer): string | undefined {
  if (issuer.type === "local" || issuer.type === "verifier") {
    return "production receipt signer issuer type is unsupported";
  }
  if (issuer.kid.trim() === "") return "production receipt signer key id is missing";
  if (issuer.public_key_sha256.trim() === "") {
    return "production receipt signer public key hash is missing";
  }
  if (!isSha256Digest(issuer.public_key_sha256)) {
    return "production receipt signer public key hash is malformed";
  }
  return undefined;
}

/** Options of an Ed25519 production signer. */
export interface Ed25519SignerOptions {
  kid: string;
  issuerType: IssuerType;
  /** Raw 32-byte seed, or its base64url-no-pad / standard base64 text. */
  seed: Uint8Array | string;
}

function signerConfigError(message: string): RuntimeError {
  return new RuntimeError("SIGNER_CONFIG_INVALID", message);
}

/** An Ed25519 production signer; throws SIGNER_CONFIG_INVALID (never echoing the seed). */
export function ed25519Signer(options: Ed25519SignerOptions): Ed25519ReceiptSigner {
  const seed = typeof options.seed === "string" ? decodeBase64Flexible(options.seed) : options.seed;
  if (seed === undefined || seed.length !== ED25519_KEY_BYTES) {
    throw signerConfigError("production receipt signer key material is malformed");
  }
  const pair = ed25519FromSeed(seed);
  const issuer: Issuer = {
    type: options.issuerType,
    kid: options.kid,
    public_key_sha256: sha256Prefixed(pair.publicKey),
  };
  const problem = productionIssuerProblem(issuer);
  if (problem !== undefined) throw signerConfigError(problem);
  return {
    issuer,
    mode: "production",
    publicKey: pair.publicKey,
    verifier: ed25519Verifier([{ kid: options.kid, publicKey: pair.publicKey }]),
    sign: (bodyDigest) =>
      `${SIGNATURE_BASE64_PREFIX}${encodeBase64UrlNoPad(pair.sign(bodyDigest))}`,
  };
}

function nonEmpty(env: EnvRecord, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function signingEnv(env: EnvRecord): Ed25519SignerOptions | undefined {
  const kid = nonEmpty(env, RECEIPT_KEY_ENV.signKid);
  const seed = nonEmpty(env, RECEIPT_KEY_ENV.signSeed);
  const issuerType = nonEmpty(env, RECEIPT_KEY_ENV.signIssuerType);
  if (kid === undefined && seed === undefined && issuerType === undefined) return undefined;
  if (kid !== undefined && seed !== undefined && issuerType === undefined) {
    throw signerConfigError(
      `production receipt signer issuer type is missing: set ${RECEIPT_KEY_ENV.signIssuerType} to hosted or ci`,
    );
  }
  if (kid === undefined || seed === undefined || issuerType === undefined) {
    throw signerConfigError(
      `production receipt signing requires ${RECEIPT_KEY_ENV.signKid}, ${RECEIPT_KEY_ENV.signSeed}, and ${RECEIPT_KEY_ENV.signIssuerType} to be set together`,
    );
  }
  if (issuerType !== "hosted" && issuerType !== "ci") {
    throw signerConfigError(
      `production receipt signer issuer type is unsupported: ${RECEIPT_KEY_ENV.signIssuerType} must be hosted or ci`,
    );
  }
  return { kid, seed, issuerType };
}

/**
 * The signer the environment configures: production when all three
 * `RUNX_RECEIPT_SIGN_*` values are set, local development when none is; anything
 * in between is SIGNER_CONFIG_INVALID.
 */
export function signerFromEnv(env: EnvRecord): ReceiptSigner {
  const options = signingEnv(env);
  return options === undefined ? localDevelopmentSigner() : ed25519Signer(options);
}

/**
 * The production verifier the environment configures, or undefined. An explicit
 * `RUNX_RECEIPT_VERIFY_*` pair is authoritative; a partial pair is VERIFIER_CONFIG_INVALID
 * (it never falls back); otherwise a complete signing identity verifies its own receipts.
 */
export function verifierFromEnv(env: EnvRecord): ReceiptVerifier | undefined {
  const kid = nonEmpty(env, RECEIPT_KEY_ENV.verifyKid);
  const publicKey = nonEmpty(env, RECEIPT_KEY_ENV.verifyPublicKey);
  if (kid !== undefined && publicKey !== undefined) {
    const bytes = decodeBase64Flexible(publicKey);
    if (bytes === undefined) {
      throw new RuntimeError(
        "VERIFIER_CONFIG_INVALID",
        `${RECEIPT_KEY_ENV.verifyPublicKey} is not valid Ed25519 public key material`,
      );
    }
    return ed25519Verifier([{ kid, publicKey: bytes }]);
  }
  if (kid !== undefined || publicKey !== undefined) {
    throw new RuntimeError(
      "VERIFIER_CONFIG_INVALID",
      `set both ${RECEIPT_KEY_ENV.verifyKid} and ${RECEIPT_KEY_ENV.verifyPublicKey} for production verification`,
    );
  }
  const signing = signingEnv(env);
  return signing === undefined ? undefined : ed25519Signer(signing).verifier;
}

/** A copy of `env` without `RUNX_RECEIPT_SIGN_*` (never handed to child processes). */
export function stripReceiptSigningEnv(env: EnvRecord): Record<string, string | undefined> {
  const copy: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!name.startsWith("RUNX_RECEIPT_SIGN_")) copy[name] = value;
  }
  return copy;
}
