/**
 * A managed agent inside a graph: with `agent.*` configured, an agent step is resolved by the
 * model (tools offered as `fs__read`-style functions, run under the step's scopes) instead of
 * pausing `needs_agent`; a gated tool call pauses the graph `needs_approval`, and approving it
 * runs the act again and releases that effect. A graph agent step's `context_skills` reach the
 * request's `current_context`, as on a top-level runner.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";
import {
  answerReply as answer,
  configureManagedAgent,
  startModelServer,
  toolCallReply as toolCall,
} from "../testing/model-server.js";
import type { ChatRequest, ModelReply, ModelServer } from "../testing/model-server.js";

interface Envelope {
  status: string;
  outcome: string;
  run_id: string;
  result: unknown;
  requests: Array<{ id: string; kind: string; invocation?: { envelope?: unknown } }>;
  closure: { disposition: string } | null;
}

let ws: Workspace;
let model: ModelServer;
let seen: ChatRequest[];
let replies: ModelReply[];

function graphSkill(agentRun: string[]): void {
  ws.write("skills/flow/SKILL.md", "---\nname: flow\n---\nWork through the flow.\n");
  ws.write(
    "skills/flow/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: graph",
      "    graph:",
      "      name: flow",
      "      result_from: [work]",
      "      steps:",
      "        - id: work",
      "          run:",
      "            type: agent-task",
      "            agent: worker",
      "            task: work",
      ...agentRun.map((line) => `            ${line}`),
      "",
    ].join("\n"),
  );
}

beforeEach(async () => {
  ws = makeWorkspace("runx-graph-agent-");
  model = await startModelServer();
  seen = model.seen;
  replies = model.replies;
  await configureManagedAgent(ws, model, "sk-test");
});

afterEach(async () => {
  await model.close();
  ws.cleanup();
});

describe("a graph agent step with a managed agent configured", () => {
  it("is resolved by the model with its allowed tool, and seals the graph", async () => {
    ws.write("notes.md", "The rollout finished without incidents.\n");
    graphSkill(["scopes: [fs.read]", "allowed_tools: [fs.read]", "outputs:", "  verdict: string"]);
    replies.push(toolCall("fs__read", { path: "notes.md" }), answer({ verdict: "healthy" }));
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).toBe(0);
    expect(r.json<Envelope>()).toMatchObject({
      status: "sealed",
      closure: { disposition: "closed" },
      result: { verdict: "healthy" },
    });
    expect(seen).toHaveLength(2);
    expect(seen[0]?.tools?.map((t) => t.function.name)).toEqual(["fs__read"]);
    expect(seen[1]?.messages.find((m) => m.role === "tool")?.content).toContain(
      "The rollout finished without incidents.",
    );
  });

  it("pauses the graph needs_approval on a gated tool call, and approving releases it", async () => {
    graphSkill(["allowed_tools: [provider.mutate]", "outputs:", "  paid: string"]);
    const pay = toolCall("provider__mutate", {
      expected_provider: "fixture",
      operation: "payout.create",
      target: "payouts",
      idempotency_key: "graph-agent-pay-1",
      amount: { units: 4200, unit: "usd_cents" },
      input: { recipient: "acct_ada" },
      approval: { reason: "Pay the recipient.", type: "payment" },
    });
    replies.push(pay);
    const paused = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(paused.code).toBe(2);
    const env = paused.json<Envelope>();
    expect(env.status).toBe("needs_approval");
    const gate = env.requests[0];
    expect(gate?.kind).toBe("approval");

    replies.push(pay, answer({ paid: "yes" }));
    const sealed = await runx(ws, ["resume", env.run_id, "-", "--json"], {
      stdin: JSON.stringify({ approvals: { [gate!.id]: true } }),
    });
    expect(sealed.code).toBe(0);
    expect(sealed.json<Envelope>()).toMatchObject({ status: "sealed", result: { paid: "yes" } });
    const world = JSON.parse(
      readFileSync(join(ws.root, ".runx", "providers", "fixture.json"), "utf8"),
    ) as { effects: Record<string, { result: { payload: unknown } }> };
    expect(Object.values(world.effects).map((e) => e.result.payload)).toEqual([
      { recipient: "acct_ada" },
    ]);
  });

  it("seals the graph blocked when the model refuses", async () => {
    graphSkill(["outputs:", "  merged: boolean"]);
    replies.push(answer({ merged: false, closure: { disposition: "blocked" } }));
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).toBe(1);
    expect(r.json<Envelope>()).toMatchObject({
      status: "sealed",
      outcome: "blocked",
      closure: { disposition: "blocked" },
    });
  });
});

describe("context_skills on a graph's agent step", () => {
  it("reach the request's current_context", async () => {
    await runx(ws, ["config", "unset", "agent.provider"]);
    ws.write("skills/style/SKILL.md", "---\nname: style\n---\nWrite short sentences.\n");
    graphSkill(["context_skills: [../style]", "outputs:", "  verdict: string"]);
    const r = await runx(ws, ["skill", "skills/flow", "--json"]);
    expect(r.code).toBe(2);
    const envelope = r.json<Envelope>().requests[0]?.invocation?.envelope as {
      current_context: Array<{ label: string; content: string }>;
    };
    expect(envelope.current_context).toMatchObject([
      { label: "style", content: expect.stringContaining("Write short sentences.") },
    ]);
  });
});
