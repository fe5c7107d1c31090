/**
 * Answers from the console (runs.answer → checkAnswers, then the job the worker runs): an
 * answer that breaks its request's contract is refused before anything is taken, sealed or
 * written — same status, same requests, no receipt, no ledger entry — and a valid one seals.
 */
import { readdirSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import { openStateStore } from "../store/open.js";
import { addAnswersReview, REVIEW_REQUEST } from "../testing/answers-fixture.js";
import { makeWorkspace } from "../testing/cli.js";
import type { Workspace } from "../testing/cli.js";

let ws: Workspace;
let runtime: Runtime;
beforeEach(() => {
  ws = makeWorkspace("runx-answers-");
  ws.addBundledSkill("echo");
  addAnswersReview(ws);
  runtime = createRuntime({
    workspaceRoot: ws.root,
    runxHome: ws.home,
    env: { PATH: process.env.PATH, HOME: ws.home },
  });
});
afterEach(() => {
  runtime.close();
  ws.cleanup();
});

/** Everything a refused answer must leave alone: the run row, its ledger, the receipt store. */
function snapshot(runId: string) {
  const state = openStateStore({ path: runtime.paths.stateDb });
  try {
    const run = state.getRun(runId);
    return {
      run: {
        status: run.status,
        disposition: run.disposition,
        receiptId: run.receiptId,
        requestsJson: run.requestsJson,
        updatedAt: run.updatedAt,
      },
      ledger: state.readLedger(runId).map((e) => `${e.idx}:${e.kind}:${e.entryHash}`),
      steps: state.listSteps(runId).map((s) => `${s.stepId}:${s.status}`),
      receipts: readdirSync(runtime.paths.receiptDir).sort(),
    };
  } finally {
    state.close();
  }
}

async function pausedReview(): Promise<string> {
  const runId = runtime.console.newRunId();
  const env = await runtime.console.runJob({
    kind: "start",
    runId,
    ref: "skills/answers-review",
    inputs: { subject: "the login page" },
  });
  expect(env).toMatchObject({ status: "needs_agent", requests: [{ id: REVIEW_REQUEST }] });
  return runId;
}

describe("agent answers from the console", () => {
  it("refuses {} for a graph agent step before the job runs, then seals a valid answer", async () => {
    const runId = await pausedReview();
    const before = snapshot(runId);
    const refusal = {
      code: "ANSWERS_INVALID",
      message: 'answer for review: field "decision" is required (one of: approve, revise, reject)',
      details: {
        request_id: REVIEW_REQUEST,
        field: "decision",
        allowed: ["approve", "revise", "reject"],
      },
    };
    // The router's check, before a job is queued.
    expect(() =>
      runtime.console.runs.checkAnswers({ runId, answers: { [REVIEW_REQUEST]: {} } }),
    ).toThrow(expect.objectContaining(refusal));
    expect(snapshot(runId)).toEqual(before);
    // The job itself refuses too (a job queued before another answer changed nothing).
    await expect(
      runtime.console.runJob({ kind: "answer", runId, answers: { [REVIEW_REQUEST]: {} } }),
    ).rejects.toMatchObject(refusal);
    await expect(
      runtime.console.runJob({
        kind: "answer",
        runId,
        answers: { [REVIEW_REQUEST]: { decision: "maybe" } },
      }),
    ).rejects.toMatchObject({
      code: "ANSWERS_INVALID",
      message: 'answer for review: field "decision" must be one of: approve, revise, reject',
    });
    expect(snapshot(runId)).toEqual(before);
    expect(runtime.console.runs.detail(runId).run.status).toBe("needs_agent");

    const answer = { decision: "approve", note: "ship it" };
    runtime.console.runs.checkAnswers({ runId, answers: { [REVIEW_REQUEST]: answer } });
    const sealed = await runtime.console.runJob({
      kind: "answer",
      runId,
      answers: { [REVIEW_REQUEST]: answer },
    });
    expect(sealed).toMatchObject({
      status: "sealed",
      outcome: "completed",
      closure: { disposition: "closed" },
      result: answer,
    });
  });

  it("shows each pending request's answer contract, derived from the step's declared outputs", async () => {
    const runId = await pausedReview();
    const [pending] = runtime.console.runs.detail(runId).pendingRequests;
    expect(pending).toMatchObject({ id: REVIEW_REQUEST, kind: "agent_act" });
    expect(pending?.contract).toEqual({
      kind: "agent",
      label: "review",
      prompt: expect.stringContaining(
        "Decide whether the change ships; add a note for the record.",
      ) as string,
      schema: {
        type: "object",
        properties: {
          decision: {
            type: "string",
            enum: ["approve", "revise", "reject"],
            description: "Whether the change ships.",
          },
          note: { type: "string", description: "One line for the record." },
        },
        required: ["decision"],
        additionalProperties: true,
      },
    });
  });

  it("refuses an input answer that misses its question, leaving the run paused", async () => {
    const runId = runtime.console.newRunId();
    const env = await runtime.console.runJob({
      kind: "start",
      runId,
      ref: "skills/echo",
      inputs: {},
    });
    const requestId = env.requests[0]!.id;
    const before = snapshot(runId);
    await expect(
      runtime.console.runJob({ kind: "answer", runId, answers: { [requestId]: {} } }),
    ).rejects.toMatchObject({
      code: "ANSWERS_INVALID",
      message: `answer for ${requestId}: field "message" is required`,
    });
    expect(() =>
      runtime.console.runs.checkAnswers({ runId, answers: { [requestId]: { message: 7 } } }),
    ).toThrow(expect.objectContaining({ details: { request_id: requestId, field: "message" } }));
    expect(snapshot(runId)).toEqual(before);
    const sealed = await runtime.console.runJob({
      kind: "answer",
      runId,
      answers: { [requestId]: { message: "later" } },
    });
    expect(sealed).toMatchObject({ status: "sealed", result: { message: "later" } });
  });

  it("refuses answers for a run that is not paused or a request that is not pending", async () => {
    const runId = await pausedReview();
    expect(() =>
      runtime.console.runs.checkAnswers({ runId, answers: { "agent_task.other.output": {} } }),
    ).toThrow(expect.objectContaining({ code: "ANSWERS_INVALID" }));
    await runtime.console.runJob({
      kind: "answer",
      runId,
      answers: { [REVIEW_REQUEST]: { decision: "reject" } },
    });
    expect(() =>
      runtime.console.runs.checkAnswers({
        runId,
        answers: { [REVIEW_REQUEST]: { decision: "approve" } },
      }),
    ).toThrow(expect.objectContaining({ code: "RESUME_REFUSED" }));
  });
});
