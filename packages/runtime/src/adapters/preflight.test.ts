/**
 * Preflight of an adapter dispatch against real git repositories
 * in temporary directories: the isolated worktree, its branch and base commit, the re-check
 * after approval, and the tool probe (through an injected runner, D.22).
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { hashCanonical } from "../receipts/index.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { processProbeRunner } from "./launch.js";
import type { ProbeRunner } from "./preflight.js";
import {
  adapterRuntime,
  adapterWorkspace,
  goodInputs,
  snapshot,
  writeAdapterSkill,
} from "./test-support.js";

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

interface Repo {
  root: string;
  /** The linked worktree, a sibling of the root, on branch feature/x. */
  worktree: string;
  /** Its path as the packet names it (relative to the root). */
  ref: string;
  base: string;
}

/** A workspace that is a git repository with one commit and a linked worktree beside it. */
function repo(definitionExtra = "workspace:\n  requires_worktree: true\n"): Repo {
  const root = adapterWorkspace();
  cleanup.push(root);
  appendFileSync(join(root, "adapters", "fake-local.yaml"), definitionExtra);
  git(root, "init", "-q", "-b", "main");
  writeFileSync(join(root, "README.md"), "hello\n");
  git(root, "add", "README.md");
  git(root, "commit", "-q", "-m", "first");
  const worktree = `${root}-wt`;
  cleanup.push(worktree);
  git(root, "worktree", "add", "-q", "-b", "feature/x", worktree);
  const runtime = adapterRuntime(root);
  try {
    runtime.adapters.trust("fake-local");
  } finally {
    runtime.close();
  }
  return {
    root,
    worktree,
    ref: `../${basename(worktree)}`,
    base: git(worktree, "rev-parse", "HEAD"),
  };
}

interface Dispatch {
  status: string;
  failure_code: string | null;
}

const dispatchOf = (envelope: SkillRunEnvelope): Dispatch =>
  (envelope.result as { dispatch: Dispatch }).dispatch;

async function run(
  root: string,
  opts: {
    skill?: string;
    inputs?: Record<string, unknown>;
    probe?: ProbeRunner;
    allowSpawn?: boolean;
  } = {},
): Promise<{ envelope: SkillRunEnvelope; spawns: number }> {
  let spawns = 0;
  const runtime = adapterRuntime(root, {
    onAdapterSpawn: () => (spawns += 1),
    ...(opts.probe !== undefined ? { adapterProbe: opts.probe } : {}),
  });
  try {
    const envelope = await runtime.runSkill({
      ref: opts.skill ?? "dispatch",
      inputs: goodInputs(opts.inputs),
      secretEnv: [],
      allowSpawn: opts.allowSpawn ?? true,
    });
    return { envelope, spawns };
  } finally {
    runtime.close();
  }
}

async function attempts(root: string, runId: string) {
  const runtime = adapterRuntime(root);
  try {
    return await runtime.adapters.attempts(runId);
  } finally {
    runtime.close();
  }
}

const JOURNAL = [
  ".runx/receipts",
  ".runx/state.sqlite",
  ".runx/state.sqlite-wal",
  ".runx/state.sqlite-shm",
  ".runx/cache",
];

function sentinelExists(root: string): boolean {
  const runs = join(root, ".runx", "runs");
  if (!existsSync(runs)) return false;
  const walk = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name === "sentinel",
    );
  return walk(runs);
}

/** Refused with `code`: no spawn, no sentinel, nothing written in the workspace or worktree. */
async function expectRefusal(r: Repo, code: string, skill = "dispatch"): Promise<void> {
  await run(r.root, { skill, allowSpawn: false }); // prime the package cache
  const before = [snapshot(r.root, JOURNAL), snapshot(r.worktree, [])];
  const { envelope, spawns } = await run(r.root, { skill });
  expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: code });
  expect(spawns).toBe(0);
  expect(sentinelExists(r.root)).toBe(false);
  expect([snapshot(r.root, JOURNAL), snapshot(r.worktree, [])]).toEqual(before);
  const [attempt] = await attempts(r.root, envelope.run_id);
  expect(attempt?.verified).toBe(true);
  expect(attempt?.dispatch.failure?.phase).toBe("preflight");
}

/**
 * Approves `paused` and resumes it with spawn allowed after the worktree changed: the re-check
 * refuses with `code`, nothing spawns, neither tree changes, and the attempt verifies.
 */
