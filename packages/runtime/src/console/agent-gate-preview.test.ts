/**
 * A gate a managed agent's tool call pauses on: the approval inbox previews the payload the
 * model proposed (kept with the pause, checked against the gate's digests), so an approver can
 * read it and approve it; approving runs the act again and releases that same effect.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import { makeWorkspace } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import { configureManagedAgent, startModelServer } from "../testing/model-server.js";
import type { ModelReply, ModelServer } from "../testing/model-server.js";

const PASSWORD = "correct horse battery";

let ws: Workspace;
let model: ModelServer;
let runtime: Runtime | undefined;
let replies: ModelReply[];

/** The model's turn: one provider.mutate call paying `recipient`. */
const payCall = (recipient: string) => () => ({
  choices: [
    {
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_pay",
            type: "function",
            function: {
              name: "provider__mutate",
              arguments: JSON.stringify({
                expected_provider: "fixture",
                operation: "payout.create",
                target: "payouts",
                idempotency_key: "agent-pay-1",
                amount: { units: 4200, unit: "usd_cents" },
                input: { recipient, note: "agent proposed" },
                approval: { reason: "Pay the recipient.", type: "payment" },
              }),
            },
          },
        ],
      },
      finish_reason: "tool_calls",
    },
  ],
});
const final = () => ({
  choices: [{ message: { role: "assistant", content: '{"paid":"yes"}' }, finish_reason: "stop" }],
});

beforeEach(async () => {
  ws = makeWorkspace("runx-agent-gate-");
  model = await startModelServer();
  replies = model.replies;
  await configureManagedAgent(ws, model, "sk-test-agent-gate-key");
  ws.write("skills/agent-pay/SKILL.md", "---\nname: agent-pay\n---\nPay the recipient.\n");
  ws.write(
    "skills/agent-pay/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: agent-task",
      "    agent: payer",
      "    task: pay",
      "    allowed_tools: [provider.mutate]",
      "    outputs:",
      "      paid: string",
      "",
    ].join("\n"),
  );
});

afterEach(async () => {
  runtime?.close();
  runtime = undefined;
  await model.close();
  ws.cleanup();
});

describe("a managed agent's gated tool call", () => {
  it("is previewed from the proposed payload, approved, and releases that payload", async () => {
    const rt = createRuntime({
      workspaceRoot: ws.root,
      // Where `runx config set` above wrote the agent configuration.
      runxHome: join(ws.home, ".runx"),
      env: { PATH: process.env.PATH, HOME: ws.home },
    });
    runtime = rt;
    const sam = await rt.console.operators.add({
      username: "sam",
      role: "approver",
      password: PASSWORD,
    });
    const grace = await rt.console.operators.add({
      username: "grace",
      role: "approver",
      password: PASSWORD,
    });
    replies.push(payCall("acct_ada"));
    const runId = rt.console.newRunId();
    rt.console.recordInitiator(runId, sam);
    const env = await rt.runSkill({ ref: "skills/agent-pay", inputs: {}, secretEnv: [], runId });
    expect(env.status).toBe("needs_approval");
    const gateId = env.requests[0]!.id;
    expect(gateId).toMatch(/^provider-effect:sha256:[0-9a-f]{64}$/);

    const pending = (await rt.console.approvals.pending()).find((p) => p.runId === runId)!;
    expect(pending.previewUnavailable).toBeNull();
    expect(pending.preview).toMatchObject({
      kind: "provider_effect",
      headline: "payout.create of $42.00 to payouts",
      amount: { units: 4200, unit: "usd_cents", text: "$42.00" },
    });
    expect(pending.preview!.fields).toEqual([
      { path: "recipient", label: "Recipient", value: "acct_ada" },
      { path: "note", label: "Note", value: "agent proposed" },
    ]);

    // Approving runs the act again; the model proposes the same call, then answers.
    replies.push(payCall("acct_ada"), final);
    await rt.console.approvals.decide(
      { runId, gateId, decision: "approve", reason: "read it" },
      grace,
    );
    const sealed = await rt.console.approvals.release({ runId, gateId });
    expect(sealed).toMatchObject({ status: "sealed", result: { paid: "yes" } });
    const world = JSON.parse(
      readFileSync(join(ws.root, ".runx", "providers", "fixture.json"), "utf8"),
    ) as { effects: Record<string, { result: { payload: Record<string, unknown> } }> };
    const sent = Object.values(world.effects).map((e) => e.result.payload);
    expect(sent).toEqual([{ recipient: "acct_ada", note: "agent proposed" }]);
  });
  it("is previewed the same way when the agent step runs inside a graph", async () => {
    ws.write("skills/pay-flow/SKILL.md", "---\nname: pay-flow\n---\nPay through a graph.\n");
    ws.write(
      "skills/pay-flow/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: graph",
        "    graph:",
        "      name: pay-flow",
        "      result_from: [pay]",
        "      steps:",
        "        - id: pay",
        "          skill: ../agent-pay",
        "",
      ].join("\n"),
    );
    const rt = createRuntime({
      workspaceRoot: ws.root,
      runxHome: join(ws.home, ".runx"),
      env: { PATH: process.env.PATH, HOME: ws.home },
    });
    runtime = rt;
    replies.push(payCall("acct_bo"));
    const env = await rt.runSkill({ ref: "skills/pay-flow", inputs: {}, secretEnv: [] });
    expect(env.status).toBe("needs_approval");
    const gateId = env.requests[0]!.id;
    expect(gateId).toMatch(/^provider-effect:sha256:[0-9a-f]{64}$/);
    const pending = (await rt.console.approvals.pending()).find((p) => p.runId === env.run_id)!;
    expect(pending.previewUnavailable).toBeNull();
    expect(pending.preview).toMatchObject({
      kind: "provider_effect",
      headline: "payout.create of $42.00 to payouts",
    });
    expect(pending.preview!.fields).toEqual([
      { path: "recipient", label: "Recipient", value: "acct_bo" },
      { path: "note", label: "Note", value: "agent proposed" },
    ]);
  });
});
