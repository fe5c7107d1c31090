import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readFileCapped, readFileCappedSync } from "./read-capped.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-capped-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, maxBytes = 16) => ({
  path: join(dir, name),
  shown: name,
  what: name,
  maxBytes,
});

describe("readFileCapped", () => {
  it("reads a file up to exactly its cap and refuses one byte more, naming size and limit", async () => {
    writeFileSync(join(dir, "ok"), "x".repeat(16));
    expect((await readFileCapped(file("ok"))).toString()).toBe("x".repeat(16));
    expect(readFileCappedSync(file("ok")).toString()).toBe("x".repeat(16));
    writeFileSync(join(dir, "big"), "x".repeat(17));
    const refusal = expect.objectContaining({
      code: "FILE_TOO_LARGE",
      message: "big is 17 bytes; the limit is 16 bytes",
      details: { file: "big", size: 17, limit: 16 },
    });
    await expect(readFileCapped(file("big"))).rejects.toThrow(refusal);
    expect(() => readFileCappedSync(file("big"))).toThrow(refusal);
  });

  it("refuses a FIFO, a device and a directory by their descriptor, without blocking", async () => {
    execFileSync("mkfifo", [join(dir, "fifo")]);
    symlinkSync("/dev/zero", join(dir, "zero"));
    for (const [name, kind] of [
      ["fifo", "a FIFO"],
      ["zero", "a device"],
      [".", "a directory"],
    ] as const) {
      const refusal = expect.objectContaining({
        code: "IO_ERROR",
        message: `${name} is ${kind}, not a regular file`,
      });
      await expect(readFileCapped(file(name))).rejects.toThrow(refusal);
      expect(() => readFileCappedSync(file(name))).toThrow(refusal);
    }
  });

  it("names a missing file with its errno and no host path", async () => {
    await expect(readFileCapped(file("absent"))).rejects.toThrow(
      expect.objectContaining({ code: "IO_ERROR", details: { file: "absent", cause: "ENOENT" } }),
    );
  });
});
