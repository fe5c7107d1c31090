/**
 * SHA-256. Short strings (what the data store and the receipts hash on every operation: event
 * JSON, chain templates, records) go through the runtime's own addon (native/sha256.c, built by
 * `npm install`) once a process has hashed NATIVE_AFTER of them: it hashes them without
 * node:crypto's per-call set-up. Everything else, and everything where the addon is not built
 * or does not load, goes through node:crypto, loaded on first use (see ./native.ts): commands
 * that never hash never load it. Both give the same digest for every input (the tests compare
 * them). (A JavaScript SHA-256 for small inputs was tried: interpreted, it cost a run more
 * than loading node:crypto does.)
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type * as NodeCrypto from "node:crypto";
import { nodeCrypto } from "./native.js";

type WithOneShot = typeof NodeCrypto & {
  hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string;
};

/** The addon's functions (native/sha256.c). */
export interface NativeSha256 {
  /** Lowercase hex SHA-256 of the string's UTF-8 bytes (at most NATIVE_MAX_UNITS units). */
  sha256Hex(text: string): string;
  /** `sha256:` and the same hex. */
  sha256Prefixed(text: string): string;
}

/**
 * Longest string (UTF-16 units) the addon is given: a unit is at most three UTF-8 bytes, and
 * the addon hashes at most 4095 bytes (from the stack).
 */
export const NATIVE_MAX_UNITS = 1365;

const ADDON = join("build", "Release", "runx_sha256.node");
/**
 * dlopen's RTLD_NOW (2 in Linux's and macOS's dlfcn.h; Windows ignores the flags): every symbol
 * bound at load. Not read from node:os, which no command would otherwise load.
 */
const RTLD_NOW = 2;
const ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

/** True when `dir` holds the runtime package (its package.json names @runx/runtime). */
function isRuntimePackage(dir: string): boolean {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as unknown;
    return (manifest as { name?: unknown } | null)?.name === "@runx/runtime";
  } catch {
    return false;
  }
}

/**
 * The addon's file, looked for only where the runtime package itself is: the package this
 * module belongs to (it sits in src/crypto/, dist/ or dist/cli/ of it), else the
 * `node_modules/@runx/runtime` Node would resolve from `from` (a bundle of another package).
 * A file of that name anywhere else (a parent folder, a workspace) is never loaded.
 */
export function nativeSha256Path(from: string | undefined): string | undefined {
  if (from === undefined) return undefined;
  for (const root of [dirname(from), dirname(dirname(from))]) {
    const candidate = join(root, ADDON);
    if (existsSync(candidate) && isRuntimePackage(root)) return candidate;
  }
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", "@runx", "runtime", ADDON);
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Loads the addon found from `from`; undefined when there is none, it does not load (every
 * symbol is bound at load, so a missing one fails here, not at a call), or it does not give
 * the known SHA-256 of "abc".
 */
export function loadNativeSha256(from: string | undefined): NativeSha256 | undefined {
  const path = nativeSha256Path(from);
  if (path === undefined) return undefined;
  try {
    const module = { exports: {} as Partial<NativeSha256> };
    process.dlopen(module, path, RTLD_NOW);
    const addon = module.exports;
    if (
      typeof addon.sha256Hex !== "function" ||
      typeof addon.sha256Prefixed !== "function" ||
      addon.sha256Hex("abc") !== ABC ||
      addon.sha256Prefixed("abc") !== `sha256:${ABC}`
    ) {
      return undefined;
    }
    return addon as NativeSha256;
  } catch {
    return undefined;
  }
}

/** The loaded addon (null: looked for, not available; undefined: not looked for yet). */
let native: NativeSha256 | null | undefined;

/**
 * Short strings a process hashes through node:crypto before it loads the addon. Loading it
 * (finding it, dlopen, a known-answer check) costs a few hundred microseconds, which a short
 * command hashing a few dozen strings would not win back; a process that keeps hashing (the
 * API, a data-store client, a long run) passes this count within its first operations.
 */
export const NATIVE_AFTER = 1024;
let shortHashes = 0;

/**
 * The addon this process hashes short strings with, loaded now if it was not yet; undefined
 * where it is not available.
 */
export function nativeSha256(): NativeSha256 | undefined {
  if (native === undefined) native = loadNativeSha256(import.meta.dirname) ?? null;
  return native ?? undefined;
}

/** True once this process hashes short strings with the addon. */
export const nativeSha256InUse = (): boolean => native !== undefined && native !== null;

/** The addon for a short string, once NATIVE_AFTER of them went through node:crypto. */
function addonForShort(): NativeSha256 | null | undefined {
  if (native !== undefined || ++shortHashes <= NATIVE_AFTER) return native;
  native = loadNativeSha256(import.meta.dirname) ?? null;
  return native;
}

/** SHA-256 through node:crypto. */
function cryptoSha256Hex(data: string | Uint8Array): string {
  const crypto = nodeCrypto() as WithOneShot;
  // The one-shot hash (Node >= 20.12) skips the Hash object.
  return crypto.hash !== undefined
    ? crypto.hash("sha256", data, "hex")
    : crypto.createHash("sha256").update(data).digest("hex");
}

/** Lowercase hex SHA-256 of `data` (strings are hashed as UTF-8). */
export function sha256Hex(data: string | Uint8Array): string {
  if (typeof data === "string" && data.length <= NATIVE_MAX_UNITS) {
    const addon = native ?? addonForShort();
    if (addon) return addon.sha256Hex(data);
  }
  return cryptoSha256Hex(data);
}

/** `sha256:` and the lowercase hex SHA-256 of `data` (strings are hashed as UTF-8). */
export function sha256Prefixed(data: string | Uint8Array): string {
  if (typeof data === "string" && data.length <= NATIVE_MAX_UNITS) {
    const addon = native ?? addonForShort();
    if (addon) return addon.sha256Prefixed(data);
  }
  return `sha256:${cryptoSha256Hex(data)}`;
}

/** An incremental SHA-256. */
export interface Sha256 {
  update(data: string | Uint8Array): Sha256;
  /** The digest as lowercase hex; the hasher cannot be used afterwards. */
  digestHex(): string;
}

/** Bytes an incremental SHA-256 collects before it starts a native hash object. */
const COLLECT_LIMIT = 1024 * 1024;

/**
 * A new incremental SHA-256. Short inputs (up to 1 MiB in all) are collected and hashed in one
 * call at the end: node:crypto's Hash object costs a process its first-use set-up (a stream
 * class and its machinery), which a CLI command hashing a few kilobytes need not pay. Longer
 * inputs are hashed as they arrive.
 */
export function createSha256(): Sha256 {
  let parts: Uint8Array[] | undefined = [];
  let collected = 0;
  let hash: NodeCrypto.Hash | undefined;
  const finished = (): Error => new Error("this SHA-256 has already been digested");
  const hasher: Sha256 = {
    update(data) {
      if (hash !== undefined) {
        hash.update(data);
        return hasher;
      }
      if (parts === undefined) throw finished();
      // A copy: the caller may reuse its buffer once update() returns.
      const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data);
      if (collected + bytes.length <= COLLECT_LIMIT) {
        parts.push(bytes);
        collected += bytes.length;
        return hasher;
      }
      hash = nodeCrypto().createHash("sha256");
      for (const part of parts) hash.update(part);
      parts = undefined;
      hash.update(bytes);
      return hasher;
    },
    digestHex: () => {
      if (hash !== undefined) return hash.digest("hex");
      if (parts === undefined) throw finished();
      const all = Buffer.concat(parts, collected);
      parts = undefined;
      return sha256Hex(all);
    },
  };
  return hasher;
}
