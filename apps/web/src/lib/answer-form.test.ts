import { describe, expect, it } from "vitest";
import {
  answerFrom,
  answersFromRaw,
  checkAnswer,
  formOf,
  rawFrom,
  valuesFrom,
  WHOLE_ANSWER,
} from "./answer-form";
import type { ContractedRequest } from "./answer-form";

/** The contract runs.get gives the review step of answers-review (declared outputs). */
const review: ContractedRequest = {
  id: "agent_task.review-change.output",
  contract: {
    kind: "agent",
    label: "review",
    prompt: "Decide whether the change ships.",
    schema: {
      type: "object",
      properties: {
        decision: {
          type: "string",
          enum: ["approve", "revise", "reject"],
          description: "Whether the change ships.",
        },
        note: { type: "string", description: "One line for the record." },
        score: { type: "integer" },
        urgent: { type: "boolean" },
        tags: { type: "array" },
        code: { type: "string", maxLength: 12 },
      },
      required: ["decision"],
      additionalProperties: true,
    },
  },
};

/** A missing-input request: closed, one required string question. */
const input: ContractedRequest = {
  id: "input.echo.message",
  contract: {
    kind: "input",
    label: "input.echo.message",
    prompt: null,
    schema: {
      type: "object",
      properties: { message: { type: "string", description: "Provide message" } },
      required: ["message"],
      additionalProperties: false,
    },
  },
};

const REQUIRED =
  'answer for review: field "decision" is required (one of: approve, revise, reject)';

describe("answer form model", () => {
  it("generates one control per declared field, chosen by type and enum", () => {
    const form = formOf(review);
    expect(form.fields.map((f) => [f.name, f.control, f.required])).toEqual([
      ["decision", "select", true],
      ["note", "textarea", false],
      ["score", "number", false],
      ["urgent", "checkbox", false],
      ["tags", "json", false],
      ["code", "text", false],
    ]);
    expect(form.fields[0]).toMatchObject({
      options: ["approve", "revise", "reject"],
      description: "Whether the change ships.",
    });
    expect(form).toMatchObject({ label: "review", closed: false, free: false });
    expect(formOf(input)).toMatchObject({ closed: true, free: false });
    const open = formOf({ id: "x", contract: { ...review.contract, schema: { type: "object" } } });
    expect(open).toMatchObject({ fields: [], free: true });
  });

  it("refuses an empty form naming the required field and its allowed values, as the API does", () => {
    const form = formOf(review);
    expect(answerFrom(form, {})).toEqual({
      ok: false,
      problem: { requestId: review.id, field: "decision", message: REQUIRED },
    });
  });

  it("turns filled controls into a typed answer (select index → declared value)", () => {
    const form = formOf(review);
    const built = answerFrom(form, {
      decision: "1",
      note: "needs tests",
      score: "3",
      urgent: true,
      tags: '["ui"]',
      code: "",
    });
    expect(built).toEqual({
      ok: true,
      answer: { decision: "revise", note: "needs tests", score: 3, urgent: true, tags: ["ui"] },
    });
  });

  it("names the field whose text does not parse or has the wrong type", () => {
    const form = formOf(review);
    expect(answerFrom(form, { decision: "0", score: "three" })).toMatchObject({
      ok: false,
      problem: { field: "score", message: 'answer for review: field "score" must be an integer' },
    });
    expect(answerFrom(form, { decision: "0", score: "1.5" })).toMatchObject({
      problem: { field: "score", message: 'answer for review: field "score" must be an integer' },
    });
    expect(answerFrom(form, { decision: "0", tags: "[ui" })).toMatchObject({
      problem: { field: "tags", message: 'answer for review: field "tags" is not valid JSON' },
    });
    expect(answerFrom(form, { decision: "0", tags: '{"a":1}' })).toMatchObject({
      problem: { field: "tags", message: 'answer for review: field "tags" must be a list' },
    });
  });

  it("checks pasted answers with the same rules: object, required, type, enum, closed fields", () => {
    const form = formOf(review);
    expect(checkAnswer(form, [])?.message).toBe(
      "answer for review must be a JSON object with the fields decision, note, score, urgent, tags, code",
    );
    expect(checkAnswer(form, {})?.message).toBe(REQUIRED);
    expect(checkAnswer(form, { decision: "maybe" })?.message).toBe(
      'answer for review: field "decision" must be one of: approve, revise, reject',
    );
    expect(checkAnswer(form, { decision: 1 })?.message).toBe(
      'answer for review: field "decision" must be a string (one of: approve, revise, reject)',
    );
    expect(checkAnswer(form, { decision: "approve", extra: 1 })).toBeNull();
    expect(checkAnswer(formOf(input), { message: "hi", mesage: "typo" })?.message).toBe(
      'answer for input.echo.message: field "mesage" is not expected (expected: message)',
    );
  });

  it("reads the advanced mode's JSON keyed by request id, or one request's bare answer", () => {
    const forms = [formOf(review)];
    expect(answersFromRaw(JSON.stringify({ [review.id]: {} }), forms)).toEqual({
      ok: false,
      problem: { requestId: review.id, field: "decision", message: REQUIRED },
    });
    expect(answersFromRaw("{}", forms)).toMatchObject({
      ok: false,
      problem: { field: "decision" },
    });
    expect(answersFromRaw('{"decision": "approve"}', forms)).toEqual({
      ok: true,
      answers: { [review.id]: { decision: "approve" } },
    });
    expect(answersFromRaw("{nope", forms)).toMatchObject({
      ok: false,
      problem: { field: null, message: expect.stringContaining("not valid JSON") as string },
    });
    const both = [formOf(review), formOf(input)];
    expect(answersFromRaw('{"decision": "approve"}', both)).toMatchObject({
      ok: false,
      problem: { message: expect.stringContaining("keyed by request id") as string },
    });
    // Answering one of two requests is allowed: the other stays pending.
    expect(answersFromRaw(JSON.stringify({ [input.id]: { message: "hi" } }), both)).toEqual({
      ok: true,
      answers: { [input.id]: { message: "hi" } },
    });
  });

  it("moves between the form and the raw JSON without losing what was filled in", () => {
    const forms = [formOf(review)];
    expect(JSON.parse(rawFrom(forms, {}))).toEqual({ [review.id]: {} });
    const values = { decision: "2", note: "no", score: "x", urgent: false };
    expect(JSON.parse(rawFrom(forms, { [review.id]: values }))).toEqual({
      [review.id]: { decision: "reject", note: "no" },
    });
    expect(valuesFrom(forms[0]!, { decision: "reject", urgent: true, tags: [1] })).toEqual({
      decision: "2",
      urgent: true,
      tags: "[\n  1\n]",
    });
    const free = formOf({ id: "x", contract: { ...review.contract, schema: { type: "object" } } });
    expect(answerFrom(free, { [WHOLE_ANSWER]: '{"any": 1}' })).toEqual({
      ok: true,
      answer: { any: 1 },
    });
    expect(answerFrom(free, { [WHOLE_ANSWER]: "[1]" })).toMatchObject({ ok: false });
  });
});
