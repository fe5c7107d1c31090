/** A temporary workspace with the fake-local adapter and an adapter skill, for adapter tests. */
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterEach, expect } from "vitest";
import { createRuntime } from "../create-runtime.js";
import type { Runtime, RuntimeOptions } from "../create-runtime.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { REPO_ROOT } from "../testing/cli.js";
import type { ProbeRunner } from "./preflight.js";

/** Where the shipped fake-local adapter lives. */
export const FAKE_LOCAL_DIR = join(REPO_ROOT, "packages", "runtime", "fixtures", "adapters");

/** The skill's runner block options. */
export interface AdapterSkillOptions {
  adapter?: string;
  lane?: string;
  workflow?: string;
  commitPolicy?: string;
  authority?: string[];
  ceiling?: string[];
  workspace?: Record<string, string>;
  /** A skill default for the `allow_spawn` input (it must never grant spawning). */
  allowSpawnDefault?: boolean;
}

/** Writes `skills/<name>` with an adapter runner. */
export function writeAdapterSkill(
  root: string,
  name: string,
  opts: AdapterSkillOptions = {},
): void {
  const dir = join(root, "skills", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "SKILL.md"),
    `---\nname: ${name}\ndescription: Hands a packet to an adapter.\n---\nDispatch.\n`,
  );
  const ws =
    opts.workspace !== undefined
      ? `\n      workspace:\n${Object.entries(opts.workspace)
          .map(([k, v]) => `        ${k}: "${v}"`)
          .join("\n")}`
      : "";
  const ceiling =
    opts.ceiling !== undefined
      ? `\n    policy:\n      authority_ceiling: [${opts.ceiling.map((w) => `"${w}"`).join(", ")}]`
      : "";
  writeFileSync(
    join(dir, "X.yaml"),
    `skill: ${name}
runners:
  dispatch:
    default: true
    type: adapter
    adapter:
      id: "${opts.adapter ?? "fake-local"}"
      lane: "${opts.lane ?? "plain-agent"}"${opts.workflow !== undefined ? `\n      workflow: "${opts.workflow}"` : ""}${opts.commitPolicy !== undefined ? `\n      commit_policy: "${opts.commitPolicy}"` : ""}
      authority: [${(opts.authority ?? ["read_only"]).map((w) => `"${w}"`).join(", ")}]${ws}${ceiling}
    inputs:
      objective: {type: string, required: false}
      acceptance_criteria: {type: array, required: false}
      verification: {type: array, required: false}
      open_questions: {type: array, required: false}
      fixture_mode: {type: string, required: false}
      allow_spawn: {type: boolean, required: false${opts.allowSpawnDefault !== undefined ? `, default: ${opts.allowSpawnDefault}` : ""}}
`,
  );
}

/** A fresh workspace with `adapters/fake-local.yaml` (+ payload) and the `dispatch` skill. */
export function adapterWorkspace(): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "runx-adapter-")));
  cpSync(FAKE_LOCAL_DIR, join(root, "adapters"), { recursive: true });
  writeAdapterSkill(root, "dispatch");
  return root;
}

/**
 * The scratch directories of one test file, removed after each test: `workspace()` makes a
 * fake-local adapter workspace, `track(dir)` registers any other directory a test creates.
 */
export function scratchDirs(): { workspace: () => string; track: (dir: string) => string } {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const track = (dir: string): string => {
    dirs.push(dir);
    return dir;
  };
  return { workspace: () => track(adapterWorkspace()), track };
}

/** A runtime over `root` with fixture modes on. */
export function adapterRuntime(
  root: string,
  extra: Partial<RuntimeOptions> = {},
  env: Record<string, string> = {},
): Runtime {
  return createRuntime({
    workspaceRoot: root,
    runxHome: join(root, ".home"),
    env: {
      PATH: process.env.PATH,
      RUNX_ADAPTER_FIXTURE_MODES: "1",
      HOME: join(root, ".home"),
      ...env,
    },
    ...extra,
  });
}

/** A valid packet's inputs. */
export function goodInputs(extra: Record<string, unknown> = {}): Record<string, { value: never }> {
  const values: Record<string, unknown> = {
    objective: "Summarize the README",
    acceptance_criteria: ["a summary exists"],
    verification: ["test -f evidence.txt"],
    ...extra,
  };
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v as never }]));
}

/** Recursive snapshot (path → size:mtime) of files, skipping the given relative prefixes. */
export function snapshot(root: string, skip: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir)) {
      const abs = join(dir, entry);
      const rel = relative(root, abs);
      if (skip.some((s) => rel === s || rel.startsWith(`${s}/`))) continue;
      // Every attempt's own dispatch record is the refusal's receipt, not a side effect.
      if (/^\.runx\/runs\/[^/]+\/dispatches(\/|$)/.test(rel)) continue;
      const stat = lstatSync(abs);
      if (stat.isDirectory()) walk(abs);
      else out[rel] = `${stat.size}:${stat.mtimeMs}`;
    }
  };
  walk(root);
  return out;
}

/** Files a refusal may touch: the receipt store, the state store and the package cache. */
export const JOURNAL = [
  ".runx/receipts",
  ".runx/state.sqlite",
  ".runx/state.sqlite-wal",
  ".runx/state.sqlite-shm",
  ".runx/cache",
];

/** The `dispatch` block of a step's result. */
export interface DispatchView {
  status: string;
  failure_code: string | null;
  receipt_id: string;
  artifacts: Array<{ path: string; sha256: string; bytes: number }>;
  summary: string | null;
}

