/**
 * Reading a file runx parses, with a size cap that holds whatever the path turns out to be.
 * The file is opened without blocking (a FIFO must not hang the open), must be a regular file
 * by its own descriptor (a symlink to `/dev/zero`, a FIFO or a directory is refused), is
 * refused before reading when its size is over the cap, and is read only up to the cap, so a
 * file that grows after the check is refused too. Errors name the file, its size and the cap.
 *
 * The caps (docs/governance.md): SKILL.md, X.yaml, a standalone graph document and
 * a harness fixture 1 MiB each; a local package 64 MiB and 4,096 files in total (registry
 * packages are smaller still: registry/files.ts).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { Stats } from "node:fs";
import { open } from "node:fs/promises";
import { RuntimeError } from "../errors.js";

const MIB = 1024 * 1024;

/** Size caps of the documents in a package, in bytes. */
export const PACKAGE_FILE_LIMITS = {
  skillMd: MIB,
  profile: MIB,
  graphDocument: MIB,
  fixture: MIB,
} as const;
/** A local package (every file the package digest covers) holds at most this many bytes. */
export const PACKAGE_MAX_BYTES = 64 * MIB;
/** ... and at most this many files. */
export const PACKAGE_MAX_FILE_COUNT = 4096;

/** What is read: the path to open, the name errors show, what it is called, and the cap. */
export interface CappedFile {
  path: string;
  /** The file as errors name it (workspace-relative where possible). */
  shown: string;
  /** What the file is, for messages: `SKILL.md`, `the answers file`, ... */
  what: string;
  maxBytes: number;
}

/** `1 MiB`, `512 KiB`, `300 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= MIB && bytes % MIB === 0) return `${bytes / MIB} MiB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(1)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** FILE_TOO_LARGE naming the file, its size (when known) and the cap. */
export function fileTooLarge(file: CappedFile, size?: number): RuntimeError {
  const measured =
    size === undefined ? `more than ${formatBytes(file.maxBytes)}` : formatBytes(size);
  return new RuntimeError(
    "FILE_TOO_LARGE",
    `${file.what} is ${measured}; the limit is ${formatBytes(file.maxBytes)}`,
    { file: file.shown, ...(size !== undefined ? { size } : {}), limit: file.maxBytes },
  );
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isCharacterDevice() || info.isBlockDevice()) return "a device";
  if (info.isSocket()) return "a socket";
  return "not a regular file";
}

function checkStat(file: CappedFile, info: Stats): void {
  if (!info.isFile())
    throw new RuntimeError("IO_ERROR", `${file.what} is ${kindOf(info)}, not a regular file`, {
      file: file.shown,
    });
  if (info.size > file.maxBytes) throw fileTooLarge(file, info.size);
}

function openError(file: CappedFile, error: unknown): RuntimeError {
  const code = (error as NodeJS.ErrnoException).code;
  return new RuntimeError("IO_ERROR", `cannot read ${file.what}`, {
    file: file.shown,
    ...(code !== undefined ? { cause: code } : {}),
  });
}

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * The read buffer: sized from the stat, grown (up to one byte past the cap) when the file
 * turns out longer, so a file that grew since the stat is read or refused, never cut short.
 */
class CappedBuffer {
  buffer: Buffer;
  total = 0;

  constructor(
    private readonly file: CappedFile,
    size: number,
  ) {
    this.buffer = Buffer.alloc(Math.min(size, file.maxBytes) + 1);
  }

  /** Room for the next read; throws FILE_TOO_LARGE once the cap is passed. */
  room(): number {
    if (this.total > this.file.maxBytes) throw fileTooLarge(this.file);
    if (this.total === this.buffer.length) {
      const grown = Buffer.alloc(Math.min(this.buffer.length * 2, this.file.maxBytes + 1));
      this.buffer.copy(grown);
      this.buffer = grown;
    }
    return this.buffer.length - this.total;
  }

  result(): Buffer {
    return this.buffer.subarray(0, this.total);
  }
}

/** Reads `file` under its cap (see the module comment). Throws IO_ERROR or FILE_TOO_LARGE. */
export async function readFileCapped(file: CappedFile): Promise<Buffer> {
  let handle;
  try {
    handle = await open(file.path, FLAGS);
  } catch (error) {
    throw openError(file, error);
  }
  try {
    const info = await handle.stat();
    checkStat(file, info);
    const out = new CappedBuffer(file, info.size);
    for (;;) {
      const room = out.room();
      const { bytesRead } = await handle.read(out.buffer, out.total, room, out.total);
      if (bytesRead === 0) return out.result();
      out.total += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

/** The synchronous {@link readFileCapped}, for the synchronous readers (digest, config). */
export function readFileCappedSync(file: CappedFile): Buffer {
  let fd: number;
  try {
    fd = openSync(file.path, FLAGS);
  } catch (error) {
    throw openError(file, error);
  }
  try {
    const info = fstatSync(fd);
    checkStat(file, info);
    const out = new CappedBuffer(file, info.size);
    for (;;) {
      const room = out.room();
      const bytesRead = readSync(fd, out.buffer, out.total, room, out.total);
      if (bytesRead === 0) return out.result();
      out.total += bytesRead;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * `file` read in pieces of at most `pieceBytes` (a regular file, as for readFileCapped, but
 * with no cap on the whole: for readers that stream, holding a piece at a time).
 */
export async function* readFilePieces(
  file: Omit<CappedFile, "maxBytes">,
  pieceBytes = MIB,
): AsyncGenerator<Buffer> {
  const capped = { ...file, maxBytes: Number.POSITIVE_INFINITY };
  let handle;
  try {
    handle = await open(file.path, FLAGS);
  } catch (error) {
    throw openError(capped, error);
  }
  try {
    checkStat(capped, await handle.stat());
    for (;;) {
      const piece = Buffer.alloc(pieceBytes);
      const { bytesRead } = await handle.read(piece, 0, pieceBytes, null);
      if (bytesRead === 0) return;
      yield piece.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
