/**
 * How the console counts decisions on a gate: one per operator and pause, only for the gate's
 * current pause (an adapter dispatch retried after its questions passes the same gate id
 * again), only from operators who may still approve when the gate is released; and a resume
 * document cannot resolve a gate the console governs (policy/gate-resolution.ts).
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import type { Runtime } from "../create-runtime.js";
import { adapterRuntime, adapterWorkspace, writeAdapterSkill } from "../adapters/test-support.js";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";
import type { Operator } from "./operators.js";

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
    await ops.setDisabled("a", true);
    const second = await approvals.decide({ runId, gateId, decision: "approve", reason: "ok" }, b);
    expect(second).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
      details: { reason: "quorum_not_met" },
    });
    // Enabled again before the release, the approval counts again (evaluated at release).
    await ops.setDisabled("a", false);
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
    // The inbox says so before anyone tries.
    const [pending] = await fx.runtime.console.approvals.pending();
    expect(pending).toMatchObject({ initiator: null, approversAvailable: 0 });
    expect(pending!.initiatorUnknown).toContain("was not started in the console");
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
  /**
   * An adapter skill under a 2-approval policy, started in the console by sam and paused at
   * its gate; `pauseAgain` releases the gate with the given approvers, answers the dispatch's
   * questions and returns the run paused at the same gate id again.
   */
  async function rePausingRun() {
    const root = adapterWorkspace();
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    writeAdapterSkill(root, "gated", { authority: ["read_only", "human_approval_required"] });
    const runtime: Runtime = adapterRuntime(root);
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
    const decideAll = async (who: Operator[]) => {
      for (const op of who) {
        await approvals.decide({ runId, gateId, decision: "approve", reason: op.username }, op);
      }
    };
    /** Answers the questions the released dispatch asked; the run is back at the gate. */
    const answerQuestions = async () => {
      const asked = runtime.console.runs.detail(runId);
      expect(asked.run.status).toBe("needs_agent");
      const question = asked.pendingRequests[0]!;
      const again = await runtime.console.runJob({
        kind: "answer",
        runId,
        answers: { [question.id]: { q_scope: "lib" } },
      });
      expect(again.status).toBe("needs_approval");
      expect(again.requests[0]!.id).toBe(gateId);
      return again.receipt_id!;
    };
    return {
      root,
      runtime,
      runId,
      gateId,
      approvals,
      ops: { a: a!, b: b!, c: c!, d: d! },
      firstPause: paused.receipt_id!,
      decideAll,
      answerQuestions,
    };
  }

  it("counts only the decisions of the current pause", async () => {
    const { runtime, runId, gateId, approvals, ops, decideAll, answerQuestions } =
      await rePausingRun();
    await decideAll([ops.a, ops.b]);
    const asked = await runtime.console.runJob({ kind: "release", runId, gateId });
    expect(asked.status).toBe("needs_agent");
    await answerQuestions();
    const [pending] = await approvals.pending();
    expect(pending).toMatchObject({ runId, gateId, decisions: [] });
    // The dispatch's preview is its binding: which packet goes to which adapter.
    expect(pending!.preview).toMatchObject({
      kind: "adapter_dispatch",
      headline: expect.stringMatching(/^dispatch of packet \S+ to adapter fake-local$/),
    });
    // The first pause's two approvals were spent by its release: one new approval is 1 of 2.
    const third = await approvals.decide(
      { runId, gateId, decision: "approve", reason: "3" },
      ops.c,
    );
    expect(third).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
    });
    const fourth = await approvals.decide(
      { runId, gateId, decision: "approve", reason: "4" },
      ops.d,
    );
    expect(fourth).toMatchObject({ approvals: 2, releasable: true });
  });

  it("lets the operators who approved the first pause approve the second, once each", async () => {
    const { runtime, runId, gateId, approvals, ops, firstPause, decideAll, answerQuestions } =
      await rePausingRun();
    await decideAll([ops.a, ops.b]);
    await runtime.console.runJob({ kind: "release", runId, gateId });
    const secondPause = await answerQuestions();
    expect(secondPause).not.toBe(firstPause);

    const again = await approvals.decide(
      { runId, gateId, decision: "approve", reason: "again" },
      ops.a,
    );
    expect(again).toMatchObject({ approvals: 1, required: 2, releasable: false });
    // One vote per operator and pause still holds.
    await expect(
      approvals.decide({ runId, gateId, decision: "approve", reason: "twice" }, ops.a),
    ).rejects.toMatchObject({ code: "POLICY_DENIED", details: { reason: "already_decided" } });
    const both = await approvals.decide(
      { runId, gateId, decision: "approve", reason: "again" },
      ops.b,
    );
    expect(both).toMatchObject({ approvals: 2, releasable: true });
    const done = await runtime.console.runJob({ kind: "release", runId, gateId });
    expect(done.status).not.toBe("needs_approval");

    const decisions = runtime.console.runs.detail(runId).decisions;
    expect(decisions.map((d) => [d.username, d.pauseReceiptId])).toEqual([
      ["a", firstPause],
      ["b", firstPause],
      ["a", secondPause],
      ["b", secondPause],
    ]);
  });

  it("never counts an earlier pause's decisions, even when the process died right after the release paused the run again", async () => {
    const { root, runtime, runId, gateId, approvals, ops, decideAll, answerQuestions } =
      await rePausingRun();
    await decideAll([ops.a, ops.b]);
    // The state a crash leaves: the release's continuation committed its new pause, and the
    // process died before writing anything else. A trigger refuses every later change to the
    // recorded decisions, as a dead process would not make it.
    const db = new Database(join(root, ".runx", "state.sqlite"));
    db.exec(`CREATE TRIGGER crashed_after_pause BEFORE UPDATE ON approval_decisions
      BEGIN SELECT RAISE(ABORT, 'the process died after the pause'); END`);
    db.close();
    await approvals.release({ runId, gateId }).catch(() => undefined);
    expect(runtime.console.runs.detail(runId).run.status).toBe("needs_agent");
    await answerQuestions();

    // A restarted host finds nothing to release without new decisions.
    expect(() => runtime.console.recovery.resumeJob(runId)).toThrow(
      expect.objectContaining({ code: "RESUME_REFUSED" }),
    );
    const [pending] = await approvals.pending();
    expect(pending).toMatchObject({ runId, gateId, decisions: [] });
    const third = await approvals.decide(
      { runId, gateId, decision: "approve", reason: "3" },
      ops.c,
    );
    expect(third).toMatchObject({ approvals: 1, required: 2, releasable: false });
    await expect(approvals.release({ runId, gateId })).rejects.toMatchObject({
      code: "RESUME_REFUSED",
      details: { reason: "quorum_not_met" },
    });
    // This pause's decisions are what a restarted host releases (and counts) again.
    expect(runtime.console.recovery.resumeJob(runId)).toEqual({ kind: "release", runId, gateId });
  });
});
