/**
 * bin/runx.cjs: chunk loading, per-command packs and code caches. Each test runs a private
 * copy of bin/ and dist/ (the shared build stays untouched) and checks that a command gives
 * the same result whatever state the packs and caches are in: none yet, written by an earlier
 * run, written by another build, corrupted, or not writable at all.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../testing/cli.js";

const RUNTIME = join(REPO_ROOT, "packages", "runtime");
let root: string;
let cliDir: string;
let ws: string;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "runx-loader-"));
  // The package layout the runtime expects: bin/, dist/, drizzle/, package.json, node_modules.
  const pkg = join(root, "pkg");
  cpSync(join(RUNTIME, "bin"), join(pkg, "bin"), { recursive: true });
  cpSync(join(RUNTIME, "dist"), join(pkg, "dist"), {
    recursive: true,
    filter: (src) => !/(\.v8cache|pack-[a-z-]+\.js)$/.test(src),
  });
  cpSync(join(RUNTIME, "package.json"), join(pkg, "package.json"));
  symlinkSync(join(RUNTIME, "drizzle"), join(pkg, "drizzle"));
  symlinkSync(join(REPO_ROOT, "node_modules"), join(root, "node_modules"));
  cliDir = join(pkg, "dist", "cli");
  ws = join(root, "ws");
  cpSync(join(REPO_ROOT, "skills", "echo"), join(ws, "skills", "echo"), { recursive: true });
});
afterEach(() => {
  makeWritable(cliDir);
  rmSync(root, { recursive: true, force: true });
});

/** Makes `dir` unwritable, for root too (immutable attribute), and proves it. */
function makeReadOnly(dir: string): void {
  chmodSync(dir, 0o555);
  try {
    execFileSync("chattr", ["+i", dir], { stdio: "ignore" });
  } catch {
    // Not root or no chattr: the mode bits alone apply.
  }
  try {
    writeFileSync(join(dir, "probe"), "x");
  } catch {
    return;
  }
  rmSync(join(dir, "probe"));
  throw new Error("cannot make a directory read-only on this machine");
}

function makeWritable(dir: string): void {
  try {
    execFileSync("chattr", ["-i", dir], { stdio: "ignore" });
  } catch {
    // Was never immutable.
  }
  chmodSync(dir, 0o755);
}

function run(message: string): { code: number | null; result: unknown; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [join(root, "pkg", "bin", "runx.cjs"), "skill", "skills/echo", "--message", message, "--json"],
    {
      cwd: ws,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: ws, RUNX_HOME: join(ws, "home"), RUNX_CWD: ws },
    },
  );
  let result: unknown;
  try {
    result = (JSON.parse(r.stdout) as { result?: unknown }).result;
  } catch {
    result = undefined;
  }
  return { code: r.status, result, stderr: r.stderr };
}

const packFile = () => join(cliDir, "pack-skill.js");
const buildId = (): string =>
  (JSON.parse(readFileSync(join(cliDir, "build.json"), "utf8")) as { build_id: string }).build_id;
const files = () => readdirSync(cliDir);

describe("bin/runx.cjs chunk packs", () => {
  it("packs what a run used, prunes what ordinary runs leave unused, then keeps a stable pack and cache", () => {
    const caches = () =>
      files().filter((f) => f.startsWith("pack-skill.") && f.endsWith(".v8cache"));
    const chunks = () =>
      (/^\/\/runx-pack \S+ \S+ (\S+)\n/.exec(readFileSync(packFile(), "latin1"))?.[1] ?? "")
        .split(",")
        .map((item) => item.split(":")[0]);
    // A new workspace's first run parses the package: its chunks go into the pack.
    expect(run("one")).toMatchObject({ code: 0, result: { message: "one" } });
    const first = readFileSync(packFile(), "latin1");
    expect(first.startsWith(`//runx-pack ${buildId()} `)).toBe(true);
    expect(
      first.includes('"main.js":function (exports, require, module, __filename, __dirname)'),
    ).toBe(true);
    expect(caches()).toEqual([]);
    // The next run finds the package in the package cache: the parser's chunks are dropped.
    expect(run("two")).toMatchObject({ code: 0, result: { message: "two" } });
    const pruned = chunks();
    expect(pruned.length).toBeGreaterThan(5);
    const firstChunks = first.slice(0, first.indexOf("\n")).split(",").length;
    expect(pruned.length).toBeLessThan(firstChunks);
    expect(run("three")).toMatchObject({ code: 0, result: { message: "three" } });
    const pack = readFileSync(packFile(), "latin1");
    expect(caches()).toHaveLength(1);
    for (const message of ["four", "five"]) {
      expect(run(message)).toMatchObject({ code: 0, result: { message } });
    }
    expect(readFileSync(packFile(), "latin1") === pack).toBe(true);
    expect(caches()).toHaveLength(1);
  });

  it("ignores a pack of another build and replaces it", () => {
    expect(run("one").code).toBe(0);
    const pack = readFileSync(packFile(), "latin1");
    // Same chunk names, another build id, and a body that would fail if it were evaluated.
    const foreign = pack.replace(/^\/\/runx-pack \S+/, "//runx-pack 0000000000000000");
    writeFileSync(
      packFile(),
      `${foreign.split("\n")[0]}\n(() => { throw new Error("stale pack ran"); })()\n`,
      "latin1",
    );
    const r = run("two");
    expect(r).toMatchObject({ code: 0, result: { message: "two" } });
    expect(r.stderr).not.toContain("stale pack ran");
    expect(readFileSync(packFile(), "latin1").startsWith(`//runx-pack ${buildId()} `)).toBe(true);
    expect(run("three")).toMatchObject({ code: 0, result: { message: "three" } });
  });

  it("runs from the chunk files when the pack is not valid JavaScript, and rewrites it", () => {
    expect(run("one").code).toBe(0);
    const pack = readFileSync(packFile(), "latin1");
    writeFileSync(packFile(), pack.slice(0, Math.floor(pack.length / 2)), "latin1");
    expect(run("two")).toMatchObject({ code: 0, result: { message: "two" } });
    const rewritten = readFileSync(packFile(), "latin1");
    expect(rewritten.startsWith(`//runx-pack ${buildId()} `)).toBe(true);
    expect(rewritten.endsWith("})\n")).toBe(true);
    expect(run("three")).toMatchObject({ code: 0, result: { message: "three" } });
  });

  it("runs from a read-only dist without packs or caches", () => {
    makeReadOnly(cliDir);
    for (const message of ["one", "two"]) {
      expect(run(message)).toMatchObject({ code: 0, result: { message } });
    }
    expect(
      files().some((f) => f.startsWith("pack-") || f.endsWith(".v8cache") || f.endsWith(".tmp")),
    ).toBe(false);
  });
});
