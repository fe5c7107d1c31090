/**
 * What a command loads at start-up: Node's built-in modules each cost a process its compile and
 * set-up, so a command loads only those its work needs. Runs the built CLI with a preload that
 * records `process.moduleLoadList` at exit.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RUNX_BIN, cleanEnv, makeWorkspace } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
let preload: string;
let record: string;

beforeEach(() => {
  ws = makeWorkspace("runx-startup-");
  ws.addBundledSkill("echo");
  record = join(ws.home, "modules.json");
  preload = ws.write(
    "preload.cjs",
    `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(record)}, JSON.stringify(process.moduleLoadList)));\n`,
  );
});

afterEach(() => ws.cleanup());

/** The built-in modules (`NativeModule x` → `x`) loaded by `runx args`, after a settling run. */
function builtinsLoadedBy(args: string[]): Set<string> {
  const env = cleanEnv(ws);
  // Settle first (package cache, chunk pack, code cache), as every later run finds it.
  for (let i = 0; i < 3; i++) {
    spawnSync(process.execPath, [RUNX_BIN, ...args], { cwd: ws.root, env, encoding: "utf8" });
  }
  writeFileSync(record, "[]");
  const r = spawnSync(process.execPath, ["-r", preload, RUNX_BIN, ...args], {
    cwd: ws.root,
    env,
    encoding: "utf8",
  });
  expect(r.status, r.stderr).toBe(0);
  const list = JSON.parse(readFileSync(record, "utf8")) as string[];
  return new Set(
    list.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice("NativeModule ".length)),
  );
}

describe("start-up modules", () => {
  it("a cli-tool run loads process supervision; read-only --json commands do not", () => {
    const run = builtinsLoadedBy(["skill", "skills/echo", "--message", "hi", "--json"]);
    expect(run.has("child_process")).toBe(true);
    expect(run.has("os")).toBe(false);

    for (const args of [
      ["history", "--json"],
      ["verify", "--json"],
      ["list", "skills", "--json"],
    ]) {
      const loaded = builtinsLoadedBy(args);
      for (const name of ["child_process", "net", "tty", "dgram", "os"]) {
        expect(loaded.has(name), `runx ${args.join(" ")} loads ${name}`).toBe(false);
      }
    }
  });
});
