/**
 * A durable `EffectLedger` named by one path (the runtime uses
 * `.runx/receipts/provider-effects.json`). Entries are append-only: a key is written once;
 * recording the same key with the same request digest again is a no-op, with another digest
 * it is refused (IDEMPOTENCY_CONFLICT). Each key is one file in `<ledger>.entries/`, named by
 * the key's sha256, written and synced under a temporary name and published with `link()`,
 * which fails if the name exists. So there is no read-modify-write of a shared file: writers
 * of different keys (other processes, other instances) cannot lose each other's entries, a
 * crash leaves an entry whole or absent, and of two writers of one key exactly one wins. A
 * ledger file at the path itself (the single-document form earlier runtimes wrote) is still
 * read, never rewritten.
 *
 * Claims (`claim`) are one file per key in `<ledger>.claims/`, created exclusively (`wx`):
 * the file system decides which of two processes racing on one key runs the effect.
 */
import { createHash, randomBytes } from "node:crypto";
import { link, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { RuntimeError } from "../errors.js";
import { ensureStateDir } from "../workspace.js";
import type { EffectLedger, JsonRecord } from "./types.js";

/** Schema tag of the single-document ledger file earlier runtimes wrote. */
export const EFFECT_LEDGER_SCHEMA = "runx.provider_effects.v1";

/** One recorded effect. */
export interface EffectLedgerEntry {
  key: string;
  request_digest: string;
  output: JsonRecord;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function isEntry(value: unknown): value is EffectLedgerEntry {
  return (
    isObject(value) &&
    typeof value.key === "string" &&
    typeof value.request_digest === "string" &&
    isObject(value.output)
  );
}

/** Reads the single-file ledger; a missing file is empty, a malformed one is STORE_ERROR. */
async function readLegacyLedger(file: string): Promise<EffectLedgerEntry[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw new RuntimeError("STORE_ERROR", "cannot read the effect ledger", { reason: "read" });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RuntimeError("STORE_ERROR", "the effect ledger is not valid JSON", {
      reason: "parse",
    });
  }
  if (
    !isObject(parsed) ||
    parsed.schema !== EFFECT_LEDGER_SCHEMA ||
    !Array.isArray(parsed.entries) ||
    !parsed.entries.every(isEntry)
  ) {
    throw new RuntimeError("STORE_ERROR", "the effect ledger is malformed", { reason: "shape" });
  }
  return parsed.entries;
}

/** Writes `text` to `file` atomically and durably (temp file, fsync, rename, fsync dir). */
export async function writeFileAtomic(file: string, text: string): Promise<void> {
  const dir = dirname(file);
  // The ledgers live in runx's state (receipt dir, `.runx/providers`): never through a link.
  ensureStateDir(dir);
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(text, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true });
    throw new RuntimeError("STORE_ERROR", "cannot write the state file", {
      reason: (error as NodeJS.ErrnoException).code ?? "write",
    });
  }
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is best effort (not supported on every platform).
  }
}

/** The directory holding one entry file per key, beside the legacy single-file ledger. */
const entriesDir = (file: string): string => `${file}.entries`;
const keyName = (key: string): string => createHash("sha256").update(key).digest("hex");

const recordedConflict = (): RuntimeError =>
  new RuntimeError(
    "IDEMPOTENCY_CONFLICT",
    "the idempotency key is already recorded for a different request",
    { reason: "ledger" },
  );

/** Parses one entry file; a torn or foreign one is STORE_ERROR. */
function parseEntry(text: string, key?: string): EffectLedgerEntry {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RuntimeError("STORE_ERROR", "an effect ledger entry is not valid JSON", {
      reason: "parse",
    });
  }
  if (!isEntry(parsed) || (key !== undefined && parsed.key !== key)) {
    throw new RuntimeError("STORE_ERROR", "an effect ledger entry is malformed", {
      reason: "shape",
    });
  }
  return parsed;
}

