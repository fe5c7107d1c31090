/**
 * The shipped command adapter (`packages/runtime/adapters/command`): a reviewed wrapper that
 * runs any local CLI tool on a work packet. Certified with the reusable conformance pack in
 * read-only mode (wrapping `wc -w`, the prompt on its stdin), then the edit_worktree golden
 * path: `sed -i` edits a file in a scratch git worktree after approval, and the receipt lists
 * that file with the digest the runtime computed from git and the worktree's bytes.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validateAdaptersDispatchReceipt } from "../generated/validate-adapters-dispatch-receipt.js";
import { hashCanonical, sha256Prefixed } from "../receipts/index.js";
import { describeAdapterConformance } from "../testing/adapter-conformance.js";
import { REPO_ROOT } from "../testing/cli.js";
import { parseAdapterDefinition } from "./definition.js";
import {
  adapterRuntime,
  adapterWorkspace,
  attemptsOf,
  dispatchOf,
  dispatchRun,
  resumeRun,
  storeVerifies,
  trustIn,
  writeAdapterSkill,
} from "./test-support.js";

/** The shipped wrapper. */
const COMMAND_DIR = join(REPO_ROOT, "packages", "runtime", "adapters", "command");

/** Copies the wrapper into `<root>/adapters/command` and writes `adapters/<id>.json`. */
function installCommand(root: string, id: string, definition: Record<string, unknown>): void {
  cpSync(COMMAND_DIR, join(root, "adapters", "command"), { recursive: true });
  writeFileSync(
    join(root, "adapters", `${id}.json`),
    `${JSON.stringify({ schema: "adapter.v1", id, version: "1.0.0", ...definition }, null, 2)}\n`,
  );
}

const WC = {
  description: "Counts the words of the prompt with wc (a real local CLI behind the wrapper).",
  command: {
    argv: ["node", "./command/command-adapter.mjs", "--prompt", "stdin", "--", "wc", "-w"],
    stdin: "prompt_text",
    append_packet_path: true,
  },
  lanes: ["plain-agent"],
  workflows: ["plan"],
  max_authority: ["read_only", "write_artifacts_only"],
  env: { allow: [], values: {}, credentials: [] },
  limits: { timeout_ms: 20000, grace_ms: 500 },
  tool_probe: {
    argv: ["wc", "--version"],
    version_regex: "\\(GNU coreutils\\) (\\d+\\.\\d+)",
    min_version: "8.0",
  },
  network: "none",
};

describeAdapterConformance({
  id: "command-wc",
  install: (root) => installCommand(root, "command-wc", WC),
  lane: "plain-agent",
  workflow: "plan",
  probeOutput: (version) => `wc (GNU coreutils) ${version}\nCopyright (C) 2022\n`,
});

