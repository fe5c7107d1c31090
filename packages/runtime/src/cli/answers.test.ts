/**
 * `runx resume` with an answer that breaks the request's declared output contract: refused
 * (exit 1, the request and the field named once), nothing consumed — the run stays paused with
 * the same requests, no receipt is written — and a valid answer then seals it. The same holds
 * for a run an MCP client started (MCP offers no answer tool: its pauses are answered with
 * `runx resume`, which the tool result says).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { addAnswersReview, REVIEW_REQUEST } from "../testing/answers-fixture.js";
import { cleanEnv, makeWorkspace, RUNX_BIN, runx } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
beforeEach(() => {
  ws = makeWorkspace("runx-answers-cli-");
  addAnswersReview(ws);
});
afterEach(() => ws.cleanup());

interface Envelope {
  status: string;
  run_id: string;
  receipt_id: string;
  outcome: string;
  result: unknown;
  requests: Array<{ id: string }>;
  closure: { disposition: string } | null;
}

const REFUSAL = 'answer for review: field "decision" is required (one of: approve, revise, reject)';

/** What a refused answer must leave alone: the pending run as history lists it, and receipts. */
async function pausedState(runId: string) {
  const history = await runx(ws, ["history", "--json"]);
  const pending = history
    .json<{ pendingRuns: Array<{ id: string; status: string; requests: Array<{ id: string }> }> }>()
    .pendingRuns.find((p) => p.id === runId);
  return { pending, receipts: ws.files(".runx/receipts") };
}

/** Refused twice (text and --json), then answered: the run seals completed. */
async function refuseThenSeal(runId: string): Promise<void> {
  const before = await pausedState(runId);
  expect(before.pending).toMatchObject({
    status: "needs_agent",
    requests: [{ id: REVIEW_REQUEST }],
  });
  ws.write("empty.json", JSON.stringify({ answers: { [REVIEW_REQUEST]: {} } }));

  const text = await runx(ws, ["resume", runId, "empty.json"]);
  expect(text.code).toBe(1);
  expect(text.stderr).toBe(`runx: ${REFUSAL}\n`);
  const json = await runx(ws, ["resume", runId, "empty.json", "--json"]);
  expect(json.code).toBe(1);
  expect(json.json()).toEqual({
    status: "failure",
    error: {
      code: "resume_error",
      reason: "ANSWERS_INVALID",
      message: REFUSAL,
      request_id: REVIEW_REQUEST,
      field: "decision",
      allowed: ["approve", "revise", "reject"],
    },
  });
  expect(await pausedState(runId)).toEqual(before);

  ws.write(
    "answers.json",
    JSON.stringify({ answers: { [REVIEW_REQUEST]: { decision: "revise", note: "tests" } } }),
  );
  const sealed = await runx(ws, ["resume", runId, "answers.json", "--json"]);
  expect(sealed.code).toBe(0);
  expect(sealed.json<Envelope>()).toMatchObject({
    status: "sealed",
    outcome: "completed",
    closure: { disposition: "closed" },
    result: { decision: "revise", note: "tests" },
  });
  expect((await runx(ws, ["verify", "--json"])).code).toBe(0);
}

describe("answers that break the declared output contract", () => {
  it("are refused by runx resume, the run stays paused, then a valid answer seals it", async () => {
    const paused = await runx(ws, [
      "skill",
      "skills/answers-review",
      "--subject",
      "the login page",
      "--json",
    ]);
    expect(paused.code).toBe(2);
    const env = paused.json<Envelope>();
    expect(env.status).toBe("needs_agent");
    await refuseThenSeal(env.run_id);
  }, 60_000);

  it("are refused for a top-level agent-task runner too, named after its task", async () => {
    ws.write("skills/triage/SKILL.md", "---\nname: triage\n---\nTriage the report.\n");
    ws.write(
      "skills/triage/X.yaml",
      [
        "runners:",
        "  default:",
        "    type: agent-task",
        "    agent: triager",
        "    task: triage",
        "    outputs:",
        "      severity: {type: integer, description: 1 (low) to 4 (critical).}",
        "",
      ].join("\n"),
    );
    const paused = await runx(ws, ["skill", "skills/triage", "--json"]);
    expect(paused.code).toBe(2);
    const { run_id } = paused.json<Envelope>();
    const request = "agent_task.triage.output";
    const before = await pausedState(run_id);
    const refused = await runx(ws, ["resume", run_id, "-"], {
      stdin: JSON.stringify({ answers: { [request]: { severity: "high" } } }),
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe('runx: answer for triage: field "severity" must be an integer\n');
    expect(await pausedState(run_id)).toEqual(before);
    const sealed = await runx(ws, ["resume", run_id, "-", "--json"], {
      stdin: JSON.stringify({ answers: { [request]: { severity: 3 } } }),
    });
    expect(sealed.json<Envelope>()).toMatchObject({ status: "sealed", result: { severity: 3 } });
  });

  it("are refused for a run an MCP client started, which stays paused for a valid answer", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [RUNX_BIN, "mcp", "serve", "skills/answers-review"],
      env: cleanEnv(ws),
      cwd: ws.root,
      stderr: "pipe",
    });
    const client = new Client({ name: "runx-test", version: "0.0.0" });
    await client.connect(transport);
    let runId: string;
    try {
      const called = await client.callTool({
        name: "answers-review",
        arguments: { subject: "the login page" },
      });
      const paused = (called.structuredContent as { runx: Envelope }).runx;
      expect(paused).toMatchObject({ status: "needs_agent", requests: [{ id: REVIEW_REQUEST }] });
      expect((called.content as Array<{ text: string }>)[0]!.text).toContain(
        `runx resume ${paused.run_id} answers.json`,
      );
      runId = paused.run_id;
    } finally {
      await client.close();
    }
    await refuseThenSeal(runId);
  }, 60_000);
});
