/**
 * Containment of everything under `.runx/runs/<run_id>/` (records, cancel requests, logs, the
 * manifest and packet reads): no symlinked component from `.runx` down is ever written or read
 * through. A dispatch whose run directory is a link is refused as `path_unsafe` whatever the
 * rest of the gate would say, and the link's target outside the workspace is left exactly as
 * it was (files and directories).
 */
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import { clearCancel, listAttemptRecords, requestCancel, writeAttemptRecord } from "./records.js";
import {
  adapterRuntime,
  attemptsOf,
  dispatchOf,
  dispatchRun,
  sentinelIn,
  storeVerifies,
  trustIn,
  writeAdapterSkill,
  scratchDirs,
} from "./test-support.js";

const { workspace, track } = scratchDirs();

/** A directory outside the workspace holding one file; `tree` lists everything in it. */
function outsideDir(root: string): { dir: string; tree: () => string[] } {
  const dir = `${root}-outside`;
  track(dir);
  mkdirSync(dir);
  writeFileSync(join(dir, "keep.txt"), "untouched\n");
  const tree = (): string[] => {
    const out: string[] = [];
    const walk = (d: string, prefix: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        out.push(`${prefix}${e.name}${e.isDirectory() ? "/" : ""}`);
        if (e.isDirectory()) walk(join(d, e.name), `${prefix}${e.name}/`);
      }
    };
    walk(dir, "");
    return out.sort();
  };
  return { dir, tree };
}

const FIXED = { randomHex: (n: number) => "ef".repeat(n) };
const RUN = `run_dispatch_${"ef".repeat(8)}`;

function expectPathEscape(fn: () => unknown): void {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(RuntimeError);
  expect((caught as RuntimeError).code).toBe("PATH_ESCAPE");
}

