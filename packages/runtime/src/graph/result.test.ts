import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { JsonObject } from "../parser/json.js";
import { createGraphState } from "./machine.js";
import { bindStepContracts, validateResultProducers } from "./plan.js";
import type { StepContractResolver } from "./plan.js";
import { drive, graph, script } from "./test-support/drive.js";

const producers = (extra: JsonObject = {}) =>
  graph({
    name: "configure",
    result_from: ["readback", "verify"],
    steps: [
      { id: "readback", skill: "graph/provider-operation", runner: "read" },
      { id: "verify", tool: "data.compare", inputs: { expected: 1 } },
      { id: "note", tool: "data.compare" },
    ],
    ...extra,
  });

/** Contracts as the runtime would resolve them from the nested runner and tool catalog. */
const contracts: Record<string, string[]> = {
  readback: ["provider_evidence"],
  verify: ["comparison"],
};
const resolver: StepContractResolver = (step) => {
  const outputs = contracts[step.id];
  return outputs === undefined ? undefined : { outputs };
};

function codeOf(fn: () => unknown): RuntimeError {
  try {
    fn();
  } catch (error) {
    if (error instanceof RuntimeError) return error;
    throw error;
  }
  throw new Error("expected a RuntimeError");
}

describe("result_from", () => {
  it("returns the union of each successful producer's declared outputs", () => {
    const doc = bindStepContracts(producers(), resolver);
    expect(validateResultProducers(doc)).toEqual(contracts);
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({
        readback: () => ({
          status: "success",
          output: { provider_evidence: { ok: 1 }, debug: "x" },
        }),
        verify: () => ({ status: "success", output: { comparison: { equal: true } } }),
      }),
    );
    expect(run.stop).toEqual({
      kind: "complete",
      result: { provider_evidence: { ok: 1 }, comparison: { equal: true } },
    });
  });

  it("refuses a producer without a semantic output contract before execution", () => {
    const error = codeOf(() =>
      validateResultProducers(producers(), (s) =>
        s.id === "verify" ? { outputs: ["c"] } : undefined,
      ),
    );
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject({ step_id: "readback" });
  });

  it("refuses two unconditional producers that emit the same key", () => {
    const error = codeOf(() =>
      validateResultProducers(producers(), () => ({ outputs: ["packet"] })),
    );
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject({ step_id: "verify", key: "packet" });
  });

  it("fails the run when two successful conditional producers emit the same key", () => {
    const doc = graph({
      name: "exclusive",
      result_from: ["x", "y"],
      steps: [
        { id: "pick", tool: "data.compare", inputs: { equal: true } },
        {
          id: "x",
          when: { field: "pick.equal", equals: true },
          tool: "t",
          artifacts: { wrap_as: "packet" },
        },
        {
          id: "y",
          when: { field: "pick.equal", equals: true },
          tool: "t",
          artifacts: { wrap_as: "packet" },
        },
      ],
    });
    expect(validateResultProducers(doc)).toEqual({ x: ["packet"], y: ["packet"] });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({
        x: () => ({ status: "success", output: { packet: 1 } }),
        y: () => ({ status: "success", output: { packet: 2 } }),
      }),
    );
    expect(run.stop).toMatchObject({ kind: "fail", code: "RESULT_CONFLICT", stepId: "y" });
  });

  it("lets two calls of one native tool share its named output; the later-listed producer's packet is the result", () => {
    const doc = bindStepContracts(
      graph({
        name: "air-quality",
        result_from: ["locate", "air_quality"],
        steps: [
          { id: "locate", tool: "http.read" },
          { id: "air_quality", tool: "http.read" },
        ],
      }),
      () => ({ outputs: ["http_execution"], tool_output: true }),
    );
    expect(validateResultProducers(doc)).toEqual({
      locate: ["http_execution"],
      air_quality: ["http_execution"],
    });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({
        locate: () => ({ status: "success", output: { http_execution: { data: "geo" } } }),
        air_quality: () => ({ status: "success", output: { http_execution: { data: "aq" } } }),
      }),
    );
    expect(run.stop).toEqual({ kind: "complete", result: { http_execution: { data: "aq" } } });
  });

  it("still refuses a declared key shared with a tool's named output, before and during the run", () => {
    const doc = bindStepContracts(
      graph({
        name: "mixed",
        result_from: ["read", "shape"],
        steps: [
          { id: "read", tool: "http.read" },
          { id: "shape", tool: "t", artifacts: { wrap_as: "http_execution" } },
        ],
      }),
      (step) =>
        step.id === "read" ? { outputs: ["http_execution"], tool_output: true } : undefined,
    );
    const error = codeOf(() => validateResultProducers(doc));
    expect(error.code).toBe("GRAPH_INVALID");
    expect(error.details).toMatchObject({ step_id: "shape", key: "http_execution" });
    const run = drive(
      doc,
      createGraphState(doc, {}),
      script({
        read: () => ({ status: "success", output: { http_execution: 1 } }),
        shape: () => ({ status: "success", output: { http_execution: 2 } }),
      }),
    );
    expect(run.stop).toMatchObject({ kind: "fail", code: "RESULT_CONFLICT", stepId: "shape" });
  });

  it("returns the last step's whole output for compat graphs without result_from", () => {
    const doc = graph({
      name: "compat",
      steps: [{ id: "only", skill: "./echo", inputs: { message: "m" } }],
    });
    expect(validateResultProducers(doc)).toEqual({});
    expect(drive(doc, createGraphState(doc, {}), script({})).stop).toEqual({
      kind: "complete",
      result: { message: "m" },
    });
  });
});