const cleanup: string[] = [];
afterEach(() => {
  for (const dir of cleanup.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync(
    "git",
    ["-c", "user.name=runx test", "-c", "user.email=test@runx.invalid", ...args],
    { cwd, encoding: "utf8", env: { PATH: process.env.PATH ?? "", GIT_CONFIG_NOSYSTEM: "1" } },
  ).trim();
}

describe("command adapter", () => {
  it("refuses a shell, a package runner or inline code as the wrapped command (after --)", () => {
    const argv = (tool: string[]): unknown => ({
      ...WC,
      schema: "adapter.v1",
      id: "x",
      version: "1",
      command: { ...WC.command, argv: ["node", "./command/command-adapter.mjs", "--", ...tool] },
    });
    for (const tool of [
      ["bash", "-c", "x"],
      ["npx", "agent"],
      ["python3", "-c", "print(1)"],
    ]) {
      expect(() => parseAdapterDefinition(argv(tool) as never)).toThrow(
        expect.objectContaining({ code: "forbidden_executable" }) as Error,
      );
    }
    expect(parseAdapterDefinition(argv(["my-agent", "--print"]) as never).command.argv).toContain(
      "my-agent",
    );
  });

  it("a failing tool is a failed receipt (runtime_non_zero) with the wrapper's manifest recorded", async () => {
    const root = adapterWorkspace();
    cleanup.push(root);
    installCommand(root, "command-false", {
      ...WC,
      command: { ...WC.command, argv: ["node", "./command/command-adapter.mjs", "--", "false"] },
      tool_probe: undefined,
    });
    writeAdapterSkill(root, "fails", { adapter: "command-false", workflow: "plan" });
    trustIn(root, "command-false");
    const { envelope, spawns } = await dispatchRun(root, { skill: "fails", allowSpawn: true });
    expect(spawns).toBe(1);
    expect(dispatchOf(envelope)).toMatchObject({
      status: "failed",
      failure_code: "runtime_non_zero",
    });
    const [attempt] = await attemptsOf(root, envelope.run_id);
    expect(attempt?.dispatch.output_manifest).toMatchObject({ status: "failed" });
    expect(attempt?.dispatch.process.exit_code).toBe(1);
  });

  it("edit_worktree golden path: sed edits a file in a scratch worktree after approval; the receipt lists it with the git-computed digest", async () => {
    const root = adapterWorkspace();
    cleanup.push(root);
    git(root, "init", "-q", "-b", "main");
    writeFileSync(join(root, "README.md"), "hello\n");
    git(root, "add", "README.md");
    git(root, "commit", "-q", "-m", "first");
    const worktree = `${root}-wt`;
    cleanup.push(worktree);
    git(root, "worktree", "add", "-q", "-b", "feature/x", worktree);
    mkdirSync(join(worktree, "docs"));
    writeFileSync(join(worktree, "docs", "notes.txt"), "color: red\nsize: 3\n");
    writeFileSync(join(worktree, "untouched.txt"), "left alone\n");
    git(worktree, "add", "docs/notes.txt", "untouched.txt");
    git(worktree, "commit", "-q", "-m", "notes");
    // Dirty before the run: the wrapper reports only what changed during it.
    writeFileSync(join(worktree, "scratch.txt"), "already here\n");
    const base = git(worktree, "rev-parse", "HEAD");

    installCommand(root, "command-sed", {
      description: "Edits notes with sed in the worktree (golden path of the command adapter).",
      command: {
        argv: [
          "node",
          "./command/command-adapter.mjs",
          "--prompt",
          "none",
          "--",
          "sed",
          "-i",
          "s/red/blue/",
          "docs/notes.txt",
        ],
        stdin: "prompt_text",
        append_packet_path: true,
      },
      lanes: ["coding-agent"],
      workflows: ["execute"],
      max_authority: ["read_only", "edit_worktree"],
      env: { allow: [], values: {}, credentials: [] },
      limits: { timeout_ms: 20000, grace_ms: 500 },
      workspace: { requires_worktree: true },
      tool_probe: {
        argv: ["sed", "--version"],
        version_regex: "\\(GNU sed\\) (\\d+\\.\\d+)",
        min_version: "4.0",
      },
      network: "none",
    });
    writeAdapterSkill(root, "edit", {
      adapter: "command-sed",
      lane: "coding-agent",
      workflow: "execute",
      authority: ["edit_worktree"],
      ceiling: ["read_only", "edit_worktree"],
      workspace: { worktree: `../${basename(worktree)}`, branch: "feature/x", base_commit: base },
    });
    trustIn(root, "command-sed");

    const { envelope: paused, spawns } = await dispatchRun(root, {
      skill: "edit",
      allowSpawn: true,
    });
    expect(paused.status).toBe("needs_approval");
    expect(spawns).toBe(0);
    expect(readFileSync(join(worktree, "docs", "notes.txt"), "utf8")).toBe("color: red\nsize: 3\n");
    const gate = paused.requests[0]!;
    const { envelope, spawns: launched } = await resumeRun(
      root,
      paused.run_id,
      { approvals: { [gate.id]: true } },
      { allowSpawn: true },
    );
    expect(launched).toBe(1);
    expect(dispatchOf(envelope)).toMatchObject({ status: "completed", failure_code: null });

    const edited = readFileSync(join(worktree, "docs", "notes.txt"));
    expect(edited.toString("utf8")).toBe("color: blue\nsize: 3\n");
    const [attempt] = await attemptsOf(root, paused.run_id);
    expect(attempt?.verified).toBe(true);
    const body = attempt!.dispatch;
    expect(validateAdaptersDispatchReceipt(body)).toBe(true);
    expect(body.process.cwd_ref).toBe(`../${basename(worktree)}`);
    expect(body.approval?.receipt_id).toBe(paused.receipt_id);
    // The runtime's own recomputation from git: every file changed against the base commit,
    // each with the sha256 of its bytes in the worktree.
    expect(body.workspace).toMatchObject({
      head_after: base,
      dirty_after: true,
      changed_files_digest: hashCanonical(["docs/notes.txt", "scratch.txt"]),
      changed_files: [
        { path: "docs/notes.txt", sha256: sha256Prefixed(edited) },
        { path: "scratch.txt", sha256: sha256Prefixed("already here\n") },
      ],
    });
    expect(body.authority).toMatchObject({ claimed_used: ["edit_worktree"], violations: [] });
    // The wrapper's result (git before/after): only the file that changed during the run.
    const result = body.artifacts.find((a) => a.path === "command-result.json");
    expect(result).toBeDefined();
    const out = join(root, ".runx", "runs", paused.run_id, "dispatch", "dispatch", "1", "out");
    const resultBytes = readFileSync(join(out, "command-result.json"));
    expect(sha256Prefixed(resultBytes)).toBe(result?.sha256);
    expect(JSON.parse(resultBytes.toString("utf8"))).toMatchObject({
      tool: "sed",
      exit_code: 0,
      timed_out: false,
      prompt: "none",
      git: {
        head_before: base,
        head_after: base,
        files: [{ path: "docs/notes.txt", sha256: sha256Prefixed(edited) }],
      },
    });
    const manifest = JSON.parse(readFileSync(join(out, "adapter-output-manifest.json"), "utf8"));
    expect(manifest).toMatchObject({
      status: "completed",
      changed_files: ["docs/notes.txt"],
      summary: "sed exited with status 0",
    });
    expect(JSON.stringify(body)).not.toContain(root);
    expect(await storeVerifies(root)).toBe(true);
    const runtime = adapterRuntime(root);
    try {
      expect(runtime.adapters.logs(paused.run_id).every((l) => l.intact)).toBe(true);
    } finally {
      runtime.close();
    }
  });
});
