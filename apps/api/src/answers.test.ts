/**
 * runs.answer admits answers through the runtime before a job is queued: an answer that breaks
 * its request's contract is a 400 naming the field, the executor never sees it, and the run
 * stays paused; runs.get shows every pending request's answer contract.
 */
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import type { Operator } from "@runx/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  addAnswersReview,
  REVIEW_REQUEST,
} from "../../../packages/runtime/src/testing/answers-fixture.js";
import { ApiEvents } from "./events.js";
import { inlineExecutor } from "./inline-executor.js";
import { appRouter } from "./router.js";
import { sessionKeys } from "./session.js";
import { apiFixture, PASSWORD, requestContext } from "./test-support.js";
import type { ApiFixture } from "./test-support.js";
import { createCallerFactory } from "./trpc.js";
import type { RunExecutor } from "./trpc.js";

let fx: ApiFixture;
let events: ApiEvents;
/** Answer jobs that reached the executor. */
let answered: string[];
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  addAnswersReview(fx.ws);
  events = new ApiEvents();
  answered = [];
});
afterEach(() => fx.cleanup());

function caller(operator: Operator | null) {
  const inline = inlineExecutor(fx.runtime, events);
  const executor: RunExecutor = {
    ...inline,
    answer: (job) => {
      answered.push(job.runId);
      return inline.answer(job);
    },
  };
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor,
    events,
    operator,
    ...requestContext(),
    setSession: () => undefined,
  });
}

async function as(role: Operator["role"], username: string = role) {
  return fx.runtime.console.operators.add({ username, role, password: PASSWORD });
}

async function failure(promise: Promise<unknown>): Promise<TRPCError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(TRPCError);
    return error as TRPCError;
  }
  throw new Error("expected a failure");
}

async function pausedReview(starter: Operator): Promise<string> {
  const started = await caller(starter).runs.start({
    skill: "skills/answers-review",
    inputs: { subject: "the login page" },
  });
  expect(started).toMatchObject({ state: "settled", envelope: { status: "needs_agent" } });
  return started.runId;
}

const EMPTY = { [REVIEW_REQUEST]: {} };
const VALID = { [REVIEW_REQUEST]: { decision: "approve", note: "fine" } };

describe("runs.answer", () => {
  it("refuses a signed-out caller (401) and a viewer (403) before looking at the answer", async () => {
    const runId = await pausedReview(await as("approver", "starter"));
    const viewer = await as("viewer");
    for (const answers of [EMPTY, VALID]) {
      expect((await failure(caller(null).runs.answer({ runId, answers }))).code).toBe(
        "UNAUTHORIZED",
      );
      expect((await failure(caller(viewer).runs.answer({ runId, answers }))).code).toBe(
        "FORBIDDEN",
      );
    }
    expect(answered).toEqual([]);
    expect((await caller(viewer).runs.get({ runId })).run.status).toBe("needs_agent");
  });

  it.each(["approver", "admin"] as const)(
    "refuses an invalid answer from an %s with 400 naming the field, never queues it, then seals a valid one",
    async (role) => {
      const op = await as(role, `${role}-caller`);
      const runId = await pausedReview(op);
      const before = await caller(op).runs.get({ runId });

      const refused = await failure(caller(op).runs.answer({ runId, answers: EMPTY }));
      expect(refused.code).toBe("BAD_REQUEST");
      expect(refused.message).toBe(
        'answer for review: field "decision" is required (one of: approve, revise, reject)',
      );
      expect(refused.cause).toMatchObject({
        code: "ANSWERS_INVALID",
        details: { request_id: REVIEW_REQUEST, field: "decision" },
      });
      const wrong = await failure(
        caller(op).runs.answer({ runId, answers: { [REVIEW_REQUEST]: { decision: "ok" } } }),
      );
      expect(wrong.message).toBe(
        'answer for review: field "decision" must be one of: approve, revise, reject',
      );
      expect(answered).toEqual([]);
      expect(await caller(op).runs.get({ runId })).toEqual(before);

      const sealed = await caller(op).runs.answer({ runId, answers: VALID });
      expect(sealed).toMatchObject({
        state: "settled",
        envelope: { status: "sealed", outcome: "completed", result: VALID[REVIEW_REQUEST] },
      });
      expect(answered).toEqual([runId]);
    },
  );

  it("shows every role the answer contract of each pending request", async () => {
    const runId = await pausedReview(await as("approver", "starter"));
    const viewer = await as("viewer");
    const detail = await caller(viewer).runs.get({ runId });
    expect(detail.pendingRequests).toEqual([
      expect.objectContaining({
        id: REVIEW_REQUEST,
        contract: expect.objectContaining({
          kind: "agent",
          label: "review",
          schema: expect.objectContaining({
            required: ["decision"],
            properties: expect.objectContaining({
              decision: expect.objectContaining({ enum: ["approve", "revise", "reject"] }),
            }) as unknown,
          }) as unknown,
        }) as unknown,
      }),
    ]);
  });
});
