import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ensureStateDir, stateBaseOf } from "./workspace.js";

let base: string;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "runx-statedir-")));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

function codeOf(action: () => unknown): string | undefined {
  try {
    action();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe("stateBaseOf", () => {
  it("is the directory holding the outermost .runx, else the directory itself", () => {
    expect(stateBaseOf("/w/.runx/runs/r1/artifacts")).toBe("/w");
    expect(stateBaseOf("/home/u/.runx/registry")).toBe("/home/u");
    expect(stateBaseOf("/srv/receipts")).toBe("/srv/receipts");
  });
});

describe("ensureStateDir", () => {
  it("creates every missing component, the base too", () => {
    const dir = join(base, "ws", ".runx", "runs", "r1", "artifacts");
    expect(ensureStateDir(dir)).toBe(true);
    expect(existsSync(dir)).toBe(true);
  });

  it("refuses a symlinked component with PATH_ESCAPE and creates nothing through it", () => {
    const ws = join(base, "ws");
    const outside = join(base, "outside");
    mkdirSync(join(ws, ".runx"), { recursive: true });
    mkdirSync(outside);
    symlinkSync(outside, join(ws, ".runx", "runs"));
    const dir = join(ws, ".runx", "runs", "r1", "artifacts", "blobs");
    let message = "";
    try {
      ensureStateDir(dir);
    } catch (error) {
      message = `${(error as { code: string }).code}: ${(error as Error).message}`;
    }
    expect(message).toBe(
      "PATH_ESCAPE: .runx/runs is a symbolic link; runx keeps its own state only in real directories",
    );
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses a symlinked .runx and a component that is a file", () => {
    const ws = join(base, "ws");
    mkdirSync(ws);
    mkdirSync(join(base, "elsewhere"));
    symlinkSync(join(base, "elsewhere"), join(ws, ".runx"));
    expect(codeOf(() => ensureStateDir(join(ws, ".runx", "receipts")))).toBe("PATH_ESCAPE");
    const other = join(base, "other");
    mkdirSync(join(other, ".runx"), { recursive: true });
    writeFileSync(join(other, ".runx", "runs"), "");
    expect(codeOf(() => ensureStateDir(join(other, ".runx", "runs", "r1")))).toBe("PATH_ESCAPE");
  });

  it("only checks with create: false, answering whether the directory exists", () => {
    const dir = join(base, "ws", ".runx", "cache");
    expect(ensureStateDir(dir, { create: false })).toBe(false);
    expect(existsSync(join(base, "ws"))).toBe(false);
    ensureStateDir(dir);
    expect(ensureStateDir(dir, { create: false })).toBe(true);
  });
});
