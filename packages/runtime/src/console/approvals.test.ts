/**
 * How the console counts decisions on a gate: one per operator, only for the gate's current
 * pause (an adapter dispatch retried after its questions passes the same gate id again), only
 * from operators who may still approve when the gate is released; and a resume document
 * cannot resolve a gate the console governs (policy/gate-resolution.ts).
 */
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime } from "../create-runtime.js";
import { adapterRuntime, adapterWorkspace, writeAdapterSkill } from "../adapters/test-support.js";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";

const PASSWORD = "correct horse battery";
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

function gatedFixture(): ConsoleFixture {
  const fx = consoleFixture();
  cleanups.push(() => fx.cleanup());
  return fx;
}

async function consolePause(fx: ConsoleFixture, initiator: { id: string; username: string }) {
  const runId = fx.runtime.console.newRunId();
  fx.runtime.console.recordInitiator(runId, initiator);
  const env = await fx.runtime.runSkill({
    ref: "skills/gated-echo",
    inputs: { message: { value: "hi" } },
    secretEnv: [],
    runId,
  });
  expect(env.status).toBe("needs_approval");
  return { runId, gateId: env.requests[0]!.id };
}

describe("gate decisions", () => {
  it("does not count an approval whose operator was disabled before the release", async () => {
    const fx = gatedFixture();
    const ops = fx.runtime.console.operators;
    const sam = await ops.add({ username: "sam", role: "approver", password: PASSWORD });
    const a = await ops.add({ username: "a", role: "approver", password: PASSWORD });
    const b = await ops.add({ username: "b", role: "approver", password: PASSWORD });
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: "*",
      requiredApprovals: 2,
      forbidInitiator: true,
    });
    const { runId, gateId } = await consolePause(fx, sam);
    const approvals = fx.runtime.console.approvals;
    await approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, a);
    ops.setDisabled("a", true);
    const second = await approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, b);
    expect(second).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
      details: { reason: "quorum_not_met" },
    });
    // Enabled again before the release, the approval counts again (evaluated at release).
    ops.setDisabled("a", false);
    const env = await approvals.release({ runId, gateId });
    expect(env.status).toBe("sealed");
  });

  it("refuses every approval of a run the console did not start under an initiator-excluding policy", async () => {
    const fx = gatedFixture();
    const a = await fx.runtime.console.operators.add({
      username: "a",
      role: "approver",
      password: PASSWORD,
    });
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: "release",
      requiredApprovals: 1,
      forbidInitiator: true,
    });
    const env = await fx.runtime.runSkill({
      ref: "skills/gated-echo",
      inputs: { message: { value: "hi" } },
      secretEnv: [],
    });
    await expect(
      fx.runtime.console.approvals.decide(
        { runId: env.run_id, gateId: "release", decision: "approve", reason: "ok" },
        a,
      ),
    ).rejects.toMatchObject({ code: "POLICY_DENIED", details: { reason: "initiator_unknown" } });
    // Without initiator exclusion the console may decide it.
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: "release",
      requiredApprovals: 1,
      forbidInitiator: false,
    });
    const ok = await fx.runtime.console.approvals.decide(
      { runId: env.run_id, gateId: "release", decision: "approve", reason: "ok" },
      a,
    );
    expect(ok.releasable).toBe(true);
  });

  it("refuses a resume document's decision on a console-governed gate, and runs nothing", async () => {
    const fx = gatedFixture();
    const sam = await fx.runtime.console.operators.add({
      username: "sam",
      role: "approver",
      password: PASSWORD,
    });
    const { runId, gateId } = await consolePause(fx, sam);
    await expect(
      fx.runtime.resumeWith({ runId, document: { approvals: { [gateId]: true } } }),
    ).rejects.toMatchObject({
      code: "POLICY_DENIED",
      details: { reason: "gate_policy_requires_console", gate_id: gateId, initiator: "sam" },
    });
    const detail = fx.runtime.console.runs.detail(runId);
    expect(detail.run.status).toBe("needs_approval");
    expect(detail.steps.filter((s) => s.stepId === "say")).toEqual([]);
  });
});

describe("a gate that pauses again in the same run", () => {
  let runtime: Runtime;

  it("counts only the decisions of the current pause", async () => {
    const root = adapterWorkspace();
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    runtime = adapterRuntime(root);
    cleanups.push(() => runtime.close());
    runtime.adapters.trust("fake-local");
    const ops = runtime.console.operators;
    const sam = await ops.add({ username: "sam", role: "approver", password: PASSWORD });
    const [a, b, c, d] = await Promise.all(
      ["a", "b", "c", "d"].map((u) =>
        ops.add({ username: u, role: "approver", password: PASSWORD }),
      ),
    );
    runtime.console.approvals.setPolicy({
      skill: "gated",
      gateId: "*",
      requiredApprovals: 2,
      forbidInitiator: true,
    });
    const runId = runtime.console.newRunId();
    runtime.console.recordInitiator(runId, sam, { allowSpawn: true });
    const paused = await runtime.console.runJob({
      kind: "start",
      runId,
      ref: "gated",
      inputs: {
        objective: "o",
        acceptance_criteria: ["a"],
        verification: ["v"],
        fixture_mode: "needs_input",
      },
    });
    expect(paused.status).toBe("needs_approval");
    const gateId = paused.requests[0]!.id;
    const approvals = runtime.console.approvals;
    await approvals.decide({ runId, gateId, decision: "approve", reason: "1" }, a!);
    await approvals.decide({ runId, gateId, decision: "approve", reason: "2" }, b!);
    const asked = await runtime.console.runJob({ kind: "release", runId, gateId });
    expect(asked.status).toBe("needs_agent");
    const question = asked.requests[0]!;
    const again = await runtime.console.runJob({
      kind: "answer",
      runId,
      answers: { [question.id]: { q_scope: "lib" } },
    });
    expect(again.status).toBe("needs_approval");
    expect(again.requests[0]!.id).toBe(gateId);
    const [pending] = await approvals.pending();
    expect(pending).toMatchObject({ runId, gateId, decisions: [] });
    // The first pause's two approvals were spent by its release: one new approval is 1 of 2.
    const third = await approvals.decide({ runId, gateId, decision: "approve", reason: "3" }, c!);
    expect(third).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
    });
    const fourth = await approvals.decide({ runId, gateId, decision: "approve", reason: "4" }, d!);
    expect(fourth).toMatchObject({ approvals: 2, releasable: true });
  });
});
