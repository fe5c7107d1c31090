/**
 * node:crypto, loaded on first use. Loading it costs ~4 ms of a CLI command's start-up (it pulls
 * in a dozen internal modules), more than most commands spend hashing, so the start-up path
 * hashes small inputs in JavaScript (./sha256.ts) and draws randomness from the kernel
 * (./random.ts); this loader serves large inputs, keys, signatures and everything else.
 */
import type * as NodeCrypto from "node:crypto";
import { createRequire } from "node:module";

let loaded: typeof NodeCrypto | undefined;

/** True once node:crypto is loaded (through {@link nodeCrypto}). */
export function nodeCryptoLoaded(): boolean {
  return loaded !== undefined;
}

/** The node:crypto module. */
export function nodeCrypto(): typeof NodeCrypto {
  loaded ??= createRequire(import.meta.url)("node:crypto") as typeof NodeCrypto;
  return loaded;
}
