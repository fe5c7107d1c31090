/**
 * `runx operator add` against the shared PostgreSQL state store (RUNX_STATE_URL): the
 * operator lands in the database, where another workspace's runtime signs them in; a bad
 * URL is one line naming the variable.
 */
import { existsSync } from "node:fs";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import { scratchPgState } from "../store/pg/test-kit.js";
import type { ScratchPgState } from "../store/pg/test-kit.js";
import { cleanEnv, makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const PASSWORD = "correct horse battery staple";

let scratch: ScratchPgState;
beforeAll(async () => {
  scratch = await scratchPgState();
}, 60_000);
afterAll(async () => {
  await scratch.drop();
}, 60_000);

let ws: Workspace;
let other: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-operator-pg-");
  other = makeWorkspace("runx-operator-pg-other-");
});
afterEach(() => {
  ws.cleanup();
  other.cleanup();
});

describe("runx operator add with RUNX_STATE_URL", () => {
  it("creates the operator in the shared database, not in the workspace", async () => {
    const r = await runx(ws, ["operator", "add", "alice", "--role", "admin", "--json"], {
      stdin: `${PASSWORD}\n`,
      env: { RUNX_STATE_URL: scratch.url },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ username: "alice", role: "admin" });
    expect(existsSync(`${ws.root}/.runx/state.sqlite`)).toBe(false);
    const env = cleanEnv(other, { RUNX_STATE_URL: scratch.url });
    const runtime = createRuntime({ workspaceRoot: other.root, runxHome: env.RUNX_HOME!, env });
    try {
      const who = await runtime.console.operators.authenticate("alice", PASSWORD);
      expect(who).toMatchObject({ username: "alice", role: "admin" });
    } finally {
      runtime.close();
    }
  }, 30_000);

  it("refuses a URL with a password in one line, without echoing it", async () => {
    const r = await runx(ws, ["operator", "add", "bob", "--role", "viewer", "--json"], {
      stdin: `${PASSWORD}\n`,
      env: { RUNX_STATE_URL: "postgres://runx:hunter2-secret@127.0.0.1:5432/runx" },
    });
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("RUNX_STATE_URL must not contain a password");
    expect(r.stdout + r.stderr).not.toContain("hunter2");
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 30_000);
});
