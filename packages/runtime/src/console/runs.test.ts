/**
 * The run list as the console reads it: each run's outcome, initiator and duration, the
 * outcome filter over real runs, and "waiting for me" held against what approvals.decide
 * accepts.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { consoleFixture } from "../testing/console-fixture.js";
import type { ConsoleFixture } from "../testing/console-fixture.js";
import type { Operator } from "./operators.js";

let fx: ConsoleFixture;
beforeEach(() => {
  fx = consoleFixture();
  fx.ws.write("skills/fails/SKILL.md", "---\nname: fails\n---\nExits non-zero.\n");
  fx.ws.write(
    "skills/fails/X.yaml",
    "runners:\n  default:\n    type: cli-tool\n    command: 'false'\n    timeout_seconds: 10\n",
  );
  fx.ws.write("skills/asks-agent/SKILL.md", "---\nname: asks-agent\n---\nAsks an agent.\n");
  fx.ws.write(
    "skills/asks-agent/X.yaml",
    [
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
    ].join("\n"),
  );
});
afterEach(() => fx.cleanup());

const PASSWORD = "correct horse battery";

/** Runs `ref`; started in the console by `initiator` when given (else as the CLI would). */
async function run(ref: string, initiator?: Operator, inputs: Record<string, string> = {}) {
  const runId = fx.runtime.console.newRunId();
  if (initiator !== undefined) fx.runtime.console.recordInitiator(runId, initiator);
  const env = await fx.runtime.runSkill({
    ref,
    inputs: Object.fromEntries(Object.entries(inputs).map(([k, value]) => [k, { value }])),
    secretEnv: [],
    runId,
  });
  return { runId, env, gateId: env.requests[0]?.id };
}

const gated = (initiator?: Operator) => run("skills/gated-echo", initiator, { message: "hi" });

function waitingFor(operator: Operator): string[] {
  return fx.runtime.console.runs
    .list({ waitingForMe: true }, operator)
    .items.map((r) => r.id)
    .sort();
}

describe("the run list", () => {
  it("shows each run's real outcome, who started it in the console, and how long it took", async () => {
    const ops = fx.runtime.console.operators;
    const alice = await ops.add({ username: "alice", role: "approver", password: PASSWORD });
    const bob = await ops.add({ username: "bob", role: "approver", password: PASSWORD });
    const done = await run("skills/echo", undefined, { message: "hi" });
    const failed = await run("skills/fails");
    const waiting = await gated(alice);
    const denied = await gated(alice);
    await fx.runtime.console.approvals.decide(
      { runId: denied.runId, gateId: denied.gateId!, decision: "deny", reason: "not now" },
      bob,
    );
    const released = await fx.runtime.console.approvals.release({
      runId: denied.runId,
      gateId: denied.gateId!,
    });
    expect(released.status).toBe("sealed");
    const agent = await run("skills/asks-agent");
    expect(agent.env.status).toBe("needs_agent");

    const page = fx.runtime.console.runs.list({}, alice);
    expect(page.total).toBe(5);
    const row = (runId: string) => page.items.find((r) => r.id === runId)!;
    expect(row(done.runId)).toMatchObject({ outcome: "completed", initiator: null });
    expect(row(failed.runId)).toMatchObject({ outcome: "failed", status: "sealed" });
    expect(row(waiting.runId)).toMatchObject({
      outcome: "paused_for_approval",
      initiator: "alice",
      durationMs: null,
    });
    expect(row(denied.runId)).toMatchObject({
      outcome: "declined",
      status: "sealed",
      initiator: "alice",
    });
    expect(row(agent.runId)).toMatchObject({ outcome: "paused_for_agent", durationMs: null });
    for (const finished of [done, failed, denied]) {
      expect(row(finished.runId).durationMs).toEqual(expect.any(Number));
      expect(row(finished.runId).durationMs).toBeGreaterThanOrEqual(0);
    }

    const only = (outcome: "declined" | "failed" | "completed") =>
      fx.runtime.console.runs.list({ outcome }, alice);
    expect(only("declined").items.map((r) => r.id)).toEqual([denied.runId]);
    expect(only("failed").items.map((r) => r.id)).toEqual([failed.runId]);
    expect(only("completed")).toMatchObject({ total: 1, items: [{ id: done.runId }] });
    expect(
      fx.runtime.console.runs
        .list({ skillSearch: "GATED" }, alice)
        .items.map((r) => r.id)
        .sort(),
    ).toEqual([waiting.runId, denied.runId].sort());
  });

  it("is waiting for an operator exactly where approvals.decide would take their vote, and at every agent pause", async () => {
    const ops = fx.runtime.console.operators;
    const alice = await ops.add({ username: "alice", role: "approver", password: PASSWORD });
    const bob = await ops.add({ username: "bob", role: "approver", password: PASSWORD });
    const carol = await ops.add({ username: "carol", role: "admin", password: PASSWORD });
    const vic = await ops.add({ username: "vic", role: "viewer", password: PASSWORD });
    const started = await gated(alice);
    const cli = await gated();
    const agent = await run("skills/asks-agent");
    await run("skills/echo", undefined, { message: "done" });
    const ids = (...runs: Array<{ runId: string }>) => runs.map((r) => r.runId).sort();

    // Default policy: one approval, never the initiator's; a CLI run has none recorded.
    expect(waitingFor(alice)).toEqual(ids(cli, agent));
    expect(waitingFor(bob)).toEqual(ids(started, cli, agent));
    expect(fx.runtime.console.runs.list({ waitingForMe: true }, vic)).toEqual({
      items: [],
      nextCursor: null,
      prevCursor: null,
      total: 0,
      totalCapped: false,
    });

    // An explicit policy that excludes the initiator accepts no vote on a run without one.
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: "*",
      requiredApprovals: 2,
      forbidInitiator: true,
    });
    expect(waitingFor(bob)).toEqual(ids(started, agent));
    await fx.runtime.console.approvals.decide(
      { runId: started.runId, gateId: started.gateId!, decision: "approve", reason: "one" },
      bob,
    );
    // Bob has voted on this pause; carol has not.
    expect(waitingFor(bob)).toEqual(ids(agent));
    expect(waitingFor(carol)).toEqual(ids(started, agent));
    expect(fx.runtime.console.runs.list({ waitingForMe: true }, carol).total).toBe(2);

    // A more specific policy that lets the initiator decide wins for that gate.
    fx.runtime.console.approvals.setPolicy({
      skill: "gated-echo",
      gateId: started.gateId!,
      requiredApprovals: 10,
      forbidInitiator: false,
    });
    const expected = new Map([
      [alice.username, waitingFor(alice)],
      [carol.username, waitingFor(carol)],
      [bob.username, waitingFor(bob)],
    ]);
    expect(expected.get("alice")).toEqual(ids(started, cli, agent));

    // Held against the decide rules: every listed gate takes the operator's vote, and every
    // other pending gate refuses it.
    for (const operator of [alice, carol, bob]) {
      for (const gate of [started, cli]) {
        const listed = expected.get(operator.username)!.includes(gate.runId);
        const vote = fx.runtime.console.approvals.decide(
          { runId: gate.runId, gateId: gate.gateId!, decision: "approve", reason: "check" },
          operator,
        );
        if (listed) await expect(vote).resolves.toMatchObject({ releasable: false });
        else await expect(vote).rejects.toMatchObject({ code: "POLICY_DENIED" });
      }
    }
    expect(waitingFor(alice)).toEqual(ids(agent));
  });
});
