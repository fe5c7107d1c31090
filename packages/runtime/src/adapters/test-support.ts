/** A temporary workspace with the fake-local adapter and an adapter skill, for adapter tests. */
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createRuntime } from "../create-runtime.js";
import type { Runtime, RuntimeOptions } from "../create-runtime.js";
import { REPO_ROOT } from "../testing/cli.js";

/** Where the shipped fake-local adapter lives. */
export const FAKE_LOCAL_DIR = join(REPO_ROOT, "packages", "runtime", "fixtures", "adapters");

/** The skill's runner block options. */
export interface AdapterSkillOptions {
  adapter?: string;
  lane?: string;
  authority?: string[];
  ceiling?: string[];
  workspace?: Record<string, string>;
  extraInputs?: string;
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
      lane: "${opts.lane ?? "plain-agent"}"
      authority: [${(opts.authority ?? ["read_only"]).map((w) => `"${w}"`).join(", ")}]${ws}${ceiling}
    inputs:
      objective: {type: string, required: false}
      acceptance_criteria: {type: array, required: false}
      verification: {type: array, required: false}
      open_questions: {type: array, required: false}
      fixture_mode: {type: string, required: false}
      allow_spawn: {type: boolean, required: false}
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
