import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cgroupBaseDir, containRun, reapRunCgroups } from "./containment.js";
import { superviseProcess } from "./supervise.js";
import { isGone, readPid, waitFor } from "./test-support.js";

const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-contain-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A script that starts a `setsid` escapee writing its pid to `escapee.pid`, then `tail`s. */
function escaper(tail: string): string {
  const file = join(dir, "escape.sh");
  writeFileSync(
    file,
    `setsid sh -c 'echo $$ > ${dir}/escapee.pid; exec sleep 1003' </dev/null >/dev/null 2>&1 &\n${tail}\n`,
  );
  return file;
}

const modes = [...(cgroupBaseDir() !== null ? (["cgroup"] as const) : []), "process-tree" as const];

describe.each(modes)("containment: %s", (mode) => {
  it("kills a setsid escapee when the run times out", async () => {
    const result = await superviseProcess({
      command: "/bin/sh",
      args: [escaper(`while [ ! -s ${dir}/escapee.pid ]; do :; done; exec sleep 1004`)],
      cwd: dir,
      env: ENV,
      timeoutMs: 800,
      graceMs: 100,
      containment: mode,
    });
    expect(result.timedOut).toBe(true);
    expect(result.containment).toBe(mode);
    const escapee = readPid(join(dir, "escapee.pid"));
    expect(escapee).toBeDefined();
    await waitFor(() => isGone(escapee!), 3000, "the escapee to die");
  });

  it("kills a setsid escapee when the leader exits normally", async () => {
    const result = await superviseProcess({
      command: "/bin/sh",
      // The leader waits until the escapee has started (and so left its session) and exits 0.
      args: [escaper(`while [ ! -s ${dir}/escapee.pid ]; do :; done; sleep 0.3`)],
      cwd: dir,
      env: ENV,
      timeoutMs: 10_000,
      containment: mode,
    });
    expect(result.exitCode).toBe(0);
    const escapee = readPid(join(dir, "escapee.pid"));
    await waitFor(() => isGone(escapee!), 3000, "the escapee to die");
  });

  it("kills a setsid escapee when the caller aborts", async () => {
    const controller = new AbortController();
    const running = superviseProcess({
      command: "/bin/sh",
      args: [escaper("exec sleep 1004")],
      cwd: dir,
      env: ENV,
      signal: controller.signal,
      abortGraceMs: 100,
      containment: mode,
    });
    await waitFor(() => readPid(join(dir, "escapee.pid")) !== undefined, 3000, "the escapee");
    // Let one tree scan see the escapee while its parent still lives.
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    const result = await running;
    expect(result.interrupted).toBe(true);
    await waitFor(() => isGone(readPid(join(dir, "escapee.pid"))!), 3000, "the escapee to die");
  });
});

describe.runIf(cgroupBaseDir() !== null)("run cgroups", () => {
  it("are removed once the run has ended", async () => {
    const base = cgroupBaseDir()!;
    const mine = () => readdirSync(base).filter((n) => n.startsWith(`runx-${process.pid}-`));
    const before = mine().length;
    const result = await superviseProcess({ command: "/bin/true", args: [], cwd: dir, env: ENV });
    // A silent fallback to process-tree tracking would make no cgroup and pass the count.
    expect(result.containment).toBe("cgroup");
    await waitFor(() => mine().length === before, 3000, "the run cgroup to be removed");
  });

  it("reapRunCgroups kills a run whose owner can no longer release it", async () => {
    const contained = containRun("cgroup");
    expect(contained.kind).toBe("cgroup");
    // Simulate an owner that died mid-run: the cgroup has a member and nobody releases it.
    const { spawn } = await import("node:child_process");
    const argv = contained.wrap("sleep", ["1005"], ENV);
    const child = spawn(argv.command, argv.args, { env: ENV, detached: true, stdio: "ignore" });
    contained.attach(child.pid!);
    const base = cgroupBaseDir()!;
    const name = readdirSync(base).find((n) => n.startsWith(`runx-${process.pid}-`))!;
    await waitFor(
      () =>
        existsSync(join(base, name, "cgroup.procs")) &&
        readPid(join(base, name, "cgroup.procs")) === child.pid,
      3000,
      "the child to join its cgroup",
    );
    expect(reapRunCgroups(process.pid)).toBeGreaterThanOrEqual(1);
    await waitFor(() => isGone(child.pid!), 3000, "the member to die");
    await waitFor(() => !existsSync(join(base, name)), 3000, "the cgroup to be removed");
  });
});
