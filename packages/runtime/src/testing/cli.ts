/**
 * Test kit for the CLI: scratch workspaces and a runner for the built `runx` binary. Tests
 * drive the real executable (bundled dist/), as a user would.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Repository root (…/packages/runtime/src/testing → four levels up). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
/** The `runx` executable under test. */
export const RUNX_BIN = join(REPO_ROOT, "packages", "runtime", "bin", "runx.cjs");

/** A scratch workspace; `cleanup()` removes it. */
export interface Workspace {
  root: string;
  home: string;
  write(rel: string, contents: string, mode?: number): string;
  read(rel: string): string;
  /** Copies a bundled skill from the repository's skills/ into the workspace. */
  addBundledSkill(name: string): void;
  /** Every file below `rel` (recursive), workspace-relative. */
  files(rel?: string): string[];
  cleanup(): void;
}

/** Creates a scratch workspace (with a separate RUNX_HOME). */
export function makeWorkspace(prefix = "runx-test-"): Workspace {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const root = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(root, { recursive: true });
  mkdirSync(home, { recursive: true });
  const ws: Workspace = {
    root,
    home,
    write(rel, contents, mode) {
      const file = join(root, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, contents, mode !== undefined ? { mode } : {});
      return file;
    },
    read(rel) {
      return readFileSync(join(root, rel), "utf8");
    },
    addBundledSkill(name) {
      cpSync(join(REPO_ROOT, "skills", name), join(root, "skills", name), { recursive: true });
    },
    files(rel = ".") {
      const out: string[] = [];
      const walk = (dir: string, prefix: string) => {
        let entries: string[];
        try {
          entries = readdirSync(dir);
        } catch {
          return;
        }
        for (const name of entries) {
          const path = join(dir, name);
          const relPath = prefix === "" ? name : `${prefix}/${name}`;
          if (statSync(path).isDirectory()) walk(path, relPath);
          else out.push(relPath);
        }
      };
      walk(join(root, rel), rel === "." ? "" : rel);
      return out.sort();
    },
    cleanup() {
      rmSync(base, { recursive: true, force: true });
    },
  };
  return ws;
}

/** The outcome of one CLI invocation. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (throws when it is not exactly one). */
  json<T = Record<string, unknown>>(): T;
}

/** Options of a CLI invocation. */
export interface CliOptions {
  env?: Record<string, string>;
  stdin?: string;
  timeoutMs?: number;
  /** Called with the child once spawned (e.g. to send signals). */
  onSpawn?: (child: ChildProcess) => void;
}

/** A clean environment: PATH, HOME, RUNX_HOME, RUNX_CWD, TZ and NO_COLOR only, plus `extra`. */
export function cleanEnv(
  ws: Workspace,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: ws.home,
    RUNX_HOME: join(ws.home, ".runx"),
    RUNX_CWD: ws.root,
    TZ: "UTC",
    NO_COLOR: "1",
    ...extra,
  };
}

/** Runs `runx <args>` in the workspace and collects its output. */
export function runx(ws: Workspace, args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNX_BIN, ...args], {
      cwd: ws.root,
      env: cleanEnv(ws, options.env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(
        new Error(`runx ${args.join(" ")} did not finish within ${options.timeoutMs ?? 20000} ms`),
      );
    }, options.timeoutMs ?? 20_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out).toString("utf8");
      const stderr = Buffer.concat(err).toString("utf8");
      resolve({
        code,
        signal,
        stdout,
        stderr,
        json<T>() {
          const trimmed = stdout.trim();
          if (trimmed.includes("\n"))
            throw new Error(`expected one JSON document, got:\n${stdout}`);
          return JSON.parse(trimmed) as T;
        },
      });
    });
    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
    options.onSpawn?.(child);
  });
}

/** Polls `check` until it returns a value or the deadline passes (no fixed sleeps). */
export async function pollUntil<T>(
  check: () => T | undefined | false,
  { timeoutMs = 5000, intervalMs = 20, what = "condition" } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** True while a process with this pid exists and is not a zombie awaiting its reaper. */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 3 (after the parenthesised command) is the state; Z = exited, not yet reaped.
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}
