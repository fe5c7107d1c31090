/** Small file helpers shared by the filesystem and artifact tools. */
import { constants } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { RuntimeError } from "../errors.js";

/** Opens a file read-only without following a symlink in its final component. */
export function openForRead(absolute: string): Promise<FileHandle> {
  return open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
}

/** Reads up to `length` bytes at `position`, looping over short reads; fewer only at EOF. */
export async function readAt(
  handle: FileHandle,
  length: number,
  position: number,
): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await handle.read(buffer, filled, length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return buffer.subarray(0, filled);
}

/** True for a UTF-8 continuation byte (10xxxxxx). */
export function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

/**
 * How many of the first `max` bytes of `bytes` end on a character boundary: `max` itself
 * unless the byte after the cut continues a character, in which case the cut backs off.
 */
export function utf8BoundaryAtOrBefore(bytes: Uint8Array, max: number): number {
  let cut = Math.min(max, bytes.length);
  if (cut === bytes.length) return cut;
  while (cut > 0 && isContinuationByte(bytes[cut])) cut--;
  return cut;
}

/** Decodes strict UTF-8; invalid bytes are INPUT_INVALID naming `what`. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new RuntimeError("INPUT_INVALID", `${what} is not valid UTF-8 text`);
  }
}
