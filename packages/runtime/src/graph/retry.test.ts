import { describe, expect, it } from "vitest";
import { RuntimeError } from "../errors.js";
import type { GraphDoc } from "./document.js";
import { createGraphState, nextActions } from "./machine.js";
import type { StepOutcome } from "./machine.js";
import {
  admitRetryPolicy,
  assertRetryAdmissible,
  bindStepContracts,
  contractFromRunner,
} from "./plan.js";
import { drive, graph, script } from "./test-support/drive.js";

/** Fails the first attempt of every step, then succeeds (a flaky-step injection). */
function flaky(): (a: { attempt: number }) => StepOutcome {
  return (a) =>
    a.attempt === 1
      ? { status: "failure", reason: "transient" }
      : { status: "success", output: { ok: true } };
}

/** Upstream fixtures/graphs/retry/*.yaml shapes. */
const readOnly = graph({
  name: "retry-read-only",
  owner: "runx",
  steps: [
    {
      id: "flaky-read",
      skill: "../../skills/echo",
      inputs: { message: "retry ok" },
      retry: { max_attempts: 2, backoff_ms: 0 },
    },
  ],
});
const mutatingWithoutKey = graph({
  name: "retry-mutating-denied",
  steps: [
    {
      id: "deploy",
      skill: "../../skills/echo",
      mutation: true,
      inputs: { message: "deploy" },
      retry: { max_attempts: 2 },
    },
  ],
});
const mutatingWithKey = graph({
  name: "retry-mutating-idempotent",
  owner: "runx",
  steps: [
    {
      id: "deploy",
      skill: "../../skills/echo",
      mutation: true,
      idempotency_key: "{{request_id}}",
      inputs: { message: "deploy", request_id: "deploy-123" },
      retry: { max_attempts: 2, backoff_ms: 0 },
    },
  ],
});
const skillStep = graph({
  name: "retry-skill-level",
  steps: [{ id: "work", skill: "../../skills/skill-level-retry" }],
});

/** Binds the nested skill's runner declarations, as the graph runner does from the package. */
function withSkillRunner(
  doc: GraphDoc,
  runner: Parameters<typeof contractFromRunner>[0],
): GraphDoc {
  return bindStepContracts(doc, (step) =>
    step.kind === "skill" ? contractFromRunner(runner) : undefined,
  );
}

describe("retry", () => {
  it("retries a read-only step up to max_attempts and records the retry rule", () => {
    const actions: string[] = [];
    const run = drive(
      readOnly,
      createGraphState(readOnly, {}),
      script({
        "flaky-read": (a) => {
          actions.push(`${a.retry.attempt}/${a.retry.max_attempts}:${a.retry.rule_fired}`);
          return flaky()(a);
        },
      }),
    );
    expect(run.executed).toEqual(["flaky-read#1", "flaky-read#2"]);
    expect(actions).toEqual(["1/2:initial_attempt", "2/2:retry_attempt"]);
    expect(run.stop.kind).toBe("complete");
    expect(run.state.steps[0]?.history.map((h) => h.status)).toEqual(["failure", "success"]);
  });

  it("fails once the retry budget is exhausted", () => {
    const run = drive(
      readOnly,
      createGraphState(readOnly, {}),
      script({ "flaky-read": () => ({ status: "failure" }) }),
    );
    expect(run.executed).toEqual(["flaky-read#1", "flaky-read#2"]);
    expect(run.stop).toMatchObject({ kind: "fail", code: "RETRY_EXHAUSTED", stepId: "flaky-read" });
  });

  it("refuses a mutating step's retry without an idempotency key before anything executes", () => {
    const state = createGraphState(mutatingWithoutKey, {});
    expect(nextActions(mutatingWithoutKey, state)).toEqual([
      {
        kind: "fail",
        code: "RETRY_REFUSED",
        disposition: "blocked",
        stepId: "deploy",
        reason: "step 'deploy' declares mutating retry without an idempotency key",
      },
    ]);
    expect(state.status).toBe("failed");
    const refusal = (() => {
      try {
        assertRetryAdmissible(mutatingWithoutKey);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(RuntimeError);
    expect(refusal).toMatchObject({ code: "RETRY_REFUSED", details: { step_id: "deploy" } });
  });

  it("allows a mutating step's retry with an idempotency key and resolves the key template", () => {
    const keys: (string | undefined)[] = [];
    const run = drive(
      mutatingWithKey,
      createGraphState(mutatingWithKey, {}),
      script({
        deploy: (a) => {
          keys.push(a.idempotencyKey);
          expect(a.mutating).toBe(true);
          return flaky()(a);
        },
      }),
    );
    expect(run.executed).toEqual(["deploy#1", "deploy#2"]);
    expect(keys).toEqual(["deploy-123", "deploy-123"]);
    expect(run.stop.kind).toBe("complete");
  });

  it("honours a nested skill's own retry policy", () => {
    const doc = withSkillRunner(skillStep, { retry: { max_attempts: 2 } });
    const run = drive(doc, createGraphState(doc, {}), script({ work: flaky() }));
    expect(run.executed).toEqual(["work#1", "work#2"]);
    expect(run.stop.kind).toBe("complete");
  });

  it("refuses a nested skill's retry when the skill is mutating and has no idempotency key", () => {
    const doc = withSkillRunner(skillStep, {
      retry: { max_attempts: 2 },
      risk: { mutating: true },
    });
    expect(nextActions(doc, createGraphState(doc, {}))).toMatchObject([
      { kind: "fail", code: "RETRY_REFUSED", stepId: "work" },
    ]);
    const keyed = withSkillRunner(skillStep, {
      retry: { max_attempts: 2 },
      mutating: true,
      idempotency: { key: "$input.request_id" },
    });
    const actions = nextActions(keyed, createGraphState(keyed, { request_id: "r-1" }));
    expect(actions).toMatchObject([
      { kind: "execute_step", stepId: "work", idempotencyKey: "r-1", mutating: true },
    ]);
  });

  it("treats a tool the catalog knows as mutating like a mutation: true step", () => {
    const doc = bindStepContracts(
      graph({
        name: "tool-retry",
        steps: [{ id: "write", tool: "fs.write", retry: { max_attempts: 3 } }],
      }),
      (step) => (step.kind === "tool" && step.tool === "fs.write" ? { mutating: true } : undefined),
    );
    expect(nextActions(doc, createGraphState(doc, {}))).toMatchObject([
      { kind: "fail", code: "RETRY_REFUSED" },
    ]);
  });

  it("admits retry policies like the upstream policy kernel", () => {
    expect(admitRetryPolicy({ stepId: "read", mutating: false, maxAttempts: 2 })).toEqual({
      status: "allow",
      reasons: ["retry policy allowed"],
    });
    expect(admitRetryPolicy({ stepId: "w", mutating: true, maxAttempts: 2 }).status).toBe("deny");
    expect(admitRetryPolicy({ stepId: "w", mutating: true, maxAttempts: 1 }).status).toBe("allow");
  });
});