describe("a symlinked .runx/runs/<run_id> is never written through", () => {
  it.each<[string, { trusted: boolean; allowSpawn: boolean }]>([
    ["an untrusted adapter (refused early in the gate)", { trusted: false, allowSpawn: true }],
    ["a dry run (no --allow-spawn)", { trusted: true, allowSpawn: false }],
    ["a dispatch that would launch", { trusted: true, allowSpawn: true }],
  ])("%s is refused as path_unsafe and the link's target is unchanged", async (_l, opts) => {
    const root = workspace();
    if (opts.trusted) trustIn(root);
    const outside = outsideDir(root);
    mkdirSync(join(root, ".runx", "runs"), { recursive: true });
    symlinkSync(outside.dir, join(root, ".runx", "runs", RUN));
    const { envelope, spawns } = await dispatchRun(root, {
      allowSpawn: opts.allowSpawn,
      runtime: FIXED,
      inputs: { fixture_mode: "complete" },
    });
    expect(envelope.run_id).toBe(RUN);
    expect(envelope.status).toBe("sealed");
    expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: "path_unsafe" });
    expect(spawns).toBe(0);
    expect(sentinelIn(root)).toBe(false);
    // Nothing at the target: no record, no attempt directory, no cancel request.
    expect(outside.tree()).toEqual(["keep.txt"]);
    expect(readFileSync(join(outside.dir, "keep.txt"), "utf8")).toBe("untouched\n");
    // The signed refusal is in the receipt store and verifies; the records are not read.
    expect(await storeVerifies(root)).toBe(true);
    await expect(attemptsOf(root, RUN)).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("a symlinked .runx/runs is refused the same way", async () => {
    const root = workspace();
    trustIn(root);
    const outside = outsideDir(root);
    symlinkSync(outside.dir, join(root, ".runx", "runs"));
    const { envelope, spawns } = await dispatchRun(root, {
      allowSpawn: true,
      runtime: FIXED,
      inputs: { fixture_mode: "complete" },
    });
    expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: "path_unsafe" });
    expect(spawns).toBe(0);
    expect(outside.tree()).toEqual(["keep.txt"]);
  });

  it("records and cancel requests refuse a linked run directory or file with PATH_ESCAPE; `..` is no run id", () => {
    const root = workspace();
    const runxDir = join(root, ".runx");
    const outside = outsideDir(root);
    mkdirSync(join(runxDir, "runs"), { recursive: true });
    symlinkSync(outside.dir, join(runxDir, "runs", RUN));
    expectPathEscape(() => requestCancel(runxDir, RUN, new Date()));
    expectPathEscape(() => listAttemptRecords(runxDir, RUN));
    expectPathEscape(() =>
      writeAttemptRecord(runxDir, {
        receipt_id: "r",
        dispatch: { run_id: RUN, step_id: "s", attempt: 1 } as never,
      }),
    );
    // A cancel-requested link inside a real run directory: its target is not removed.
    const run2 = `${RUN}2`;
    mkdirSync(join(runxDir, "runs", run2));
    symlinkSync(join(outside.dir, "keep.txt"), join(runxDir, "runs", run2, "cancel-requested"));
    expectPathEscape(() => clearCancel(runxDir, run2));
    expectPathEscape(() => requestCancel(runxDir, run2, new Date()));
    expect(outside.tree()).toEqual(["keep.txt"]);
    expect(readFileSync(join(outside.dir, "keep.txt"), "utf8")).toBe("untouched\n");
    for (const bad of ["..", "../x", "a/b"])
      expect(() => listAttemptRecords(runxDir, bad)).toThrow(/no run/);
  });

  it("a kept log replaced by a link is not read, even to an identical copy", async () => {
    const root = workspace();
    trustIn(root);
    const { envelope } = await dispatchRun(root, {
      allowSpawn: true,
      inputs: { fixture_mode: "complete" },
    });
    expect(dispatchOf(envelope).status).toBe("completed");
    const runtime = adapterRuntime(root);
    try {
      const before = runtime.adapters.logs(envelope.run_id);
      expect(before.map((l) => [l.stream, l.intact])).toEqual([
        ["stdout", true],
        ["stderr", true],
      ]);
      const log = join(root, ".runx", "runs", envelope.run_id, "dispatch", "dispatch", "1");
      const outside = outsideDir(root);
      cpSync(join(log, "stdout.log"), join(outside.dir, "stdout.log"));
      rmSync(join(log, "stdout.log"));
      symlinkSync(join(outside.dir, "stdout.log"), join(log, "stdout.log"));
      const after = runtime.adapters.logs(envelope.run_id);
      expect(after.find((l) => l.stream === "stdout")).toMatchObject({ intact: false, text: "" });
      expect(after.find((l) => l.stream === "stderr")).toMatchObject({ intact: true });
    } finally {
      runtime.close();
    }
  });

  it("an adapter that swaps its attempt directory for a link while it runs: no logs or manifest through it (path_unsafe)", async () => {
    const root = workspace();
    const outside = outsideDir(root);
    mkdirSync(join(root, "adapters", "swap"));
    // Moves its attempt directory away and links the path to a directory outside the
    // workspace holding a well-formed manifest for this packet.
    writeFileSync(
      join(root, "adapters", "swap", "swap.mjs"),
      `import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
const out = process.env.RUNX_ADAPTER_OUT_DIR;
const attempt = dirname(out);
const packet = JSON.parse(readFileSync(join(attempt, "packet.json"), "utf8"));
const target = process.env.SWAP_TARGET;
mkdirSync(join(target, "out"));
writeFileSync(join(target, "out", "adapter-output-manifest.json"), JSON.stringify({
  schema: "adapter-output-manifest.v1", packet_id: packet.packet_id, run_id: packet.run_id,
  adapter_id: "swap", status: "completed", summary: "from outside", artifacts: [],
}));
renameSync(attempt, attempt + "-moved");
symlinkSync(target, attempt);
`,
    );
    writeFileSync(
      join(root, "adapters", "swap.json"),
      JSON.stringify({
        schema: "adapter.v1",
        id: "swap",
        version: "1.0.0",
        description: "Replaces its attempt directory by a link (containment test).",
        command: { argv: ["node", "./swap/swap.mjs"], stdin: "none" },
        lanes: ["plain-agent"],
        workflows: ["plan"],
        max_authority: ["read_only"],
        env: { allow: [], values: { SWAP_TARGET: outside.dir }, credentials: [] },
        limits: { timeout_ms: 20000, grace_ms: 500 },
        network: "none",
      }),
    );
    writeAdapterSkill(root, "swap", { adapter: "swap" });
    trustIn(root, "swap");
    const { envelope, spawns } = await dispatchRun(root, { skill: "swap", allowSpawn: true });
    expect(spawns).toBe(1);
    expect(dispatchOf(envelope)).toMatchObject({ status: "failed", failure_code: "path_unsafe" });
    // Only what the adapter itself put there: no stdout.log/stderr.log written by the runtime.
    expect(outside.tree()).toEqual(["keep.txt", "out/", "out/adapter-output-manifest.json"]);
    const [attempt] = await attemptsOf(root, envelope.run_id);
    expect(attempt?.dispatch).toMatchObject({
      status: "failed",
      logs: [],
      output_manifest: null,
      summary: null,
    });
    expect(attempt?.verified).toBe(true);
    // The moved directory is where the adapter left it.
    expect(
      readdirSync(join(root, ".runx", "runs", envelope.run_id, "dispatch", "dispatch")).sort(),
    ).toEqual(["1", "1-moved"]);
  });
});
