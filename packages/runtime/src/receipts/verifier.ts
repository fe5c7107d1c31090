/**
 * Signature verification: a verifier resolves the issuer's key and checks the signature
 * over the body-digest string. A signature policy says which signatures are acceptable:
 * local development accepts the `sig:<digest>` pseudo signature (and real ones when a
 * verifier is supplied); production accepts only real Ed25519 signatures.
 */
import { sha256Prefixed } from "./canonical.js";
import { decodeBase64Flexible, ED25519_KEY_BYTES, ed25519Verify } from "./ed25519.js";
import type { Issuer, Signature } from "./model.js";

/** Why a signature did not verify (mapped to `signature_*` finding codes). */
export type SignatureFailure =
  | "missing_key"
  | "malformed_key"
  | "key_hash_mismatch"
  | "unsupported_issuer"
  | "unsupported_algorithm"
  | "malformed_signature"
  | "signature_mismatch";

/** Checks one receipt signature; returns undefined when it verifies. */
export interface ReceiptVerifier {
  verify(issuer: Issuer, signature: Signature, bodyDigest: string): SignatureFailure | undefined;
  /** The key ring of an Ed25519 verifier (what lets verification workers rebuild it). */
  readonly keys?: readonly VerificationKey[];
}

/** A trusted key: its id and raw public key (32 bytes for a usable key). */
export interface VerificationKey {
  readonly kid: string;
  readonly publicKey: Uint8Array;
}

/** The prefix of a real (non-pseudo) signature value. */
export const SIGNATURE_BASE64_PREFIX = "base64:";

function decodeSignatureValue(value: string): Uint8Array | undefined {
  if (!value.startsWith(SIGNATURE_BASE64_PREFIX)) return undefined;
  return decodeBase64Flexible(value.slice(SIGNATURE_BASE64_PREFIX.length));
}

/** A verifier over a set of `{kid, public key}` pairs (the production key ring). */
export function ed25519Verifier(keys: readonly VerificationKey[]): ReceiptVerifier {
  const ring = keys.map((key) => ({ kid: key.kid, publicKey: new Uint8Array(key.publicKey) }));
  return {
    keys: ring.map((key) => ({ kid: key.kid, publicKey: new Uint8Array(key.publicKey) })),
    verify(issuer, signature, bodyDigest) {
      if (issuer.type === "local" || issuer.type === "verifier") return "unsupported_issuer";
      if (issuer.kid.trim() === "") return "missing_key";
      const key = ring.find((candidate) => candidate.kid === issuer.kid);
      if (key === undefined) return "missing_key";
      if (key.publicKey.length !== ED25519_KEY_BYTES) return "malformed_key";
      if (issuer.public_key_sha256 !== sha256Prefixed(key.publicKey)) return "key_hash_mismatch";
      if (signature.alg !== "Ed25519") return "unsupported_algorithm";
      const bytes = decodeSignatureValue(signature.value);
      if (bytes === undefined || bytes.length !== 64) return "malformed_signature";
      return ed25519Verify(key.publicKey, bodyDigest, bytes) ? undefined : "signature_mismatch";
    },
  };
}

/**
 * The verifier `runx verify --allow-local-development-signatures` uses for a single
 * receipt: only `sig:sha256:` pseudo signatures, equal to `sig:` + the body digest.
 */
export const localPseudoSignatureVerifier: ReceiptVerifier = {
  verify(_issuer, signature, bodyDigest) {
    if (!signature.value.startsWith("sig:sha256:")) return "malformed_signature";
    return signature.value === `sig:${bodyDigest}` ? undefined : "signature_mismatch";
  },
};

/** Whether pseudo signatures are acceptable. */
export type SignatureMode = "local-development" | "production";

/** Which signatures a read, write or verification accepts. */
export interface SignaturePolicy {
  readonly mode: SignatureMode;
  /** Real-signature key ring. Production without one cannot verify anything. */
  readonly verifier?: ReceiptVerifier;
}

/** Local development: pseudo signatures verify; real ones only with `verifier`. */
export function localDevelopmentPolicy(verifier?: ReceiptVerifier): SignaturePolicy {
  return verifier === undefined
    ? { mode: "local-development" }
    : { mode: "local-development", verifier };
}

/** Production: only real signatures that `verifier` accepts. */
export function productionPolicy(verifier?: ReceiptVerifier): SignaturePolicy {
  return verifier === undefined ? { mode: "production" } : { mode: "production", verifier };
}

/** True for the local pseudo signature form `sig:...`. */
export function isPseudoSignature(value: string): boolean {
  return value.startsWith("sig:");
}

/**
 * The verifier a policy implies, or undefined when it cannot verify at all (production
 * without a key ring, which yields `signature_verifier_missing`).
 */
export function policyVerifier(policy: SignaturePolicy): ReceiptVerifier | undefined {
  if (policy.mode === "production" && policy.verifier === undefined) return undefined;
  return {
    verify(issuer, signature, bodyDigest) {
      if (isPseudoSignature(signature.value)) {
        if (policy.mode === "production") return "malformed_signature";
        return signature.value === `sig:${bodyDigest}` ? undefined : "signature_mismatch";
      }
      if (policy.verifier === undefined) return "missing_key";
      return policy.verifier.verify(issuer, signature, bodyDigest);
    },
  };
}
