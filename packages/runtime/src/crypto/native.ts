/**
 * node:crypto, loaded on first use: loading it costs a few milliseconds of a CLI command's
 * start-up (it pulls in a dozen internal modules), so modules on that path (hashing, random
 * ids, Ed25519) reach it through here instead of importing it at module load.
 */
import type * as NodeCrypto from "node:crypto";

let loaded: typeof NodeCrypto | undefined;

/** The node:crypto module. */
export function nodeCrypto(): typeof NodeCrypto {
  // process.getBuiltinModule needs no resolver and no file URL of this module (the CLI
  // bundle computes import.meta.url on every read).
  loaded ??= process.getBuiltinModule("node:crypto");
  return loaded;
}
