import { cpSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { FAKE_LOCAL_DIR, writeAdapterSkill } from "../adapters/test-support.js";
import { cleanEnv, makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

const spaces: Workspace[] = [];
afterEach(() => {
  for (const ws of spaces.splice(0)) ws.cleanup();
});

describe("runx adapter and runx skill --allow-spawn", () => {
  it("trusts fake-local, records a dry run without the flag, dispatches with it, and the store verifies", async () => {
    const ws = makeWorkspace("runx-adapter-cli-");
    spaces.push(ws);
    cpSync(FAKE_LOCAL_DIR, join(ws.root, "adapters"), { recursive: true });
    writeAdapterSkill(ws.root, "dispatch");
    const env = cleanEnv(ws, { RUNX_ADAPTER_FIXTURE_MODES: "1" });
    const listed = await runx(ws, ["adapter", "list", "--json"], { env });
    expect(listed.json<{ adapters: Array<{ id: string; trust: string }> }>().adapters).toEqual([
      expect.objectContaining({ id: "fake-local", trust: "untrusted" }),
    ]);
    expect((await runx(ws, ["adapter", "trust", "fake-local"], { env })).code).toBe(0);
    const inputs = [
      "--objective",
      "Summarize",
      "--input-json",
      'acceptance_criteria=["done"]',
      "--input-json",
      'verification=["true"]',
    ];
    const dry = await runx(ws, ["skill", "dispatch", ...inputs, "--json"], { env });
    expect(dry.code).toBe(0);
    expect(dry.json<{ result: { dispatch: { status: string } } }>().result.dispatch.status).toBe(
      "dry_run",
    );
    const live = await runx(ws, ["skill", "dispatch", ...inputs, "--allow-spawn", "--json"], {
      env,
    });
    const envelope = live.json<{ run_id: string; result: { dispatch: { status: string } } }>();
    expect(envelope.result.dispatch.status).toBe("completed");
    const attempts = await runx(ws, ["adapter", "attempts", envelope.run_id, "--json"], { env });
    expect(attempts.json<{ attempts: Array<{ verified: boolean }> }>().attempts).toEqual([
      expect.objectContaining({ verified: true }),
    ]);
    const verify = await runx(ws, ["verify", "--json"], { env });
    expect(verify.code).toBe(0);
    // Nothing of that run is in flight: a cancel is refused instead of left for a later attempt.
    const cancel = await runx(ws, ["adapter", "cancel", envelope.run_id, "--json"], { env });
    expect(cancel.code).toBe(1);
    expect(cancel.stdout + cancel.stderr).toContain("DISPATCH_NOT_RUNNING");
    expect(existsSync(join(ws.root, ".runx", "runs", envelope.run_id, "cancel-requested"))).toBe(
      false,
    );
  });
});
