/**
 * All-or-nothing file changes for `fs.write` and `fs.apply_bundle`. Planning resolves and
 * checks every path before anything touches the disk. Applying stages each write in a temp
 * file beside its target (written, fsynced), then commits: an existing target is kept as a
 * hard-linked backup before the temp file is renamed over it, and a delete renames the file
 * to a backup. A failure at any point rolls back what was committed, removes staged files
 * and the directories this transaction created, and rethrows. Backups are dropped only after
 * every change landed; parent directories are fsynced last.
 */
import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { copyFile, link, mkdir, open, rename, rmdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { RuntimeError } from "../../errors.js";
import { sha256Prefixed } from "../../receipts/canonical.js";
import {
  assertParentUnchanged,
  resolveWritable,
  type ToolRoot,
  type WritablePath,
} from "../paths.js";

/** Total bytes one transaction may write (the same bound as a read bundle). */
export const FS_TRANSACTION_MAX_BYTES = 32 * 1024 * 1024;

/** One requested write. */
export interface WriteRequest {
  path: string;
  contents: string;
}

/** A checked plan; nothing has been written yet. */
export interface TransactionPlan {
  writes: Array<{ target: WritablePath; field: string; data: Buffer }>;
  deletes: Array<{ target: WritablePath; field: string }>;
}

/** What a committed transaction reports (relative paths only). */
export interface TransactionReport {
  writes: Array<{ path: string; bytes_written: number; sha256: string }>;
  deletes: Array<{ path: string; status: "deleted" | "missing" }>;
}

function conflict(field: string, rel: string, why: string): RuntimeError {
  return new RuntimeError("INPUT_INVALID", `${field} ${JSON.stringify(rel)} ${why}`, {
    path: field,
    target: rel,
  });
}

/**
 * Resolves and checks every path (containment, no symlink targets, no duplicates, no file
 * that is also another entry's directory) and the byte budget, without side effects.
 */
export async function planTransaction(
  root: ToolRoot,
  request: {
    writes: readonly WriteRequest[];
    deletes: readonly string[];
    /** The input field naming write `i` in errors (`path`, `writes.3.path`). */
    writeField: (i: number) => string;
  },
): Promise<TransactionPlan> {
  const plan: TransactionPlan = { writes: [], deletes: [] };
  let total = 0;
  for (const [i, write] of request.writes.entries()) {
    const field = request.writeField(i);
    const target = await resolveWritable(root, write.path, field);
    const data = Buffer.from(write.contents, "utf8");
    total += data.length;
    if (total > FS_TRANSACTION_MAX_BYTES) {
      throw new RuntimeError(
        "LIMIT_EXCEEDED",
        `the writes exceed ${FS_TRANSACTION_MAX_BYTES} bytes in total`,
        { path: field, limit: FS_TRANSACTION_MAX_BYTES },
      );
    }
    plan.writes.push({ target, field, data });
  }
  for (const [i, rel] of request.deletes.entries()) {
    const field = `deletes.${i}`;
    plan.deletes.push({ target: await resolveWritable(root, rel, field), field });
  }
  const claimed = new Map<string, string>();
  for (const { target, field } of [...plan.writes, ...plan.deletes]) {
    if (claimed.has(target.absolute)) throw conflict(field, target.relative, "appears twice");
    claimed.set(target.absolute, field);
  }
  for (const { target, field } of [...plan.writes, ...plan.deletes]) {
    for (const dir of target.missingDirs) {
      if (claimed.has(dir))
        throw conflict(
          field,
          target.relative,
          "needs a directory where another entry writes a file",
        );
    }
  }
  return plan;
}

function tempName(dir: string, name: string, kind: "tmp" | "bak"): string {
  return join(dir, `.${name}.runx-${randomBytes(6).toString("hex")}.${kind}`);
}

async function fsyncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, constants.O_RDONLY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms cannot fsync a directory; the renames themselves are still atomic.
  }
}

async function quietly(action: () => Promise<unknown>): Promise<void> {
  try {
    await action();
  } catch {
    // Rollback and cleanup are best-effort; the original failure is what gets reported.
  }
}

/** Writes `data` to a fresh temp file beside the target, preserving an existing file's mode. */
async function stage(target: WritablePath, data: Buffer): Promise<string> {
  const name = target.absolute.slice(target.parent.length + 1);
  const temp = tempName(target.parent, name, "tmp");
  const handle = await open(temp, "wx", 0o666);
  try {
    if (target.exists) await handle.chmod((await stat(target.absolute)).mode & 0o7777);
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temp;
}

/** Keeps the current file under a backup name (hard link; copy where links are unsupported). */
async function backup(target: WritablePath): Promise<string> {
  const name = target.absolute.slice(target.parent.length + 1);
  const saved = tempName(target.parent, name, "bak");
  try {
    await link(target.absolute, saved);
  } catch {
    await copyFile(target.absolute, saved, constants.COPYFILE_EXCL);
  }
  return saved;
}

/** Applies a checked plan all-or-nothing; see the module comment. */
export async function applyTransaction(plan: TransactionPlan): Promise<TransactionReport> {
  const createdDirs: string[] = [];
  const staged = new Map<WritablePath, string>();
  const undo: Array<() => Promise<unknown>> = [];
  const backups: string[] = [];
  const report: TransactionReport = { writes: [], deletes: [] };
  try {
    for (const { target, field } of plan.writes) {
      for (const dir of target.missingDirs) {
        try {
          await mkdir(dir);
          createdDirs.push(dir);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      await assertParentUnchanged(target, field);
    }
    for (const { target, data } of plan.writes) staged.set(target, await stage(target, data));

    for (const { target, data } of plan.writes) {
      const temp = staged.get(target) as string;
      if (target.exists) {
        const saved = await backup(target);
        backups.push(saved);
        await rename(temp, target.absolute);
        undo.push(() => rename(saved, target.absolute));
      } else {
        await rename(temp, target.absolute);
        undo.push(() => unlink(target.absolute));
      }
      staged.delete(target);
      report.writes.push({
        path: target.relative,
        bytes_written: data.length,
        sha256: sha256Prefixed(data),
      });
    }
    for (const { target, field } of plan.deletes) {
      if (!target.exists) {
        report.deletes.push({ path: target.relative, status: "missing" });
        continue;
      }
      await assertParentUnchanged(target, field);
      const name = target.absolute.slice(target.parent.length + 1);
      const saved = tempName(target.parent, name, "bak");
      await rename(target.absolute, saved);
      backups.push(saved);
      undo.push(() => rename(saved, target.absolute));
      report.deletes.push({ path: target.relative, status: "deleted" });
    }
  } catch (error) {
    for (const step of undo.reverse()) await quietly(step);
    for (const temp of staged.values()) await quietly(() => unlink(temp));
    for (const dir of createdDirs.reverse()) await quietly(() => rmdir(dir));
    throw error;
  }
  for (const saved of backups) await quietly(() => unlink(saved));
  const parents = new Set([...plan.writes, ...plan.deletes].map(({ target }) => target.parent));
  for (const dir of parents) await fsyncDirectory(dir);
  return report;
}
