/**
 * An agent that closes its own act: an answer carrying `closure: {disposition, ...}` seals the
 * run with that disposition (reason `agent_act_<disposition>`) instead of a completed action,
 * whether the answer comes from `runx resume`, a managed agent's reply, an agent step inside a
 * graph, or a harness case's `caller.answers`. A malformed closure is refused like any other
 * broken answer: the run stays paused.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addAnswersReview, REVIEW_REQUEST } from "../testing/answers-fixture.js";
import { makeWorkspace, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

interface Envelope {
  status: string;
  outcome: string;
  run_id: string;
  receipt_id: string;
  result: unknown;
  closure: { disposition: string; reason_code?: string; summary?: string } | null;
}

const REQUEST = "agent_task.merge.output";
const REFUSAL = {
  merged: false,
  closure: {
    disposition: "blocked",
    reason_code: "approval_required",
    summary: "merging would bypass the required review approval",
  },
};

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-agent-closure-");
  ws.write("skills/merge/SKILL.md", "---\nname: merge\n---\nMerge the pull request.\n");
  ws.write(
    "skills/merge/X.yaml",
    [
      "runners:",
      "  default:",
      "    type: agent-task",
      "    agent: merger",
      "    task: merge",
      "    outputs:",
      "      merged: boolean",
      "",
    ].join("\n"),
  );
});
afterEach(() => ws.cleanup());

async function pausedMerge(): Promise<string> {
  const paused = await runx(ws, ["skill", "skills/merge", "--json"]);
  expect(paused.code).toBe(2);
  return paused.json<Envelope>().run_id;
}

function receiptSeal(receiptId: string): Record<string, unknown> {
  const receipt = JSON.parse(ws.read(`.runx/receipts/sha256-${receiptId.slice(7)}.json`)) as {
    seal: Record<string, unknown>;
  };
  return receipt.seal;
}

describe("an agent-task answered by runx resume", () => {
  it("seals blocked (never completed) when the agent refuses, and keeps what it said", async () => {
    const runId = await pausedMerge();
    const sealed = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [REQUEST]: REFUSAL } }),
    });
    expect(sealed.code).toBe(1);
    const env = sealed.json<Envelope>();
    expect(env).toMatchObject({
      status: "sealed",
      outcome: "blocked",
      closure: {
        disposition: "blocked",
        reason_code: "agent_act_blocked",
        summary: "agent act closed with blocked",
      },
      result: REFUSAL,
    });
    expect(receiptSeal(env.receipt_id)).toMatchObject({
      disposition: "blocked",
      reason_code: "agent_act_blocked",
    });
    const text = await runx(ws, ["history"]);
    expect(text.stdout).not.toMatch(/merge[^\n]*completed/);
  });

  it("seals closed as agent_act_closed when the agent says so, without closure in the result", async () => {
    const runId = await pausedMerge();
    const sealed = await runx(ws, ["resume", runId, "-", "--json"], {
      stdin: JSON.stringify({
        answers: { [REQUEST]: { merged: true, closure: { disposition: "closed" } } },
      }),
    });
    expect(sealed.code).toBe(0);
    expect(sealed.json<Envelope>()).toMatchObject({
      outcome: "completed",
      closure: { disposition: "closed", reason_code: "agent_act_closed" },
      result: { merged: true },
    });
  });

  it("refuses a malformed closure naming the field, and the run stays paused", async () => {
    const runId = await pausedMerge();
    for (const [closure, message] of [
      ["nope", 'field "closure" must be an object'],
      [{}, 'field "closure.disposition" is required'],
      [{ disposition: 3 }, 'field "closure.disposition" must be a string'],
      [{ disposition: "finished" }, 'field "closure.disposition" "finished" is not supported'],
    ] as const) {
      const refused = await runx(ws, ["resume", runId, "-"], {
        stdin: JSON.stringify({ answers: { [REQUEST]: { merged: true, closure } } }),
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`runx: answer for merge: ${message}`);
    }
    const history = await runx(ws, ["history", "--json"]);
    expect(
      history
        .json<{ pendingRuns: Array<{ id: string; status: string }> }>()
        .pendingRuns.find((p) => p.id === runId),
    ).toMatchObject({ status: "needs_agent" });
  });
});

describe("an agent step inside a graph", () => {
  it("fails the step blocked and seals the graph blocked when the agent refuses", async () => {
    addAnswersReview(ws);
    const paused = await runx(ws, [
      "skill",
      "skills/answers-review",
      "--subject",
      "release",
      "--json",
    ]);
    expect(paused.code).toBe(2);
    const answer = {
      decision: "approve",
      closure: { disposition: "blocked", summary: "no reviewer sign-off" },
    };
    const sealed = await runx(ws, ["resume", paused.json<Envelope>().run_id, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [REVIEW_REQUEST]: answer } }),
    });
    expect(sealed.code).toBe(1);
    expect(sealed.json<Envelope>()).toMatchObject({
      status: "sealed",
      outcome: "blocked",
      closure: { disposition: "blocked" },
      result: null,
      trace: {
        graph: "answers-review",
        status: "blocked",
        steps: [{ step_id: "review", skill: "run:agent-task", status: "failure" }],
      },
    });
  });
});

describe("a harness case answered from caller.answers", () => {
  it("ends policy_denied with a blocked agent_act_blocked receipt", async () => {
    ws.write(
      "skills/merge/fixtures/refuses.yaml",
      [
        "name: refuses",
        "kind: agent_task",
        "runner: default",
        "target: ..",
        "caller:",
        "  answers:",
        `    ${REQUEST}:`,
        "      merged: false",
        "      closure: {disposition: blocked, reason_code: approval_required}",
        "expect:",
        "  status: policy_denied",
        "  receipt:",
        "    disposition: blocked",
        "    reason_code: agent_act_blocked",
        "",
      ].join("\n"),
    );
    const passed = await runx(ws, ["harness", "skills/merge", "--json"]);
    expect(passed.json()).toMatchObject({ status: "passed", case_names: ["refuses"] });
    expect(passed.code).toBe(0);
    ws.write(
      "skills/merge/fixtures/refuses.yaml",
      ws
        .read("skills/merge/fixtures/refuses.yaml")
        .replace("status: policy_denied", "status: sealed")
        .replace(/ {2}receipt:\n.*\n.*\n/, ""),
    );
    const failed = await runx(ws, ["harness", "skills/merge", "--json"]);
    expect(failed.code).toBe(1);
    expect(failed.json<{ assertion_errors: string[] }>().assertion_errors).toEqual([
      expect.stringContaining('expect.status: expected "sealed", got "policy_denied"'),
    ]);
  });
});

describe("a managed agent's reply", () => {
  let server: Server;
  let replies: string[];

  function body(req: IncomingMessage): Promise<string> {
    return new Promise((resolve) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => resolve(text));
    });
  }

  beforeEach(async () => {
    replies = [];
    server = createServer((req, res) => {
      void body(req).then(() => {
        const content = replies.shift();
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify(
            content === undefined
              ? { error: "no more replies" }
              : {
                  choices: [{ message: { role: "assistant", content }, finish_reason: "stop" }],
                  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
                },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    for (const [key, value] of [
      ["agent.provider", "local"],
      ["agent.model", "test-model"],
      ["agent.base_url", `http://127.0.0.1:${port}/v1`],
    ] as const) {
      expect((await runx(ws, ["config", "set", key, value])).code).toBe(0);
    }
    expect(
      (await runx(ws, ["config", "set", "agent.api_key", "--from-stdin"], { stdin: "sk-test\n" }))
        .code,
    ).toBe(0);
  });
  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("seals the run blocked when the model refuses, and fails a malformed closure", async () => {
    replies.push(JSON.stringify(REFUSAL));
    const refused = await runx(ws, ["skill", "skills/merge", "--json"]);
    expect(refused.code).toBe(1);
    expect(refused.json<Envelope>()).toMatchObject({
      status: "sealed",
      outcome: "blocked",
      closure: { disposition: "blocked", reason_code: "agent_act_blocked" },
      result: REFUSAL,
    });

    replies.push(JSON.stringify({ merged: true, closure: { disposition: "done" } }));
    const malformed = await runx(ws, ["skill", "skills/merge", "--json"]);
    expect(malformed.code).toBe(1);
    expect(malformed.json<Envelope>()).toMatchObject({
      status: "sealed",
      closure: { disposition: "failed" },
    });
    expect(malformed.json<Envelope>().closure?.summary).toContain("closure.disposition");
  });
});
