/**
 * File-level helpers of the receipt store: file naming, durable atomic writes, the
 * advisory mutation lock and path-free labels for messages.
 */
import { randomUUID } from "../crypto/random.js";
import {
  closeSync,
  fsyncSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RuntimeError } from "../errors.js";

/** File name of the mutation lock. */
export const STORE_LOCK_FILE = ".receipt-store.lock";
/** File name of the snapshot index of earlier versions (removed on a rebuild). */
export const STORE_INDEX_FILE = "index.json";

/** The accepted spellings of a receipt file name before the hex digest, canonical first. */
export const RECEIPT_FILE_SPELLINGS = ["sha256-", "sha256:", "sha256_"] as const;

/** The canonical file name of a content-addressed id; RECEIPT_INVALID for any other id. */
export function receiptFileName(id: string): string {
  const match = /^sha256:([0-9a-f]{64})$/.exec(id);
  if (match === null) {
    throw new RuntimeError("RECEIPT_INVALID", "receipt id is invalid for local store lookup", {
      receipt_id: id.slice(0, 80),
    });
  }
  return `sha256-${match[1]}.json`;
}

/** Every accepted file name of an id, canonical spelling first. */
export function receiptFileNames(id: string): string[] {
  const canonical = receiptFileName(id);
  const hex = canonical.slice("sha256-".length);
  return RECEIPT_FILE_SPELLINGS.map((prefix) => `${prefix}${hex}`);
}

/** The receipt id a file name stands for (any accepted spelling), or undefined. */
export function receiptIdFromFileName(name: string): string | undefined {
  for (const prefix of RECEIPT_FILE_SPELLINGS) {
    if (!name.startsWith(prefix) || !name.endsWith(".json")) continue;
    const hex = name.slice(prefix.length, -".json".length);
    if (/^[0-9a-f]{64}$/.test(hex)) return `sha256:${hex}`;
  }
  return undefined;
}

/** Nanoseconds since the Unix epoch as a decimal string. */
export function unixNanos(): string {
  const millis = BigInt(Date.now());
  const sub = process.hrtime.bigint() % 1_000_000n;
  return (millis * 1_000_000n + sub).toString();
}

/** The error code of a Node system error, if any. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === "object" && error !== null && "code" in error) {
    return typeof error.code === "string" ? error.code : undefined;
  }
  return undefined;
}

/** An IO_ERROR that names the store by label and the errno code, never the path. */
export function storeIoError(label: string, operation: string, error: unknown): RuntimeError {
  const code = errnoCode(error) ?? "unknown";
  return new RuntimeError("IO_ERROR", `receipt store ${label}: ${operation} failed (${code})`, {
    store: label,
    errno: code,
  });
}

/**
 * Writes `name` in `dir` atomically: exclusive 0600 temp file `.<name>.tmp.<pid>-<nanos>`,
 * then rename. `durable` adds fsync of the file before and of the directory after.
 *
 * The calls are synchronous on purpose: each is a few microseconds, while a round trip
 * through libuv's thread pool per call made a receipt write cost milliseconds.
 */
export function writeFileAtomic(
  dir: string,
  name: string,
  contents: string,
  durable: boolean,
): void {
  const temp = join(dir, `.${name}.tmp.${process.pid}-${unixNanos()}`);
  const fd = openSync(temp, "wx", 0o600);
  try {
    const bytes = Buffer.from(contents, "utf8");
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    if (durable) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    ignore(() => unlinkSync(temp));
    throw error;
  }
  closeSync(fd);
  try {
    renameSync(temp, join(dir, name));
  } catch (error) {
    ignore(() => unlinkSync(temp));
    throw error;
  }
  if (durable) {
    const directory = openSync(dir, "r");
    try {
      fsyncSync(directory);
    } finally {
      closeSync(directory);
    }
  }
}

