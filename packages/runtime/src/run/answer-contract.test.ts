import { describe, expect, it } from "vitest";
import { buildAgentActRequest } from "../agents/request.js";
import { answerContract, answerProblem, checkAnswerContracts } from "./answer-contract.js";
import type { RunRequest } from "../contracts/envelope.js";

const review = buildAgentActRequest({
  agent: "reviewer",
  task: "review-change",
  skill: "answers-review",
  skillBody: "Review the change.",
  stepInstructions: "Decide whether it ships.",
  inputs: { subject: "x" },
  outputs: {
    decision: {
      type: "string",
      enum: ["approve", "revise", "reject"],
      description: "Whether the change ships.",
    },
    note: { type: "string", required: false },
    score: { type: "integer", required: false },
  },
  runId: "run_x",
  stepId: "review",
}) as RunRequest;

const input: RunRequest = {
  id: "input.echo.message",
  kind: "input",
  questions: [
    { id: "message", prompt: "Provide message", required: true, type: "string" },
    { id: "extra", prompt: "Anything", required: false, type: "json", description: "Any JSON." },
  ],
};

describe("answer contracts", () => {
  it("are the agent act's declared outputs, named after the step, with its instructions", () => {
    expect(answerContract(review)).toEqual({
      kind: "agent",
      label: "review",
      prompt: "Review the change.\n\n## Step instructions\n\nDecide whether it ships.",
      schema: {
        type: "object",
        properties: {
          decision: {
            type: "string",
            enum: ["approve", "revise", "reject"],
            description: "Whether the change ships.",
          },
          note: { type: "string" },
          score: { type: "integer" },
        },
        required: ["decision"],
        additionalProperties: true,
      },
    });
  });

  it("are closed objects of the questions for a missing-input request", () => {
    expect(answerContract(input)).toMatchObject({
      kind: "input",
      label: "input.echo.message",
      schema: {
        properties: { message: { type: "string", description: "Provide message" }, extra: {} },
        required: ["message"],
        additionalProperties: false,
      },
    });
  });

  it("do not exist for approvals (only a human decision resolves a gate)", () => {
    const gate: RunRequest = { id: "g", kind: "approval", gate: { id: "g", reason: "r" } };
    expect(answerContract(gate)).toBeNull();
  });
});

describe("answer problems", () => {
  it("name the request and the field once, with the allowed values of an enum", () => {
    expect(answerProblem(review, {})).toEqual({
      message: 'answer for review: field "decision" is required (one of: approve, revise, reject)',
      field: "decision",
      allowed: ["approve", "revise", "reject"],
    });
    expect(answerProblem(review, { decision: "maybe" })?.message).toBe(
      'answer for review: field "decision" must be one of: approve, revise, reject',
    );
    expect(answerProblem(review, { decision: 3 })?.message).toBe(
      'answer for review: field "decision" must be a string (one of: approve, revise, reject)',
    );
    expect(answerProblem(review, { decision: "approve", score: 1.5 })?.message).toBe(
      'answer for review: field "score" must be an integer',
    );
  });

  it("say the answer must be an object, listing its fields", () => {
    expect(answerProblem(review, ["approve"])).toEqual({
      message: "answer for review must be a JSON object with the fields decision, note, score",
      field: null,
    });
  });

  it("refuse an input answer that misses a question, has the wrong type or answers no question", () => {
    expect(answerProblem(input, {})?.message).toBe(
      'answer for input.echo.message: field "message" is required',
    );
    expect(answerProblem(input, { message: 5 })?.message).toBe(
      'answer for input.echo.message: field "message" must be a string',
    );
    expect(answerProblem(input, { message: "hi", mesage: "typo" })?.message).toBe(
      'answer for input.echo.message: field "mesage" is not expected (expected: message, extra)',
    );
    expect(answerProblem(input, { message: "hi", extra: [1] })).toBeNull();
  });

  it("accept answers that keep the contract (extra keys are kept for agent acts)", () => {
    expect(answerProblem(review, { decision: "approve", why: "fine" })).toBeNull();
  });

  it("are thrown as ANSWERS_INVALID with the request id and field for machines", () => {
    expect(() =>
      checkAnswerContracts({ answers: { [review.id]: {} }, approvals: {} }, [review]),
    ).toThrow(
      expect.objectContaining({
        code: "ANSWERS_INVALID",
        details: {
          request_id: review.id,
          field: "decision",
          allowed: ["approve", "revise", "reject"],
        },
      }),
    );
    expect(() =>
      checkAnswerContracts({ answers: {}, approvals: {} }, [review, input]),
    ).not.toThrow();
  });
});
