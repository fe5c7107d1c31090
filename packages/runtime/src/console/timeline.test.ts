/**
 * A run's timeline over real runs and the real state store: planned steps listed before they
 * run, each step's times, attempts and receipt, and the event history with who started the
 * run, each pause, the decisions on it, who resumed it and why, and the seal.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openStateStore } from "../store/open.js";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";
import type { Operator } from "./operators.js";
import { buildTimeline } from "./timeline.js";
import type { RunTimeline, TimelineEvent } from "./timeline.js";

const PASSWORD = "correct horse battery";

/** prepare (echo) → release (approval) → publish (echo). */
const RELEASE_YAML = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      message: {type: string, required: true}",
  "    graph:",
  "      name: staged-release",
  "      result_from: [publish]",
  "      steps:",
  "        - id: prepare",
  "          label: Prepare the message",
  "          skill: ../echo",
  "          inputs:",
  "            message: $input.message",
  "        - id: release",
  "          run:",
  "            type: approval",
  "          inputs:",
  "            gate_id: staged.release",
  "            reason: Publish the prepared message.",
  "        - id: publish",
  "          skill: ../echo",
  "          context:",
  "            approval: release.approval_decision",
  "          inputs:",
  "            message: $input.message",
  "",
].join("\n");

/** One agent step, answered from the console or the CLI. */
const ASK_YAML = [
  "runners:",
  "  default:",
  "    type: graph",
  "    graph:",
  "      name: asks-agent",
  "      steps:",
  "        - id: assess",
  "          run:",
  "            type: agent-task",
  "            agent: reviewer",
  "            task: assess",
  "            outputs:",
  "              decision: string",
  "",
].join("\n");

let fx: ConsoleFixture;
let alice: Operator;
let bob: Operator;
beforeEach(async () => {
  fx = consoleFixture();
  fx.ws.write("skills/staged-release/SKILL.md", "---\nname: staged-release\n---\nStaged.\n");
  fx.ws.write("skills/staged-release/X.yaml", RELEASE_YAML);
  fx.ws.write("skills/asks-agent/SKILL.md", "---\nname: asks-agent\n---\nAsks an agent.\n");
  fx.ws.write("skills/asks-agent/X.yaml", ASK_YAML);
  alice = await fx.runtime.console.operators.add({
    username: "alice",
    role: "approver",
    password: PASSWORD,
  });
  bob = await fx.runtime.console.operators.add({
    username: "bob",
    role: "approver",
    password: PASSWORD,
  });
});
afterEach(() => fx.cleanup());

/** Starts `ref` as the console's worker does, with `initiator` recorded first. */
async function consoleStart(ref: string, initiator: Operator, inputs: Record<string, unknown>) {
  const runId = fx.runtime.console.newRunId();
  fx.runtime.console.recordInitiator(runId, initiator);
  const env = await fx.runtime.console.runJob({ kind: "start", runId, ref, inputs });
  return { runId, env };
}

const timeline = (runId: string): RunTimeline => fx.runtime.console.runs.timeline(runId);
const kinds = (t: RunTimeline): string[] =>
  t.events.map((e) => (e.stepId !== null ? `${e.kind}:${e.stepId}` : e.kind));
const only = (t: RunTimeline, kind: TimelineEvent["kind"]): TimelineEvent[] =>
  t.events.filter((e) => e.kind === kind);