/** Runs a best-effort clean-up step, ignoring its failure. */
function ignore(step: () => unknown): void {
  try {
    step();
  } catch {
    // best effort
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoCode(error) === "EPERM";
  }
}

const UNREADABLE_LOCK_GRACE_MS = 10_000;

/** Removes the lock file when its holder process is gone; leaves a live holder's lock alone. */
function breakStaleLock(path: string): void {
  let content: string;
  try {
    content = readFileSync(path, "utf8");
  } catch {
    return;
  }
  let pid: number | undefined;
  try {
    const parsed = JSON.parse(content) as { pid?: unknown };
    if (typeof parsed.pid === "number") pid = parsed.pid;
  } catch {
    pid = undefined;
  }
  if (pid === undefined) {
    // A holder may be between creating and filling the file; only old junk is stale.
    let mtimeMs: number;
    try {
      mtimeMs = statSync(path).mtimeMs;
    } catch {
      return;
    }
    if (Date.now() - mtimeMs < UNREADABLE_LOCK_GRACE_MS) return;
  } else if (processAlive(pid)) {
    return;
  }
  // Move the stale file aside, then make sure it was the stale one: a fresh lock taken
  // in between is put back instead of being deleted.
  const aside = `${path}.stale.${process.pid}.${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch {
    return;
  }
  let moved: string | undefined;
  try {
    moved = readFileSync(aside, "utf8");
  } catch {
    moved = undefined;
  }
  if (moved !== content) ignore(() => linkSync(aside, path));
  ignore(() => unlinkSync(aside));
}

/**
 * Takes the store's exclusive mutation lock (an O_EXCL lock file holding the owner pid and
 * a token); waits up to `timeoutMs`, breaking locks whose holder process has died.
 * Returns the release function.
 */
export async function acquireStoreLock(
  dir: string,
  label: string,
  timeoutMs: number,
): Promise<() => void> {
  const path = join(dir, STORE_LOCK_FILE);
  const token = randomUUID();
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    try {
      const fd = openSync(path, "wx", 0o600);
      try {
        writeSync(fd, JSON.stringify({ pid: process.pid, token }));
      } finally {
        closeSync(fd);
      }
      return () => {
        let current: string | undefined;
        try {
          current = readFileSync(path, "utf8");
        } catch {
          current = undefined;
        }
        if (current !== undefined && current.includes(token)) ignore(() => unlinkSync(path));
      };
    } catch (error) {
      if (errnoCode(error) !== "EEXIST") throw storeIoError(label, "lock", error);
    }
    breakStaleLock(path);
    if (Date.now() > deadline) {
      throw new RuntimeError("IO_ERROR", `receipt store ${label}: timed out waiting for the lock`, {
        store: label,
      });
    }
    await new Promise((done) => setTimeout(done, delay));
    delay = Math.min(delay * 2, 25);
  }
}

/** FNV-1a 64-bit hash of a string's UTF-8 bytes, as 16 hex digits. */
export function fnv1a64(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= BigInt(byte);
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return hash.toString(16).padStart(16, "0");
}

function inside(base: string, target: string): string | undefined {
  const rel = relative(base, target);
  if (rel === "") return ".";
  if (rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

/**
 * A label for a store directory that never shows an absolute path: workspace-relative,
 * `runx-project:<rel>` under the project dir, else `external-receipt-store:<fnv1a64>`.
 */
export function receiptStoreLabel(
  dir: string,
  bases: { workspaceDir?: string; projectDir?: string } = {},
): string {
  const target = resolve(dir);
  if (bases.workspaceDir !== undefined) {
    const rel = inside(resolve(bases.workspaceDir), target);
    if (rel !== undefined) return rel;
  }
  if (bases.projectDir !== undefined) {
    const rel = inside(resolve(bases.projectDir), target);
    if (rel !== undefined) return `runx-project:${rel}`;
  }
  return `external-receipt-store:${fnv1a64(target)}`;
}
