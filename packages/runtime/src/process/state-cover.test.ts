import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cgroupBaseDir } from "./containment.js";
import {
  planStateCover,
  resetStateCoverProbe,
  shellQuote,
  type StateCoverRequest,
} from "./state-cover.js";
import { stateCoverAvailable, superviseProcess } from "./supervise.js";

let dir: string;
let ws: string;
let state: string;
let home: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-cover-"));
  ws = join(dir, "ws");
  state = join(ws, ".runx");
  home = join(dir, "home");
  mkdirSync(join(state, "registry", "acme-echo"), { recursive: true });
  mkdirSync(join(home, "keys"), { recursive: true });
  writeFileSync(join(state, "state.sqlite"), "SQLite format 3 secret rows");
  writeFileSync(join(state, "registry", "acme-echo", "run.sh"), "echo from the package\n");
  writeFileSync(join(home, "keys", "signing.json"), '{"seed":"key-marker"}');
  writeFileSync(join(ws, "notes.txt"), "workspace file\n");
  symlinkSync(join(state, "state.sqlite"), join(ws, "db-link"));
});
afterEach(() => {
  resetStateCoverProbe();
  rmSync(dir, { recursive: true, force: true });
});

function request(keep: string[] = []): StateCoverRequest {
  return {
    roots: [
      state,
      join(state, "runs", "run_1"),
      join(state, "receipts"),
      home,
      join(home, "registry"),
    ],
    workspaceRoot: ws,
    keep,
  };
}

describe("planStateCover", () => {
  it("covers the outermost existing directories and binds kept ones back", () => {
    const pkg = join(state, "registry", "acme-echo");
    expect(planStateCover(request([pkg, ws]))).toEqual(
      [
        { root: home, keep: [] },
        { root: state, keep: [pkg] },
      ].sort((a, b) => a.root.length - b.root.length),
    );
  });

  it("skips a root that holds the workspace, a file and a missing path", () => {
    writeFileSync(join(dir, "file"), "");
    const plan = planStateCover({
      roots: [dir, join(dir, "file"), join(dir, "missing"), state],
      workspaceRoot: ws,
      keep: [],
    });
    expect(plan).toEqual([{ root: state, keep: [] }]);
  });

  it("quotes for the shell", () => {
    expect(shellQuote("a'b $c")).toBe(`'a'\\''b $c'`);
  });
});

const ENV = { PATH: "/usr/bin:/bin", ODD: "x y 'z' $HOME" };

describe.skipIf(!stateCoverAvailable())("a supervised process under a state cover", () => {
  const sh = (script: string, keep: string[] = [], cwd = ws) =>
    superviseProcess({
      command: "/bin/sh",
      args: ["-c", script, "name", "arg with space", "$HOME", "'q'"],
      cwd,
      env: ENV,
      timeoutMs: 10_000,
      hideState: request(keep),
    });

  it("sees nothing under the state roots by any path and cannot write there", async () => {
    const result = await sh(
      `cat .runx/state.sqlite db-link /proc/self/root${state}/state.sqlite ${home}/keys/signing.json; ls -a .runx ${home}; touch .runx/planted ${home}/planted; cat notes.txt`,
    );
    expect(result.stateIsolation).toBe("mount-namespace");
    const out = `${result.stdout.toString()}${result.stderr.toString()}`;
    expect(out).not.toContain("secret rows");
    expect(out).not.toContain("key-marker");
    expect(out).not.toContain("state.sqlite\n");
    expect(out).toContain("Read-only file system");
    expect(out).toContain("workspace file");
    expect(() => readFileSync(join(state, "planted"))).toThrow();
    expect(() => readFileSync(join(home, "planted"))).toThrow();
  });

  it("cannot go round the cover through another process's /proc entries", async () => {
    const fd = openSync(join(state, "state.sqlite"), "r");
    try {
      const result = await sh(
        `cat /proc/${process.pid}/root${state}/state.sqlite /proc/${process.pid}/fd/${fd} /proc/$PPID/root${state}/state.sqlite`,
      );
      expect(`${result.stdout.toString()}${result.stderr.toString()}`).not.toContain("secret rows");
    } finally {
      closeSync(fd);
    }
  });

  it("keeps the argv and the environment exact and still joins the run's cgroup", async () => {
    // `env` runs as a child of the skill's own shell, which may add PWD; the rest is exact.
    const result = await sh('printf "%s|" "$@"; echo; env; echo --; cat /proc/self/cgroup');
    const [argv, ...rest] = result.stdout.toString().split("\n");
    expect(argv).toBe("arg with space|$HOME|'q'|");
    const end = rest.indexOf("--");
    const env = rest
      .slice(0, end)
      .filter((line) => !line.startsWith("PWD="))
      .sort();
    expect(env).toEqual(
      Object.entries(ENV)
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
    if (cgroupBaseDir() !== null) expect(rest.slice(end).join("\n")).toMatch(/runx-\d+-\d+-\d+/);
  });

  it("execs the command with exactly the given environment", async () => {
    const result = await superviseProcess({
      command: "/usr/bin/env",
      args: [],
      cwd: ws,
      env: ENV,
      hideState: request(),
    });
    expect(result.stateIsolation).toBe("mount-namespace");
    expect(result.stdout.toString().trim().split("\n").sort()).toEqual(
      Object.entries(ENV)
        .map(([k, v]) => `${k}=${v}`)
        .sort(),
    );
  });

  it("binds a kept package back read-only and re-enters the cwd by its path", async () => {
    const pkg = join(state, "registry", "acme-echo");
    const result = await sh("sh run.sh; cat ../../state.sqlite; ls ..; touch x", [pkg], pkg);
    const out = `${result.stdout.toString()}${result.stderr.toString()}`;
    expect(out).toContain("from the package");
    expect(out).not.toContain("secret rows");
    expect(out).toContain("Read-only file system");
  });

  it("falls back to the visible state, and says so, where the host cannot cover", async () => {
    resetStateCoverProbe("unavailable");
    const result = await sh("cat .runx/state.sqlite");
    expect(result.stateIsolation).toBe("none");
    expect(result.stdout.toString()).toContain("secret rows");
  });
});