/** The entry file of `key`, or undefined when the key has none. */
async function readEntryFile(file: string, key: string): Promise<EffectLedgerEntry | undefined> {
  let text: string;
  try {
    text = await readFile(`${entriesDir(file)}/${keyName(key)}.json`, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new RuntimeError("STORE_ERROR", "cannot read the effect ledger", { reason: "read" });
  }
  return parseEntry(text, key);
}

/**
 * Every recorded entry: the single-file ledger older runtimes wrote, then one file per key,
 * ordered by key. A malformed file of either kind is STORE_ERROR.
 */
export async function readEffectLedger(file: string): Promise<EffectLedgerEntry[]> {
  const legacy = await readLegacyLedger(file);
  let names: string[];
  try {
    names = await readdir(entriesDir(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return legacy;
    throw new RuntimeError("STORE_ERROR", "cannot read the effect ledger", { reason: "read" });
  }
  const entries: EffectLedgerEntry[] = [];
  for (const name of names.filter((n) => /^[0-9a-f]{64}\.json$/.test(n)).sort()) {
    entries.push(parseEntry(await readFile(`${entriesDir(file)}/${name}`, "utf8")));
  }
  entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return [...legacy, ...entries];
}

/** Writes `key`'s entry file exclusively; false when another writer created it first. */
async function createEntryFile(file: string, entry: EffectLedgerEntry): Promise<boolean> {
  const dir = entriesDir(file);
  ensureStateDir(dirname(file));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const final = `${dir}/${keyName(entry.key)}.json`;
  const temp = `${dir}/.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temp, "wx", 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(entry, null, 2)}\n`, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    // link() publishes the complete, synced file under its name or fails with EEXIST: a
    // reader never sees a torn entry and two writers of one key cannot both win.
    await link(temp, final);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw new RuntimeError("STORE_ERROR", "cannot write the effect ledger", {
      reason: (error as NodeJS.ErrnoException).code ?? "write",
    });
  } finally {
    await rm(temp, { force: true });
  }
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Directory fsync is best effort (not supported on every platform).
  }
  return true;
}

/**
 * Creates a file-backed, append-only effect ledger. Each key is its own file, created
 * exclusively, so concurrent writers in separate processes (or separate instances) of
 * different keys never overwrite each other, and of one key exactly one wins.
 */
export function createFileEffectLedger(file: string): EffectLedger {
  const find = async (key: string): Promise<EffectLedgerEntry | undefined> =>
    (await readEntryFile(file, key)) ??
    (await readLegacyLedger(file)).find((entry) => entry.key === key);
  return {
    async lookup(key) {
      const found = await find(key);
      return found === undefined
        ? undefined
        : { request_digest: found.request_digest, output: found.output };
    },
    async record(key, entry) {
      const existing =
        (await find(key)) ??
        ((await createEntryFile(file, {
          key,
          request_digest: entry.request_digest,
          output: entry.output,
        }))
          ? undefined
          : await readEntryFile(file, key));
      if (existing !== undefined && existing.request_digest !== entry.request_digest) {
        throw recordedConflict();
      }
    },
    claim: (key, requestDigest) => claimFile(file, key, requestDigest),
  };
}

const conflict = (): RuntimeError =>
  new RuntimeError(
    "IDEMPOTENCY_CONFLICT",
    "the idempotency key is already claimed for a different request",
    { reason: "claim" },
  );

/** Claims `key` by creating its claim file exclusively; see `EffectLedger.claim`. */
async function claimFile(
  file: string,
  key: string,
  requestDigest: string,
): Promise<"claimed" | "held"> {
  const dir = `${file}.claims`;
  ensureStateDir(dirname(file));
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const name = createHash("sha256").update(key).digest("hex");
  const path = `${dir}/${name}.json`;
  const body = `${JSON.stringify({ key, request_digest: requestDigest })}\n`;
  try {
    const handle = await open(path, "wx", 0o600);
    try {
      await handle.writeFile(body, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    return "claimed";
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      throw new RuntimeError("STORE_ERROR", "cannot write the claim file", { reason: "claim" });
    }
  }
  // The claimant writes its digest right after creating the file: poll briefly for it.
  for (let attempt = 0; attempt < 50; attempt++) {
    const text = await readFile(path, "utf8").catch(() => "");
    if (text.endsWith("\n")) {
      const held = JSON.parse(text) as { request_digest?: unknown };
      if (held.request_digest !== requestDigest) throw conflict();
      return "held";
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new RuntimeError("STORE_ERROR", "a claim file stayed incomplete", { reason: "claim" });
}

/** An in-memory effect ledger with the same semantics (tests, dry runs). */
export function createMemoryEffectLedger(): EffectLedger {
  const entries = new Map<string, { request_digest: string; output: JsonRecord }>();
  const claims = new Map<string, string>();
  return {
    claim(key, requestDigest) {
      const held = claims.get(key);
      if (held === undefined) {
        claims.set(key, requestDigest);
        return Promise.resolve("claimed");
      }
      return held === requestDigest ? Promise.resolve("held") : Promise.reject(conflict());
    },
    lookup: (key) => Promise.resolve(entries.get(key)),
    record(key, entry) {
      const existing = entries.get(key);
      if (existing !== undefined && existing.request_digest !== entry.request_digest) {
        const error = new RuntimeError(
          "IDEMPOTENCY_CONFLICT",
          "the idempotency key is already recorded for a different request",
          { reason: "ledger" },
        );
        return Promise.reject(error);
      }
      if (existing === undefined) entries.set(key, { ...entry });
      return Promise.resolve();
    },
  };
}