/** The dispatch result of an adapter run's envelope. */
export function dispatchOf(envelope: SkillRunEnvelope): DispatchView {
  return (envelope.result as { dispatch: DispatchView }).dispatch;
}

/** Trusts adapter `id` in `root` as it is now. */
export function trustIn(root: string, id = "fake-local"): void {
  const runtime = adapterRuntime(root);
  try {
    runtime.adapters.trust(id);
  } finally {
    runtime.close();
  }
}

/** Options of one run of an adapter skill. */
export interface DispatchRunOptions {
  skill?: string;
  inputs?: Record<string, unknown>;
  allowSpawn?: boolean;
  secretEnv?: string[];
  env?: Record<string, string>;
  probe?: ProbeRunner;
  runtime?: Partial<RuntimeOptions>;
  signal?: AbortSignal;
}

/** Runs an adapter skill once; `spawns` counts the runtime's spawn spy. */
export async function dispatchRun(
  root: string,
  opts: DispatchRunOptions = {},
): Promise<{ envelope: SkillRunEnvelope; spawns: number }> {
  let spawns = 0;
  const runtime = adapterRuntime(
    root,
    {
      onAdapterSpawn: () => (spawns += 1),
      ...(opts.probe !== undefined ? { adapterProbe: opts.probe } : {}),
      ...opts.runtime,
    },
    opts.env,
  );
  try {
    const envelope = await runtime.runSkill(
      {
        ref: opts.skill ?? "dispatch",
        inputs: goodInputs(opts.inputs),
        secretEnv: opts.secretEnv ?? [],
        ...(opts.allowSpawn === true ? { allowSpawn: true } : {}),
      },
      opts.signal !== undefined ? { signal: opts.signal } : {},
    );
    return { envelope, spawns };
  } finally {
    runtime.close();
  }
}

/** Resumes a paused run; `spawns` counts the runtime's spawn spy. */
export async function resumeRun(
  root: string,
  runId: string,
  document: unknown,
  opts: {
    allowSpawn?: boolean;
    env?: Record<string, string>;
    runtime?: Partial<RuntimeOptions>;
  } = {},
): Promise<{ envelope: SkillRunEnvelope; spawns: number }> {
  let spawns = 0;
  const runtime = adapterRuntime(
    root,
    { onAdapterSpawn: () => (spawns += 1), ...opts.runtime },
    opts.env,
  );
  try {
    const envelope = await runtime.resumeWith({
      runId,
      document,
      ...(opts.allowSpawn === true ? { allowSpawn: true } : {}),
    });
    return { envelope, spawns };
  } finally {
    runtime.close();
  }
}

/** Every recorded dispatch attempt of a run, with its receipt's verification. */
export async function attemptsOf(root: string, runId: string) {
  const runtime = adapterRuntime(root);
  try {
    return await runtime.adapters.attempts(runId);
  } finally {
    runtime.close();
  }
}

/** True when the whole receipt store verifies as trees. */
export async function storeVerifies(root: string): Promise<boolean> {
  const runtime = adapterRuntime(root);
  try {
    return (await runtime.verifyStore({ allowLocalDevelopment: true })).valid;
  } finally {
    runtime.close();
  }
}

/** True when fake-local's first act (a `sentinel` file beside its out dir) happened (in `runId`). */
export function sentinelIn(root: string, runId?: string): boolean {
  const runs = join(root, ".runx", "runs", runId ?? "");
  if (!existsSync(runs)) return false;
  const walk = (dir: string): boolean =>
    readdirSync(dir, { withFileTypes: true }).some((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name === "sentinel",
    );
  return walk(runs);
}

/** True when the run has an attempt directory (where an adapter's out dir is created). */
export function attemptDirIn(root: string, runId: string): boolean {
  return existsSync(join(root, ".runx", "runs", runId, "dispatch"));
}

/**
 * Runs the skill (with `--allow-spawn` unless told otherwise) and asserts a sealed refusal:
 * the exact code, zero spawns by the spy, no sentinel and no attempt directory, the workspace
 * unchanged outside the journal and the attempt's own record, and a signed dispatch receipt
 * that verifies. Returns the envelope and the attempt.
 */
export async function expectSealedRefusal(
  root: string,
  code: string,
  opts: DispatchRunOptions & { status?: string; also?: string[] } = {},
) {
  const before = [snapshot(root, JOURNAL), ...(opts.also ?? []).map((d) => snapshot(d, []))];
  const { envelope, spawns } = await dispatchRun(root, { allowSpawn: true, ...opts });
  expect(envelope.status).toBe("sealed");
  expect(dispatchOf(envelope)).toMatchObject({
    status: opts.status ?? "rejected",
    failure_code: code,
  });
  expect(spawns).toBe(0);
  expect(sentinelIn(root, envelope.run_id)).toBe(false);
  expect(attemptDirIn(root, envelope.run_id)).toBe(false);
  expect([snapshot(root, JOURNAL), ...(opts.also ?? []).map((d) => snapshot(d, []))]).toEqual(
    before,
  );
  const all = await attemptsOf(root, envelope.run_id);
  expect(all).toHaveLength(1);
  const [attempt] = all;
  expect(attempt?.verified).toBe(true);
  expect(attempt?.dispatch.process.spawned).toBe(false);
  expect(attempt?.dispatch.failure?.code).toBe(code);
  expect(await storeVerifies(root)).toBe(true);
  return { envelope, attempt: attempt! };
}
