/**
 * The skill page's "CLI equivalent" line, tested by running it: the catalog's entries for a
 * workspace skill and a local-registry record, the line the page builds from them, executed
 * by a shell with the real `runx` from the workspace root, must seal with the typed values.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime } from "@runx/runtime";
import type { Runtime } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cliCommand, defaultRunner, fieldsOf, shellWord } from "./skill-form";

const REPO = join(import.meta.dirname, "..", "..", "..", "..");
const RUNX_BIN = join(REPO, "packages", "runtime", "bin", "runx.cjs");

let base: string;
let root: string;
let home: string;
let runtime: Runtime;

beforeEach(async () => {
  base = mkdtempSync(join(tmpdir(), "runx-cli-line-"));
  root = join(base, "ws");
  home = join(base, "home");
  mkdirSync(join(home, "bin"), { recursive: true });
  cpSync(join(REPO, "skills", "echo"), join(root, "skills", "echo"), { recursive: true });
  runtime = createRuntime({ workspaceRoot: root, runxHome: join(home, ".runx"), env: {} });
  await runtime.registry().publish(join(root, "skills", "echo"), {
    owner: "acme",
    version: "0.1.0",
  });
  // `runx` on PATH, as an installed CLI would be.
  const shim = join(home, "bin", "runx");
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${RUNX_BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
});

afterEach(() => {
  runtime.close();
  rmSync(base, { recursive: true, force: true });
});

/** Runs `line` in a POSIX shell from the workspace root (the API's RUNX_HOME, no colours). */
function shell(line: string) {
  const env = {
    PATH: `${join(home, "bin")}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    RUNX_HOME: join(home, ".runx"),
    TZ: "UTC",
    NO_COLOR: "1",
  } as unknown as NodeJS.ProcessEnv;
  const result = spawnSync("/bin/sh", ["-c", line], {
    cwd: root,
    env,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** The line the skill page shows for `ref` with `message` typed into the form. */
async function lineFor(ref: string, message: string): Promise<string> {
  const skill = await runtime.catalog.get(ref);
  const runner = defaultRunner(skill.runners)!;
  return cliCommand({
    cliRef: skill.cliRef,
    runner,
    fields: fieldsOf(runner.inputs),
    values: { message },
  });
}

describe("the CLI-equivalent line", () => {
  it.each([
    ["a workspace skill", "skills/echo", "runx skill skills/echo"],
    ["a registry record", "acme/echo@0.1.0", "runx skill registry:acme/echo@0.1.0"],
  ])("runs %s as the console would start it", async (_what, ref, prefix) => {
    for (const message of ["hi", 'it\'s "quoted" & $HOME, not expanded', "42", "-dash"]) {
      const line = await lineFor(ref, message);
      expect(line.startsWith(`${prefix} `)).toBe(true);
      const run = shell(line);
      expect(run.err, line).toBe("");
      expect(run.code, line).toBe(0);
      expect(run.out).toMatch(/^status: sealed$/m);
      expect(run.out).toMatch(/^outcome: completed$/m);
      // The value arrives as typed: the same string, not a number, not shell-expanded.
      expect(run.out).toContain(`"message": ${JSON.stringify(message)}`);
    }
  });

  it("shows a required input still empty as a placeholder, and a granted spawn", async () => {
    const skill = await runtime.catalog.get("skills/echo");
    const runner = defaultRunner(skill.runners)!;
    const fields = fieldsOf(runner.inputs);
    expect(cliCommand({ cliRef: skill.cliRef, runner, fields, values: {} })).toBe(
      "runx skill skills/echo --message <message>",
    );
    expect(
      cliCommand({
        cliRef: skill.cliRef,
        runner: { name: "other", default: false },
        fields,
        values: { message: "hi" },
        allowSpawn: true,
      }),
    ).toBe("runx skill skills/echo other --message hi --allow-spawn");
  });

  it("quotes words for a POSIX shell", () => {
    expect(shellWord("skills/echo")).toBe("skills/echo");
    expect(shellWord("a b")).toBe("'a b'");
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
  });
});
