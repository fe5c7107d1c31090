/**
 * runs.timeline: every role that may read runs sees the same steps and event history; the
 * history names who started the run, who decided its gate and why, and who resumed it (the
 * approver through approvals.decide, the answering operator and their note through
 * runs.answer). Unauthenticated callers are refused.
 */
import { randomBytes } from "node:crypto";
import { TRPCError } from "@trpc/server";
import type { Operator, RunTimeline } from "@runx/runtime";
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

let fx: ApiFixture;
let events: ApiEvents;
const createCaller = createCallerFactory(appRouter);
const sessions = sessionKeys(randomBytes(32));

beforeEach(() => {
  fx = apiFixture();
  addAnswersReview(fx.ws);
  events = new ApiEvents();
});
afterEach(() => fx.cleanup());

function caller(operator: Operator | null) {
  return createCaller({
    runtime: fx.runtime,
    sessions,
    executor: inlineExecutor(fx.runtime, events),
    events,
    operator,
    ...requestContext(),
    setSession: () => undefined,
  });
}

async function as(role: Operator["role"], username: string = role) {
  return fx.runtime.console.operators.add({ username, role, password: PASSWORD });
}

const kinds = (t: RunTimeline) => t.events.map((e) => e.kind);

describe("runs.timeline", () => {
  it("shows the pending step to every role, then the approver and reason that resumed the run", async () => {
    const alice = await as("approver", "alice");
    const bob = await as("approver", "bob");
    const viewer = await as("viewer", "victor");
    const admin = await as("admin", "ada");
    const started = await caller(alice).runs.start({
      skill: "skills/gated-echo",
      inputs: { message: "hi" },
    });
    const runId = started.runId;

    const paused = await caller(viewer).runs.timeline({ runId });
    expect(paused.steps.map((s) => [s.stepId, s.status])).toEqual([
      ["release", "waiting"],
      ["say", "pending"],
    ]);
    expect(paused.events[0]).toMatchObject({ kind: "run_started", via: "console", actor: "alice" });
    // Every role that reads runs reads the same timeline.
    for (const op of [alice, admin]) {
      expect(await caller(op).runs.timeline({ runId })).toEqual(paused);
    }
    await expect(caller(null).runs.timeline({ runId })).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });

    const [pending] = await caller(bob).approvals.pending();
    await caller(bob).approvals.decide({
      runId,
      gateId: pending!.gateId,
      decision: "approve",
      reason: "release notes reviewed",
    });
    const done = await caller(viewer).runs.timeline({ runId });
    expect(done.steps.map((s) => [s.stepId, s.status])).toEqual([
      ["release", "closed"],
      ["say", "closed"],
    ]);
    expect(done.steps.every((s) => s.receiptId !== null && s.durationMs !== null)).toBe(true);
    expect(kinds(done)).toEqual([
      "run_started",
      "paused",
      "decision",
      "resumed",
      "step_started",
      "step_finished",
      "step_started",
      "step_finished",
      "sealed",
    ]);
    expect(done.events.find((e) => e.kind === "decision")).toMatchObject({
      actor: "bob",
      decision: "approve",
      reason: "release notes reviewed",
    });
    expect(done.events.find((e) => e.kind === "resumed")).toMatchObject({
      via: "console",
      actor: "bob",
      reason: "release notes reviewed",
    });
  });

  it("names the operator who answered and their note as who resumed the run and why", async () => {
    const grace = await as("approver", "grace");
    const runId = fx.runtime.console.newRunId();
    await fx.runtime.console.runJob({
      kind: "start",
      runId,
      ref: "skills/answers-review",
      inputs: { subject: "the login page" },
    });
    await caller(grace).runs.answer({
      runId,
      answers: { [REVIEW_REQUEST]: { decision: "approve" } },
      note: "reviewed with the design team",
    });
    const t = await caller(grace).runs.timeline({ runId });
    expect(t.events.find((e) => e.kind === "resumed")).toMatchObject({
      via: "console",
      actor: "grace",
      reason: "reviewed with the design team",
      answered: [REVIEW_REQUEST],
    });
  });

  it("maps an unknown run to NOT_FOUND and a malformed id to BAD_REQUEST", async () => {
    const viewer = await as("viewer");
    const codeOf = async (p: Promise<unknown>) =>
      p.then(
        () => "OK",
        (e: unknown) => (e instanceof TRPCError ? e.code : "not a TRPCError"),
      );
    expect(
      await codeOf(caller(viewer).runs.timeline({ runId: "run_console_0000000000000000" })),
    ).toBe("NOT_FOUND");
    expect(await codeOf(caller(viewer).runs.timeline({ runId: "../etc" }))).toBe("BAD_REQUEST");
  });
});