describe("the run timeline", () => {
  it("lists the steps a paused graph has not reached, and who started it", async () => {
    const { runId, env } = await consoleStart("skills/staged-release", alice, { message: "hi" });
    expect(env.status).toBe("needs_approval");
    const t = timeline(runId);
    expect(t.planRecorded).toBe(true);
    expect(t.steps.map((s) => [s.stepId, s.status, s.planned])).toEqual([
      ["prepare", "closed", true],
      ["release", "waiting", true],
      ["publish", "pending", true],
    ]);
    const [prepare, release, publish] = t.steps;
    expect(prepare).toMatchObject({ label: "Prepare the message", kind: "skill", attempts: 1 });
    expect(prepare?.receiptId).toMatch(/^sha256:/);
    expect(Date.parse(prepare!.finishedAt!)).toBeGreaterThanOrEqual(
      Date.parse(prepare!.startedAt!),
    );
    expect(prepare?.durationMs).toBe(
      Date.parse(prepare!.finishedAt!) - Date.parse(prepare!.startedAt!),
    );
    expect(release).toMatchObject({ kind: "approval", startedAt: null, receiptId: null });
    expect(publish).toMatchObject({ attempts: 0, startedAt: null, finishedAt: null });

    expect(kinds(t)).toEqual([
      "run_started",
      "step_started:prepare",
      "step_finished:prepare",
      "paused",
    ]);
    expect(t.events[0]).toMatchObject({ seq: 1, via: "console", actor: "alice" });
    expect(only(t, "step_finished")[0]).toMatchObject({
      status: "closed",
      attempt: 1,
      receiptId: prepare?.receiptId,
    });
    expect(only(t, "paused")[0]?.requests).toEqual([
      {
        requestId: "staged.release",
        kind: "approval",
        gateId: "staged.release",
        gateReason: "Publish the prepared message.",
      },
    ]);
  });

  it("records the decision, the resume naming the approver and their reason, and the seal", async () => {
    const { runId } = await consoleStart("skills/staged-release", alice, { message: "hi" });
    const approvals = fx.runtime.console.approvals;
    await approvals.decide(
      { runId, gateId: "staged.release", decision: "approve", reason: "checked the copy" },
      bob,
    );
    const sealed = await approvals.release({ runId, gateId: "staged.release" });
    expect(sealed.status).toBe("sealed");
    const t = timeline(runId);
    expect(t.steps.map((s) => [s.stepId, s.status])).toEqual([
      ["prepare", "closed"],
      ["release", "closed"],
      ["publish", "closed"],
    ]);
    for (const step of t.steps) {
      expect(step.startedAt).not.toBeNull();
      expect(step.finishedAt).not.toBeNull();
      expect(step.durationMs).toBeGreaterThanOrEqual(0);
      expect(step.receiptId).toMatch(/^sha256:/);
      expect(step.attempts).toBe(1);
    }
    expect(kinds(t)).toEqual([
      "run_started",
      "step_started:prepare",
      "step_finished:prepare",
      "paused",
      "decision",
      "resumed",
      "step_started:release",
      "step_finished:release",
      "step_started:publish",
      "step_finished:publish",
      "sealed",
    ]);
    expect(only(t, "decision")[0]).toMatchObject({
      actor: "bob",
      decision: "approve",
      gateId: "staged.release",
      reason: "checked the copy",
    });
    expect(only(t, "resumed")[0]).toMatchObject({
      via: "console",
      actor: "bob",
      reason: "checked the copy",
    });
    expect(only(t, "sealed")[0]).toMatchObject({ status: "closed", receiptId: sealed.receipt_id });
    expect(t.events.map((e) => e.seq)).toEqual(t.events.map((_, i) => i + 1));
  });

  it("shows the steps a denied run never ran as not run", async () => {
    const { runId } = await consoleStart("skills/staged-release", alice, { message: "hi" });
    const approvals = fx.runtime.console.approvals;
    await approvals.decide(
      { runId, gateId: "staged.release", decision: "deny", reason: "wrong audience" },
      bob,
    );
    await approvals.release({ runId, gateId: "staged.release" });
    const t = timeline(runId);
    expect(t.steps.map((s) => [s.stepId, s.status])).toEqual([
      ["prepare", "closed"],
      ["release", "declined"],
      ["publish", "not_run"],
    ]);
    expect(only(t, "decision")[0]).toMatchObject({ decision: "deny", reason: "wrong audience" });
    expect(only(t, "sealed")[0]).toMatchObject({ status: "declined" });
  });

  it("names the operator and the note of a console answer, and the CLI for runx resume", async () => {
    const first = await consoleStart("skills/asks-agent", alice, {});
    expect(first.env.status).toBe("needs_agent");
    const requestId = first.env.requests[0]!.id;
    expect(timeline(first.runId).steps).toMatchObject([{ stepId: "assess", status: "waiting" }]);
    await fx.runtime.console.runJob({
      kind: "answer",
      runId: first.runId,
      answers: { [requestId]: { decision: "ship" } },
      by: "bob",
      note: "matches the checklist",
    });
    const answered = timeline(first.runId);
    expect(only(answered, "resumed")[0]).toMatchObject({
      via: "console",
      actor: "bob",
      reason: "matches the checklist",
      answered: [requestId],
    });
    expect(answered.steps).toMatchObject([{ stepId: "assess", status: "closed", attempts: 1 }]);

    // Started as a library call (no entry point named), resumed with runx resume's path.
    const second = await fx.runtime.runSkill({
      ref: "skills/asks-agent",
      inputs: {},
      secretEnv: [],
    });
    fx.ws.write("answers.json", JSON.stringify({ answers: { [requestId]: { decision: "ok" } } }));
    await fx.runtime.resume({ runId: second.run_id, source: "answers.json" });
    const cli = timeline(second.run_id);
    expect(cli.events[0]).toMatchObject({ kind: "run_started", via: "runtime", actor: null });
    expect(only(cli, "resumed")[0]).toMatchObject({ via: "cli", actor: null, reason: null });
  });

  it("gives a single-step run its one step with times", async () => {
    const env = await fx.runtime.runSkill({
      ref: "skills/echo",
      inputs: { message: { value: "hi" } },
      secretEnv: [],
      origin: { via: "mcp" },
    });
    const t = timeline(env.run_id);
    expect(t.steps).toHaveLength(1);
    expect(t.steps[0]).toMatchObject({ status: "closed", attempts: 1, receiptId: env.receipt_id });
    expect(t.steps[0]?.startedAt).not.toBeNull();
    expect(t.steps[0]?.finishedAt).not.toBeNull();
    expect(kinds(t)[0]).toBe("run_started");
    expect(t.events[0]?.via).toBe("mcp");
    expect(t.events.at(-1)).toMatchObject({ kind: "sealed", status: "closed" });
  });

  it("builds a run recorded before plans were from its rows: the initiator starts it", async () => {
    const { runId } = await consoleStart("skills/staged-release", alice, { message: "hi" });
    const state = openStateStore({ path: fx.runtime.paths.stateDb });
    try {
      const built = buildTimeline({
        run: state.getRun(runId),
        steps: state.listSteps(runId),
        // Without the lines this runtime adds (start, step starts and ends).
        ledger: state.readLedger(runId).filter((l) => l.kind === "resolution_requested"),
        decisions: [],
        initiator: "alice",
      });
      expect(built.planRecorded).toBe(false);
      expect(built.steps.map((s) => s.stepId)).toEqual(["prepare"]);
      expect(built.events.map((e) => e.kind)).toEqual(["run_started", "paused"]);
      expect(built.events[0]).toMatchObject({ via: "console", actor: "alice" });
    } finally {
      state.close();
    }
  });

  it("lists a nested graph's steps under the step that runs them", async () => {
    fx.ws.write("skills/inner/SKILL.md", "---\nname: inner\n---\nGated inner graph.\n");
    fx.ws.write(
      "skills/inner/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    inputs:",
        "      message: {type: string, required: true}",
        "    graph:",
        "      name: inner",
        "      result_from: [say]",
        "      steps:",
        "        - id: approve",
        "          run: {type: approval}",
        "          inputs:",
        "            gate_id: inner.release",
        "            reason: Release the inner message.",
        "        - id: say",
        "          skill: ../echo",
        "          inputs:",
        "            message: $input.message",
        "",
      ].join("\n"),
    );
    fx.ws.write("skills/outer/SKILL.md", "---\nname: outer\n---\nRuns inner, then echoes.\n");
    fx.ws.write(
      "skills/outer/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    inputs:",
        "      message: {type: string, required: true}",
        "    graph:",
        "      name: outer",
        "      result_from: [after]",
        "      steps:",
        "        - id: nested",
        "          skill: ../inner",
        "          inputs:",
        "            message: $input.message",
        "        - id: after",
        "          skill: ../echo",
        "          inputs:",
        "            message: $steps.nested.message",
        "",
      ].join("\n"),
    );
    const { runId, env } = await consoleStart("skills/outer", alice, { message: "hi" });
    expect(env.status).toBe("needs_approval");
    expect(timeline(runId).steps.map((s) => [s.stepId, s.status])).toEqual([
      ["nested", "waiting"],
      ["after", "pending"],
    ]);
    // While a resumed run executes the nested step again, its deferred row reads as running.
    const state = openStateStore({ path: fx.runtime.paths.stateDb });
    try {
      const ledger = state.readLedger(runId);
      const tail = ledger.at(-1)!;
      const later = new Date(Date.now() + 60_000).toISOString();
      const resumed = buildTimeline({
        run: { ...state.getRun(runId), status: "running" },
        steps: state.listSteps(runId),
        ledger: [
          ...ledger,
          {
            ...tail,
            idx: tail.idx + 1,
            kind: "step_started",
            status: "running",
            stepId: "nested",
            entry: { entry: { data: { detail: { attempt: 1 } }, meta: { created_at: later } } },
          },
        ],
        decisions: [],
        initiator: "alice",
      });
      expect(resumed.steps[0]).toMatchObject({
        stepId: "nested",
        status: "running",
        startedAt: later,
        finishedAt: null,
      });
    } finally {
      state.close();
    }

    const approvals = fx.runtime.console.approvals;
    await approvals.decide(
      { runId, gateId: "inner.release", decision: "approve", reason: "fine" },
      bob,
    );
    await approvals.release({ runId, gateId: "inner.release" });
    const t = timeline(runId);
    expect(t.steps.map((s) => [s.stepId, s.status, s.planned])).toEqual([
      ["nested", "closed", true],
      ["nested/approve", "closed", false],
      ["nested/say", "closed", false],
      ["after", "closed", true],
    ]);
    expect(t.steps.every((s) => s.receiptId !== null && s.durationMs !== null)).toBe(true);
  });

  it("refuses an unknown run with RUN_NOT_FOUND", () => {
    expect(() => timeline("run_console_0000000000000000")).toThrow(
      expect.objectContaining({ code: "RUN_NOT_FOUND" }),
    );
  });
});