async function approvedResumeRefused(
  r: { root: string; worktree: string },
  paused: SkillRunEnvelope,
  code: string,
) {
  const before = [snapshot(r.root, JOURNAL), snapshot(r.worktree, [])];
  let resumed = 0;
  const runtime = adapterRuntime(r.root, { onAdapterSpawn: () => (resumed += 1) });
  try {
    const sealed = await runtime.resumeWith({
      runId: paused.run_id,
      document: { approvals: { [paused.requests[0]!.id]: true } },
      allowSpawn: true,
    });
    expect(dispatchOf(sealed)).toMatchObject({ status: "rejected", failure_code: code });
  } finally {
    runtime.close();
  }
  expect(resumed).toBe(0);
  expect(sentinelExists(r.root)).toBe(false);
  expect([snapshot(r.root, JOURNAL), snapshot(r.worktree, [])]).toEqual(before);
  const [attempt] = await attempts(r.root, paused.run_id);
  expect(attempt?.verified).toBe(true);
  return attempt;
}

describe("adapter preflight against real git worktrees", () => {
  it("dispatches in an isolated worktree on its branch at its base commit, recomputing changed files with git", async () => {
    const r = repo();
    writeAdapterSkill(r.root, "dispatch", {
      workspace: { worktree: r.ref, branch: "feature/x", base_commit: r.base },
    });
    const calls: string[] = [];
    const real = processProbeRunner({ PATH: process.env.PATH ?? "" });
    const probe: ProbeRunner = (argv, cwd) => {
      calls.push(argv.join(" "));
      return real(argv, cwd);
    };
    const { envelope, spawns } = await run(r.root, {
      probe,
      inputs: { fixture_mode: "write_in_worktree" },
    });
    expect(dispatchOf(envelope)).toMatchObject({ status: "completed", failure_code: null });
    expect(spawns).toBe(1);
    // D.22: the workspace checks, then exactly one tool probe, then the post-run git facts.
    expect(calls).toEqual([
      "git rev-parse --show-toplevel --git-dir --git-common-dir",
      "git rev-parse --abbrev-ref HEAD",
      "git rev-parse HEAD",
      "node --version",
      "git rev-parse HEAD",
      "git status --porcelain=v1 --untracked-files=all",
      `git diff --name-only ${r.base}`,
    ]);
    const [attempt] = await attempts(r.root, envelope.run_id);
    expect(attempt?.dispatch.process.cwd_ref).toBe(r.ref);
    expect(attempt?.dispatch.workspace).toMatchObject({
      worktree_ref: r.ref,
      branch: "feature/x",
      base_commit: r.base,
      head_after: r.base,
      dirty_after: true,
      // From git (the file it wrote), not from the manifest's claim (claimed-only.txt).
      changed_files_digest: hashCanonical(["CHANGED.txt"]),
    });
    expect(JSON.stringify(attempt?.dispatch)).not.toContain(r.root);
  });

  it("refuses a missing worktree (D.17)", async () => {
    const r = repo();
    writeAdapterSkill(r.root, "none", { workspace: { branch: "feature/x" } });
    await expectRefusal(r, "missing_worktree", "none");
    writeAdapterSkill(r.root, "gone", {
      workspace: { worktree: "../no-such-worktree", branch: "feature/x" },
    });
    await expectRefusal(r, "missing_worktree", "gone");
  });

  it("refuses the primary checkout, a directory nested in it, and a plain clone as not isolated (D.18)", async () => {
    const r = repo();
    mkdirSync(join(r.root, "sub"));
    const plain = `${r.root}-plain`;
    cleanup.push(plain);
    git(r.root, "clone", "-q", r.root, plain);
    for (const [name, worktree] of [
      ["self", "."],
      ["nested", "sub"],
      ["plain", `../${basename(plain)}`],
    ] as const) {
      writeAdapterSkill(r.root, name, { workspace: { worktree, branch: "feature/x" } });
      await expectRefusal(r, "worktree_not_isolated", name);
    }
  });

  it("refuses protected branches in every spelling and a branch outside the prefix allowlist (D.19)", async () => {
    const r = repo("workspace:\n  requires_worktree: true\n  branch_prefixes: [feature/]\n");
    for (const [name, branch] of [
      ["plain", "main"],
      ["heads", "refs/heads/main"],
      ["origin", "origin/master"],
      ["release", "release-2"],
      ["prefix", "bugfix/x"],
    ] as const) {
      writeAdapterSkill(r.root, name, { workspace: { worktree: r.ref, branch } });
      await expectRefusal(r, "protected_branch", name);
    }
  });

  it("refuses a worktree on another branch (D.20) and at another commit (D.21)", async () => {
    const r = repo();
    writeAdapterSkill(r.root, "branch", { workspace: { worktree: r.ref, branch: "feature/y" } });
    await expectRefusal(r, "branch_mismatch", "branch");
    writeAdapterSkill(r.root, "base", {
      workspace: { worktree: r.ref, branch: "feature/x", base_commit: "0".repeat(40) },
    });
    await expectRefusal(r, "base_commit_mismatch", "base");
  });

  it("checks the workspace again after approval: HEAD moved between approval and spawn (D.23)", async () => {
    const r = repo();
    writeAdapterSkill(r.root, "gated", {
      authority: ["read_only", "human_approval_required"],
      workspace: { worktree: r.ref, branch: "feature/x", base_commit: r.base },
    });
    const { envelope: paused, spawns } = await run(r.root, { skill: "gated" });
    expect(paused.status).toBe("needs_approval");
    expect(spawns).toBe(0);
    writeFileSync(join(r.worktree, "later.txt"), "later\n");
    git(r.worktree, "add", "later.txt");
    git(r.worktree, "commit", "-q", "-m", "moved on");
    const attempt = await approvedResumeRefused(r, paused, "base_commit_mismatch");
    expect(attempt?.dispatch).toMatchObject({
      status: "rejected",
      failure: expect.objectContaining({ code: "base_commit_mismatch", phase: "preflight" }),
      approval: expect.objectContaining({ receipt_id: paused.receipt_id }),
      process: expect.objectContaining({ spawned: false }),
    });
  });

  it("checks the branch again after approval: the worktree switched branch before spawn (D.23)", async () => {
    const r = repo();
    writeAdapterSkill(r.root, "gated", {
      authority: ["read_only", "human_approval_required"],
      workspace: { worktree: r.ref, branch: "feature/x" },
    });
    const { envelope: paused, spawns } = await run(r.root, { skill: "gated" });
    expect(paused.status).toBe("needs_approval");
    expect(spawns).toBe(0);
    git(r.worktree, "checkout", "-q", "-b", "feature/other");
    await approvedResumeRefused(r, paused, "branch_mismatch");
  });
});

