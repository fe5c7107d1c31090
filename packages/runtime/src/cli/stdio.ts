/**
 * Synchronous writes to the standard streams. Writing through `fs.writeSync` avoids building
 * Node's stream objects for stdout/stderr (a measurable share of a short command's start-up),
 * and a synchronous write cannot be lost when the process exits right after it.
 */
import { writeSync } from "node:fs";

const pause = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `text` to file descriptor `fd`, waiting out a full non-blocking pipe. */
export function writeAllSync(fd: number, text: string): void {
  const bytes = Buffer.from(text, "utf8");
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EAGAIN") {
        Atomics.wait(pause, 0, 0, 2);
        continue;
      }
      if (code === "EPIPE") return; // the reader went away; nothing left to tell it
      throw error;
    }
  }
}
