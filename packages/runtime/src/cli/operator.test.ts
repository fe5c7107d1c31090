import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import { cleanEnv, makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-operator-");
});
afterEach(() => ws.cleanup());

interface Failure {
  error: { reason: string; message: string; path?: string };
}

const PASSWORD = "correct horse battery staple";

describe("runx operator add", () => {
  it("creates an operator whose password (from stdin) signs in, and never echoes it", async () => {
    const r = await runx(ws, ["operator", "add", "alice", "--role", "approver", "--json"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json()).toMatchObject({ username: "alice", role: "approver" });
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
    // The account really exists in the workspace's store and the password is the one typed.
    const env = cleanEnv(ws);
    const runtime = createRuntime({ workspaceRoot: ws.root, runxHome: env.RUNX_HOME ?? "", env });
    try {
      const who = await runtime.console.operators.authenticate("alice", PASSWORD);
      expect(who).toMatchObject({ username: "alice", role: "approver" });
      await expect(
        runtime.console.operators.authenticate("alice", "wrong password!!"),
      ).rejects.toMatchObject({ code: "UNAUTHENTICATED" });
    } finally {
      runtime.close();
    }
  });

  it("refuses a duplicate name, an unknown role and a short password, without echoing it", async () => {
    expect(
      (await runx(ws, ["operator", "add", "bob", "--role", "viewer"], { stdin: `${PASSWORD}\n` }))
        .code,
    ).toBe(0);
    const dup = await runx(ws, ["operator", "add", "bob", "--role", "viewer", "--json"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(dup.code).not.toBe(0);
    expect(dup.json<Failure>().error.reason).toBe("OPERATOR_EXISTS");
    const role = await runx(ws, ["operator", "add", "carol", "--role", "root", "--json"], {
      stdin: `${PASSWORD}\n`,
    });
    expect(role.code).not.toBe(0);
    expect(role.json<Failure>().error.reason).toBe("INPUT_INVALID");
    const short = await runx(ws, ["operator", "add", "dave", "--role", "viewer", "--json"], {
      stdin: "tiny-secret\n",
    });
    expect(short.code).not.toBe(0);
    expect(short.json<Failure>().error.reason).toBe("INPUT_INVALID");
    expect(short.stdout + short.stderr).not.toContain("tiny-secret");
  });
});
