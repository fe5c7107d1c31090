/**
 * Raw Ed25519 over node:crypto: 32-byte seeds and public keys in, 64-byte signatures out,
 * plus the strict base64 decoding upstream applies to key material (base64url without
 * padding first, then standard base64; non-canonical encodings are refused).
 */
import { nodeCrypto } from "../crypto/native.js";
import type { KeyObject } from "node:crypto";

// DER headers that wrap a raw 32-byte Ed25519 seed (PKCS#8) or public key (SPKI).
const PKCS8_SEED_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_KEY_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

/** Length in bytes of an Ed25519 seed and of a public key. */
export const ED25519_KEY_BYTES = 32;
/** Length in bytes of an Ed25519 signature. */
export const ED25519_SIGNATURE_BYTES = 64;

function decodeUrlSafeNoPad(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const bytes = Buffer.from(text, "base64url");
  return bytes.toString("base64url") === text ? bytes : undefined;
}

function decodeStandard(text: string): Buffer | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const bytes = Buffer.from(text, "base64");
  return bytes.toString("base64") === text ? bytes : undefined;
}

/** Decodes base64url-without-padding, else standard base64; undefined when neither parses. */
export function decodeBase64Flexible(text: string): Uint8Array | undefined {
  return decodeUrlSafeNoPad(text) ?? decodeStandard(text);
}

/** Encodes bytes as base64url without padding. */
export function encodeBase64UrlNoPad(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}

/** An Ed25519 key pair derived from a seed. The private half never leaves this object. */
export interface Ed25519KeyPair {
  readonly publicKey: Uint8Array;
  sign(message: string | Uint8Array): Uint8Array;
}

/** Derives the key pair of a 32-byte seed. */
export function ed25519FromSeed(seed: Uint8Array): Ed25519KeyPair {
  if (seed.length !== ED25519_KEY_BYTES) throw new RangeError("Ed25519 seed must be 32 bytes");
  const { createPrivateKey, createPublicKey, sign } = nodeCrypto();
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_SEED_PREFIX, seed]),
    format: "der",
    type: "pkcs8",
  });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  const publicKey = new Uint8Array(spki.subarray(spki.length - ED25519_KEY_BYTES));
  return {
    publicKey,
    sign: (message) => new Uint8Array(sign(null, Buffer.from(message), privateKey)),
  };
}

function publicKeyObject(publicKey: Uint8Array): KeyObject | undefined {
  if (publicKey.length !== ED25519_KEY_BYTES) return undefined;
  try {
    return nodeCrypto().createPublicKey({
      key: Buffer.concat([SPKI_KEY_PREFIX, publicKey]),
      format: "der",
      type: "spki",
    });
  } catch {
    return undefined;
  }
}

/** True when `signature` is a valid Ed25519 signature of `message` under `publicKey`. */
export function ed25519Verify(
  publicKey: Uint8Array,
  message: string | Uint8Array,
  signature: Uint8Array,
): boolean {
  const key = publicKeyObject(publicKey);
  if (key === undefined || signature.length !== ED25519_SIGNATURE_BYTES) return false;
  try {
    return nodeCrypto().verify(null, Buffer.from(message), key, signature);
  } catch {
    return false;
  }
}

/** A fresh random 32-byte seed (tests and key generation). */
export function generateEd25519Seed(): Uint8Array {
  return new Uint8Array(nodeCrypto().randomBytes(ED25519_KEY_BYTES));
}
