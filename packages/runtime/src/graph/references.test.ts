import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import {
  evaluateCondition,
  parseStepRef,
  resolveIdempotencyKey,
  resolvePath,
  resolveStepInputs,
} from "./references.js";
import type { ReferenceScope, ResolvableStep } from "./references.js";

const outputs: Record<string, JsonObject> = {
  first: {
    result: { data: { message: "hello", items: [{ n: 1 }] } },
  },
};
const scope: ReferenceScope = {
  inputs: { message: "from input", nested: { deep: 7 }, list: ["a"] },
  outputOf: (id) => outputs[id],
};
const step = (extra: Partial<ResolvableStep>): ResolvableStep => ({
  id: "second",
  inputs: {},
  context: {},
  ...extra,
});

function missing(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected GRAPH_REFERENCE_MISSING");
}

describe("reference resolution", () => {
  it("resolves $input paths at any depth and drops absent ones", () => {
    const inputs = resolveStepInputs(
      step({
        inputs: {
          message: "$input.message",
          deep: "$input.nested.deep",
          absent: "$input.nope",
          request: [{ query: { name: "$input.message", lat: "$input.nope" } }],
          literal: "plain text",
        },
      }),
      scope,
    );
    expect(inputs).toEqual({
      message: "from input",
      deep: 7,
      request: [{ query: { name: "from input" } }],
      literal: "plain text",
    });
  });

  it("resolves $steps references and context edges against structured outputs", () => {
    const inputs = resolveStepInputs(
      step({
        inputs: { first_item: "$steps.first.result.data.items.0.n" },
        context: { message: parseStepRef("first.result.data.message")! },
      }),
      scope,
    );
    expect(inputs).toEqual({ first_item: 1, message: "hello" });
  });

  it("lets declared inputs read a context edge as $input.<name>", () => {
    const inputs = resolveStepInputs(
      step({
        inputs: { expected: { message: "$input.prior.message", first: "$input.prior.items.0.n" } },
        context: { prior: parseStepRef("first.result.data")! },
      }),
      scope,
    );
    expect(inputs).toEqual({
      expected: { message: "hello", first: 1 },
      prior: { message: "hello", items: [{ n: 1 }] },
    });
  });

  it("starts from ambient graph inputs, lets declared inputs override and context win", () => {
    const inputs = resolveStepInputs(
      step({
        inputs: { list: ["b"] },
        context: { message: parseStepRef("first.result.data.message")! },
      }),
      scope,
      { ambient: true },
    );
    expect(inputs).toEqual({ message: "hello", nested: { deep: 7 }, list: ["b"] });
  });

  it("lets $input.<name> in a step's inputs read what its own context edges bring", () => {
    const inputs = resolveStepInputs(
      step({
        inputs: { picked: "$input.result.items.0.n", message: "$input.message" },
        context: { result: parseStepRef("first.result.data")! },
      }),
      scope,
    );
    // Graph inputs stay visible; the context value is also handed over under its own name.
    expect(inputs).toEqual({
      picked: 1,
      message: "from input",
      result: { message: "hello", items: [{ n: 1 }] },
    });
  });

  it("names the step and path when a context reference is missing", () => {
    const error = missing(() =>
      resolveStepInputs(
        step({ context: { message: parseStepRef("first.result.data.nope")! } }),
        scope,
      ),
    );
    expect(error.code).toBe("GRAPH_REFERENCE_MISSING");
    expect(error.details).toMatchObject({
      step_id: "second",
      path: "second.context.message",
      reference: "first.result.data.nope",
    });
  });

  it("names the step and path when a $steps reference is missing", () => {
    const error = missing(() =>
      resolveStepInputs(step({ inputs: { a: { b: "$steps.ghost.x" } } }), scope),
    );
    expect(error.code).toBe("GRAPH_REFERENCE_MISSING");
    expect(error.details).toMatchObject({ path: "second.inputs.a.b", reference: "$steps.ghost.x" });
  });

  it("resolves idempotency keys from $input, {{…}} templates, or literals", () => {
    expect(resolveIdempotencyKey("$input.message", "s", scope.inputs, {})).toBe("from input");
    expect(resolveIdempotencyKey("$input.absent", "s", scope.inputs, {})).toBe("$input.absent");
    expect(resolveIdempotencyKey("deploy-{{request_id}}", "s", {}, { request_id: "r1" })).toBe(
      "deploy-r1",
    );
    expect(resolveIdempotencyKey("fixed", "s", {}, {})).toBe("fixed");
    expect(missing(() => resolveIdempotencyKey("{{request_id}}", "s", {}, {})).code).toBe(
      "GRAPH_REFERENCE_MISSING",
    );
  });

  it("evaluates conditions by JSON equality and reports unresolved fields", () => {
    const field = parseStepRef("first.result.data.message")!;
    expect(evaluateCondition({ field, equals: "hello" }, scope)).toBe(true);
    expect(evaluateCondition({ field, not_equals: "hello" }, scope)).toBe(false);
    expect(
      evaluateCondition({ field: parseStepRef("first.nope")!, equals: "x" }, scope),
    ).toBeUndefined();
    expect(resolvePath({ a: [{ b: null }] }, ["a", "0", "b"])).toBeNull();
  });

  it("parses references with or without the $steps prefix and rejects empty segments", () => {
    expect(parseStepRef("$steps.a.b")).toEqual({ step: "a", path: ["b"], ref: "$steps.a.b" });
    expect(parseStepRef("a..b")).toBeUndefined();
  });
});
