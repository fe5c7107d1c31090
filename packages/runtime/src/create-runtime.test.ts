import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "./create-runtime.js";
import { REPO_ROOT } from "./testing/cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("createRuntime", () => {
  it("starts, lists as pending, and resumes a paused run through the same API the CLI uses", async () => {
    const ws = mkdtempSync(join(tmpdir(), "runx-api-"));
    dirs.push(ws);
    cpSync(join(REPO_ROOT, "skills", "echo"), join(ws, "skills", "echo"), { recursive: true });
    const runtime = createRuntime({
      workspaceRoot: ws,
      runxHome: join(ws, "home"),
      env: { PATH: process.env.PATH },
    });
    try {
      const paused = await runtime.runSkill({ ref: "echo", inputs: {}, secretEnv: [] });
      expect(paused.status).toBe("needs_agent");
      const pending = await runtime.pending();
      expect(pending.map((p) => p.id)).toEqual([paused.run_id]);
      expect(pending[0]?.requests).toEqual(paused.requests);
      const sealed = await runtime.resumeWith({
        runId: paused.run_id,
        document: { answers: { [paused.requests[0]!.id]: { message: "via the API" } } },
      });
      expect(sealed).toMatchObject({ status: "sealed", result: { message: "via the API" } });
      expect(await runtime.pending()).toEqual([]);
    } finally {
      runtime.close();
    }
  });
});
