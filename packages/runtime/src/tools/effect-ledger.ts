/**
 * A durable `EffectLedger` in one JSON file (the runtime places it at
 * `.runx/receipts/provider-effects.json`). Entries are append-only: a key is written once;
 * recording the same key with the same request digest again is a no-op, with another digest
 * it is refused (IDEMPOTENCY_CONFLICT). Every write replaces the file atomically (write a
 * synced temporary file, rename it over the old one), so a crash leaves the old or the new
 * ledger, never a torn one. Writes through one ledger instance are serialized; the file is
 * re-read before each write so separate instances in turn see each other's entries.
 *
 * Claims (`claim`) are one file per key in `<ledger>.claims/`, created exclusively (`wx`):
 * the file system decides which of two processes racing on one key runs the effect.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import { RuntimeError } from "../errors.js";
import { ensureStateDir } from "../workspace.js";
import type { EffectLedger, JsonRecord } from "./types.js";

/** Schema tag of the ledger file. */
export const EFFECT_LEDGER_SCHEMA = "runx.provider_effects.v1";

/** One recorded effect. */
export interface EffectLedgerEntry {
  key: string;
  request_digest: string;
  output: JsonRecord;
}

interface LedgerDocument {
  schema: typeof EFFECT_LEDGER_SCHEMA;
  entries: EffectLedgerEntry[];
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

/** Reads the ledger; a missing file is an empty ledger, a malformed one is STORE_ERROR. */
export async function readEffectLedger(file: string): Promise<EffectLedgerEntry[]> {
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

/** Creates a file-backed, append-only effect ledger. */
export function createFileEffectLedger(file: string): EffectLedger {
  let queue: Promise<unknown> = Promise.resolve();
  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const next = queue.then(task, task);
    queue = next.catch(() => undefined);
    return next;
  };
  return {
    lookup(key) {
      return serialized(async () => {
        const found = (await readEffectLedger(file)).find((entry) => entry.key === key);
        return found === undefined
          ? undefined
          : { request_digest: found.request_digest, output: found.output };
      });
    },
    record(key, entry) {
      return serialized(async () => {
        const entries = await readEffectLedger(file);
        const existing = entries.find((candidate) => candidate.key === key);
        if (existing !== undefined) {
          if (existing.request_digest === entry.request_digest) return;
          throw new RuntimeError(
            "IDEMPOTENCY_CONFLICT",
            "the idempotency key is already recorded for a different request",
            { reason: "ledger" },
          );
        }
        entries.push({ key, request_digest: entry.request_digest, output: entry.output });
        const document: LedgerDocument = { schema: EFFECT_LEDGER_SCHEMA, entries };
        await writeFileAtomic(file, `${JSON.stringify(document, null, 2)}\n`);
      });
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
