import { appendFileSync, cpSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace();
  ws.addBundledSkill("echo");
});
afterEach(() => ws.cleanup());

async function pausedEcho(): Promise<{ runId: string; receiptId: string }> {
  const r = await runx(ws, ["skill", "skills/echo", "--json"]);
  expect(r.code).toBe(2);
  const env = r.json<{ run_id: string; receipt_id: string }>();
  return { runId: env.run_id, receiptId: env.receipt_id };
}

describe("runx resume", () => {
  it("continues an input pause from a file, sealing a receipt that points at the paused one", async () => {
    const { runId, receiptId } = await pausedEcho();
    ws.write(
      "answers.json",
      JSON.stringify({ answers: { "input.echo.message": { message: "later" } } }),
    );
    const r = await runx(ws, ["resume", runId, "answers.json", "--json"]);
    expect(r.code).toBe(0);
    const env = r.json<{ status: string; run_id: string; result: unknown; receipt_id: string }>();
    expect(env).toMatchObject({ status: "sealed", run_id: runId, result: { message: "later" } });
    const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${env.receipt_id.slice(7)}.json`));
    expect(receipt.lineage.previous.uri).toBe(`runx:receipt:${receiptId}`);
    expect((await runx(ws, ["verify", "--json"])).code).toBe(0);
  });

  it("resumes a run of a package outside the workspace (the checkpoint keeps a resolvable ref)", async () => {
    const outside = join(ws.home, "elsewhere", "echo");
    cpSync(join(ws.root, "skills", "echo"), outside, { recursive: true });
    const paused = await runx(ws, ["skill", outside, "--json"]);
    expect(paused.code).toBe(2);
    const env = paused.json<{ run_id: string }>();
    expect(paused.stdout).not.toContain(ws.home);
    const doc = JSON.stringify({ answers: { "input.echo.message": { message: "from outside" } } });
    const r = await runx(ws, ["resume", env.run_id, "-", "--json"], { stdin: doc });
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ status: "sealed", result: { message: "from outside" } });
  });

  it("treats a sealed run as terminal", async () => {
    const { runId } = await pausedEcho();
    const doc = JSON.stringify({ answers: { "input.echo.message": { message: "once" } } });
    expect((await runx(ws, ["resume", runId, "-", "--json"], { stdin: doc })).code).toBe(0);
    const again = await runx(ws, ["resume", runId, "-", "--json"], { stdin: doc });
    expect(again.code).toBe(1);
    expect(again.json().error).toMatchObject({ reason: "RESUME_REFUSED", status: "sealed" });
  });

  it("stays paused (exit 2) when the answers do not cover the request", async () => {
    const { runId } = await pausedEcho();
    const r = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ answers: {} }),
    });
    expect(r.code).toBe(2);
    expect(r.json()).toMatchObject({ status: "needs_agent", run_id: runId });
  });

  it("refuses to resume after the package was edited, and runs nothing", async () => {
    const { runId } = await pausedEcho();
    appendFileSync(join(ws.root, "skills", "echo", "SKILL.md"), "\nedited after the pause\n");
    const doc = JSON.stringify({ answers: { "input.echo.message": { message: "x" } } });
    const r = await runx(ws, ["resume", runId, "-", "--json"], { stdin: doc });
    expect(r.code).toBe(1);
    expect(r.json().error).toMatchObject({ reason: "RESUME_REFUSED" });
    const history = await runx(ws, ["history", "--json"]);
    expect(
      history.json<{ pendingRuns: Array<{ id: string }> }>().pendingRuns.map((p) => p.id),
    ).toEqual([runId]);
  });

  it("refuses digests that disagree with the checkpoint and answers for requests that are not pending", async () => {
    const { runId } = await pausedEcho();
    const doc = JSON.stringify({ answers: { "input.echo.message": { message: "x" } } });
    const wrong = `sha256:${"0".repeat(64)}`;
    const bad = await runx(ws, ["resume", runId, "-", "--package-digest", wrong, "--json"], {
      stdin: doc,
    });
    expect(bad.json().error).toMatchObject({ reason: "RESUME_REFUSED" });
    const unknown = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ answers: { "agent_task.other.output": {} } }),
    });
    expect(unknown.json().error).toMatchObject({
      reason: "ANSWERS_INVALID",
      path: "answers.agent_task.other.output",
    });
    const extraKey = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ answer: {} }),
    });
    expect(extraKey.json().error).toMatchObject({ reason: "ANSWERS_INVALID" });
    const missing = await runx(ws, ["resume", "run_default_ffffffffffffffff", "-", "--json"], {
      stdin: doc,
    });
    expect(missing.json().error).toMatchObject({ reason: "RUN_NOT_FOUND" });
  });
});
