import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRuntimeError } from "../errors.js";
import { superviseProcess, type SupervisedProcessResult } from "./supervise.js";
import { isGone, readPid, waitFor } from "./test-support.js";

const SH = "/bin/sh";
const ENV = { PATH: "/usr/local/bin:/usr/bin:/bin" };
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "runx-supervise-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function script(name: string, body: string): string {
  const file = join(dir, name);
  writeFileSync(file, body);
  return file;
}

async function expectCode(promise: Promise<unknown>, code: string): Promise<unknown> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isRuntimeError(error) ? error.code : error).toBe(code);
  return error;
}

describe("superviseProcess", () => {
  it("runs the exact argv without a shell and captures both streams and the exit code", async () => {
    const file = script("streams.sh", 'printf "%s|" "$@"; echo oops >&2; exit 3\n');
    const result = await superviseProcess({
      command: SH,
      args: [file, "$HOME", "a b", "$(touch x)"],
      cwd: dir,
      env: ENV,
    });
    expect(result.stdout.toString()).toBe("$HOME|a b|$(touch x)|");
    expect(result.stderr.toString()).toBe("oops\n");
    expect(result.exitCode).toBe(3);
    expect(result.signal).toBeNull();
    expect(result.timedOut).toBe(false);
    expect(existsSync(join(dir, "x"))).toBe(false);
  });

  it("starts the child as the leader of its own process group", async () => {
    const file = script("pgid.sh", "cut -d' ' -f5 /proc/$$/stat\n");
    const result = await superviseProcess({ command: SH, args: [file], cwd: dir, env: ENV });
    expect(Number(result.stdout.toString().trim())).toBe(result.pid);
  });

  it("gives the child exactly the environment it was handed", async () => {
    const result = await superviseProcess({
      command: "/usr/bin/env",
      args: [],
      cwd: dir,
      env: { ONLY: "this" },
    });
    expect(result.stdout.toString()).toBe("ONLY=this\n");
  });

  it("writes stdin bytes and closes stdin, or closes it at once when none are given", async () => {
    const fed = await superviseProcess({
      command: "cat",
      args: [],
      cwd: dir,
      env: ENV,
      stdin: '{"a":1}',
    });
    expect(fed.stdout.toString()).toBe('{"a":1}');
    const closed = await superviseProcess({
      command: "cat",
      args: [],
      cwd: dir,
      env: ENV,
      timeoutMs: 5000,
    });
    expect(closed.timedOut).toBe(false);
    expect(closed.stdout.length).toBe(0);
  });

  it("kills a grandchild too when the timeout fires", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const file = script("spawner.sh", `sleep 30 &\necho $! > ${pidFile}\nwait\n`);
    const result = await superviseProcess({
      command: SH,
      args: [file],
      cwd: dir,
      env: ENV,
      timeoutMs: 500,
    });
    expect(result.timedOut).toBe(true);
    expect(result.interrupted).toBe(false);
    const grandchild = readPid(pidFile);
    expect(grandchild).toBeDefined();
    await waitFor(() => isGone(grandchild!), 10_000, "the grandchild to be gone");
    expect(isGone(result.pid)).toBe(true);
  });

  it("kills the whole group within 3 s when the abort signal fires", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const file = script("spawner.sh", `sleep 30 &\necho $! > ${pidFile}\nwait\n`);
    const controller = new AbortController();
    const running = superviseProcess({
      command: SH,
      args: [file],
      cwd: dir,
      env: ENV,
      signal: controller.signal,
    });
    await waitFor(() => readPid(pidFile) !== undefined, 5000, "the grandchild pid file");
    const abortedAt = Date.now();
    controller.abort();
    const result = await running;
    expect(Date.now() - abortedAt).toBeLessThan(3000);
    expect(result.interrupted).toBe(true);
    expect(result.timedOut).toBe(false);
    await waitFor(() => isGone(readPid(pidFile)!), 10_000, "the grandchild to be gone");
  });

  it("SIGKILLs a child that ignores SIGTERM once the grace period is over", async () => {
    const ready = join(dir, "ready");
    const file = script(
      "stubborn.sh",
      `trap '' TERM\n: > ${ready}\nwhile :; do sleep 0.05; done\n`,
    );
    const controller = new AbortController();
    const running = superviseProcess({
      command: SH,
      args: [file],
      cwd: dir,
      env: ENV,
      signal: controller.signal,
      abortGraceMs: 300,
    });
    await waitFor(() => existsSync(ready), 5000, "the TERM trap to be installed");
    const abortedAt = Date.now();
    controller.abort();
    const result = await running;
    expect(result.signal).toBe("SIGKILL");
    expect(Date.now() - abortedAt).toBeGreaterThanOrEqual(250);
    expect(Date.now() - abortedAt).toBeLessThan(3000);
  });

  it("SIGKILLs a child that ignores SIGTERM after a timeout and the grace period", async () => {
    const file = script("stubborn.sh", "trap '' TERM\nwhile :; do sleep 0.05; done\n");
    const result = await superviseProcess({
      command: SH,
      args: [file],
      cwd: dir,
      env: ENV,
      timeoutMs: 800,
      graceMs: 300,
    });
    expect(result.timedOut).toBe(true);
    expect(result.signal).toBe("SIGKILL");
    expect(result.durationMs).toBeGreaterThanOrEqual(1000);
  });

  it("kills members the leader left behind when it exits", async () => {
    const pidFile = join(dir, "orphan.pid");
    const file = script("leaver.sh", `sleep 30 &\necho $! > ${pidFile}\nexit 0\n`);
    const result = await superviseProcess({
      command: SH,
      args: [file],
      cwd: dir,
      env: ENV,
      timeoutMs: 20_000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.durationMs).toBeLessThan(10_000);
    await waitFor(() => isGone(readPid(pidFile)!), 10_000, "the left-behind member to be gone");
  });

  it("truncates output beyond 8 MiB, marks it, and counts and hashes the full stream", async () => {
    const total = 9 * 1024 * 1024;
    const result: SupervisedProcessResult = await superviseProcess({
      command: "head",
      args: ["-c", String(total), "/dev/zero"],
      cwd: dir,
      env: ENV,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(8 * 1024 * 1024);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.stdoutBytes).toBe(total);
    const expected = createHash("sha256").update(Buffer.alloc(total)).digest("hex");
    expect(result.stdoutSha256).toBe(`sha256:${expected}`);
    expect(result.stderrTruncated).toBe(false);
    expect(result.stderrSha256).toBe(`sha256:${createHash("sha256").digest("hex")}`);
  });

  it("hashes the whole stream whether it fits the limit or is cut mid-chunk", async () => {
    // Distinct bytes (numbers 1…20000, ~109 KB over several pipe reads): a chunk dropped,
    // repeated or reordered in the digest would change it.
    const full = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\n`).join("");
    for (const limit of [full.length, 1_000, 65_537]) {
      const result = await superviseProcess({
        command: "seq",
        args: ["1", "20000"],
        cwd: dir,
        env: ENV,
        maxBytesPerStream: limit,
      });
      expect(result.stdoutBytes).toBe(full.length);
      expect(result.stdout.toString("utf8")).toBe(full.slice(0, limit));
      expect(result.stdoutTruncated).toBe(limit < full.length);
      const expected = createHash("sha256").update(full).digest("hex");
      expect(result.stdoutSha256).toBe(`sha256:${expected}`);
    }
  });

  it("fails with SPAWN_FAILED naming a command that does not exist", async () => {
    const error = await expectCode(
      superviseProcess({ command: "runx-no-such-command-here", args: [], cwd: dir, env: ENV }),
      "SPAWN_FAILED",
    );
    expect((error as { details: { command: string } }).details.command).toBe(
      "runx-no-such-command-here",
    );
  });

  it("fails with SPAWN_FAILED for a file that is not executable", async () => {
    const file = script("plain.sh", "echo hi\n");
    chmodSync(file, 0o644);
    const error = await expectCode(
      superviseProcess({ command: file, args: [], cwd: dir, env: ENV }),
      "SPAWN_FAILED",
    );
    expect((error as { details: { errno: string } }).details.errno).toBe("EACCES");
  });

  it("fails with SPAWN_FAILED when the working directory is missing", async () => {
    await expectCode(
      superviseProcess({ command: SH, args: ["-c", "true"], cwd: join(dir, "missing"), env: ENV }),
      "SPAWN_FAILED",
    );
  });

  it("starts nothing when the signal is already aborted", async () => {
    const marker = join(dir, "started");
    const controller = new AbortController();
    controller.abort();
    await expectCode(
      superviseProcess({
        command: "touch",
        args: [marker],
        cwd: dir,
        env: ENV,
        signal: controller.signal,
      }),
      "INTERRUPTED",
    );
    expect(existsSync(marker)).toBe(false);
  });
});
