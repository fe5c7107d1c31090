/** Shared helpers of the store tests: temp databases, a settable clock, sample runs. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NewRun } from "../state-store.js";

/** A temp directory that `cleanup()` removes. */
export interface TempDir {
  dir: string;
  dbPath: string;
  cleanup(): void;
}

/** Creates a fresh temp directory; `dbPath` points at a not-yet-existing nested file. */
export function tempDir(): TempDir {
  const dir = mkdtempSync(join(tmpdir(), "runx-store-"));
  return {
    dir,
    dbPath: join(dir, "nested", ".runx", "state.sqlite"),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A clock tests move by hand. */
export interface FakeClock {
  now: () => Date;
  set(ms: number): void;
}

/** Starts at 2026-01-01T00:00:00.000Z. */
export function fakeClock(startMs = Date.UTC(2026, 0, 1)): FakeClock {
  let current = startMs;
  return { now: () => new Date(current), set: (ms) => (current = ms) };
}

/** A run with the required fields filled; `overrides` win. */
export function sampleRun(id: string, overrides: Partial<NewRun> = {}): NewRun {
  return {
    id,
    skillName: "echo",
    runner: "default",
    skillRef: "skills/echo",
    packageDir: "skills/echo",
    packageDigest: `sha256:${"a".repeat(64)}`,
    inputsDigest: `sha256:${"b".repeat(64)}`,
    ...overrides,
  };
}

/** `run_default_<16hex>` from a number, so ids sort independently of creation order. */
export function runId(n: number): string {
  const scrambled = (n * 2654435761) % 2 ** 32;
  return `run_default_${scrambled.toString(16).padStart(8, "0")}${n.toString(16).padStart(8, "0")}`;
}