describe("adapter tool probe through an injected runner (D.22)", () => {
  it.each([
    ["missing", null, "missing_tool"],
    ["too old", { exitCode: 0, stdout: "v16.20.0\n" }, "tool_version_unsupported"],
    ["unparseable", { exitCode: 0, stdout: "node (custom build)\n" }, "tool_version_unsupported"],
    ["prerelease", { exitCode: 0, stdout: "v22.1.0-rc.1\n" }, "tool_version_unsupported"],
    ["failing", { exitCode: 1, stdout: "v22.1.0\n" }, "tool_version_unsupported"],
  ])("refuses a %s tool", async (_label, answer, code) => {
    const root = adapterWorkspace();
    cleanup.push(root);
    const runtime = adapterRuntime(root);
    try {
      runtime.adapters.trust("fake-local");
    } finally {
      runtime.close();
    }
    const calls: string[][] = [];
    const probe: ProbeRunner = (argv) => {
      calls.push([...argv]);
      return Promise.resolve(answer);
    };
    const { envelope, spawns } = await run(root, { probe });
    expect(dispatchOf(envelope)).toMatchObject({ status: "rejected", failure_code: code });
    expect(spawns).toBe(0);
    expect(calls).toEqual([["node", "--version"]]);
    const [attempt] = await attempts(root, envelope.run_id);
    expect(attempt?.dispatch.adapter.tool_probe).toMatchObject({
      ok: false,
      min_version: "18.0.0",
    });
  });

  it("accepts a release at or above the minimum and probes once", async () => {
    const root = adapterWorkspace();
    cleanup.push(root);
    const runtime = adapterRuntime(root);
    try {
      runtime.adapters.trust("fake-local");
    } finally {
      runtime.close();
    }
    const calls: string[][] = [];
    const probe: ProbeRunner = (argv) => {
      calls.push([...argv]);
      return Promise.resolve({ exitCode: 0, stdout: "v18.0.0\n" });
    };
    const { envelope, spawns } = await run(root, { probe });
    expect(dispatchOf(envelope).status).toBe("completed");
    expect(spawns).toBe(1);
    expect(calls).toEqual([["node", "--version"]]);
  });
});
