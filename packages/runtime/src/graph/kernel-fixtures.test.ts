/**
 * Replays upstream's kernel state-machine decision fixtures
 * (conformance/runx-upstream/fixtures/kernel/state-machine/*.json) against this engine.
 *
 * Mapped: sequential-create-graph, sequential-plan-first-step, fanout-evaluate-*,
 * fanout-decision-key, and policy/retry-admission-allows-readonly-retry.
 *
 * Not mapped:
 * - single-step-create-pending: a single-step (non-graph) skill run state; runx-ts keeps that
 *   in the skill runner, not in the graph machine, so there is no equivalent value to compare.
 * - the upstream TS state's camelCase wire names (`type: run_step`, `contextFrom`): compared
 *   through a projection — our action is `execute_step` and context sources are `depends_on`.
 * - `branch_receipts` in our sync record has no upstream counterpart in these fixtures and is
 *   left out of the comparison.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { JsonObject, JsonValue } from "../parser/json.js";
import { isJsonObject } from "../parser/json.js";
import type { FanoutGroup } from "./document.js";
import { evaluateFanoutSync, fanoutDecisionKey } from "./fanout.js";
import type { BranchResult } from "./fanout.js";
import { createGraphState, nextActions } from "./machine.js";
import type { GraphState } from "./machine.js";
import { admitRetryPolicy } from "./plan.js";
import { graph } from "./test-support/drive.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const kernel = path.resolve(
  here,
  "../../../../../shared/conformance/runx-upstream/fixtures/kernel",
);

interface Fixture {
  name: string;
  input: JsonObject & { kind: string };
  expected: { kind: string; value: JsonValue };
}

function load(dir: string): Fixture[] {
  const full = path.join(kernel, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(path.join(full, f), "utf8")) as Fixture);
}

/** snake_case keys → camelCase, recursively (our receipt-bound records are snake_case). */
function camel(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(camel);
  if (!isJsonObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, item] of Object.entries(value))
    out[key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase())] = camel(item);
  return out;
}

interface FixtureStep {
  id: string;
  contextFrom?: string[];
}

/** A graph whose steps have exactly the fixture's context sources. */
function graphOf(steps: FixtureStep[]) {
  return graph({
    name: "fixture",
    steps: steps.map((s) => ({
      id: s.id,
      tool: "fixture.step",
      context: Object.fromEntries(
        (s.contextFrom ?? []).map((src) => [`from_${src}`, `${src}.output`]),
      ),
    })),
  });
}

function groupOf(policy: JsonObject, results: BranchResult[]): FanoutGroup {
  const gates = (policy.thresholdGates ?? []) as JsonObject[];
  return {
    id: policy.groupId as string,
    strategy: policy.strategy as FanoutGroup["strategy"],
    ...(typeof policy.minSuccess === "number" ? { min_success: policy.minSuccess } : {}),
    on_branch_failure: policy.onBranchFailure as "halt" | "continue",
    threshold_gates: gates.map((g) => ({
      step: g.step as string,
      field: g.field as string,
      above: g.above as number,
      action: g.action as "pause" | "escalate",
    })),
    conflict_gates: [],
    steps: results.map((r) => r.stepId),
  };
}

function replay(fixture: Fixture): JsonValue {
  const input = fixture.input;
  switch (input.kind) {
    case "state-machine.createSequentialGraphState": {
      const steps = input.steps as unknown as FixtureStep[];
      const state = createGraphState(graphOf(steps), {}, { graphId: input.graphId as string });
      return {
        graphId: state.graphId ?? null,
        status: state.status,
        steps: state.steps.map((s) => ({
          attempts: s.attempts,
          status: s.status,
          stepId: s.stepId,
        })),
      };
    }
    case "state-machine.planSequentialGraphTransition": {
      const steps = input.steps as unknown as FixtureStep[];
      const doc = graphOf(steps);
      const given = input.state as unknown as Pick<GraphState, "status" | "steps">;
      const state: GraphState = {
        ...createGraphState(doc, {}),
        status: given.status,
        steps: given.steps.map((s) => ({ ...s, history: [] })),
      };
      const action = nextActions(doc, state)[0];
      if (action?.kind !== "execute_step") return { type: action?.kind ?? "none" };
      const step = doc.steps.find((s) => s.id === action.stepId);
      return {
        attempt: action.attempt,
        contextFrom: step?.depends_on ?? [],
        stepId: action.stepId,
        type: "run_step",
      };
    }
    case "state-machine.evaluateFanoutSync": {
      const results = input.results as unknown as BranchResult[];
      const record = evaluateFanoutSync(
        groupOf(input.policy as JsonObject, results),
        results,
        (input.resolvedGateKeys ?? []) as string[],
      );
      const { branch_receipts: _receipts, ...rest } = record;
      return camel(rest);
    }
    case "state-machine.fanoutSyncDecisionKey": {
      const decision = input.decision as { groupId: string; ruleFired: string };
      return fanoutDecisionKey(decision.groupId, decision.ruleFired);
    }
    case "policy.admitRetryPolicy": {
      const request = input.request as {
        stepId: string;
        mutating: boolean;
        retry: { maxAttempts: number };
      };
      return {
        ...admitRetryPolicy({
          stepId: request.stepId,
          mutating: request.mutating,
          maxAttempts: request.retry.maxAttempts,
        }),
      };
    }
    default:
      return { unmapped: input.kind };
  }
}

const UNMAPPED = new Set(["single-step-create-pending"]);
const stateMachine = load("state-machine").filter((f) => !UNMAPPED.has(f.name));
const retryPolicy = load("policy").filter((f) => f.input.kind === "policy.admitRetryPolicy");

describe("upstream kernel state-machine fixtures", () => {
  it("are present next to the repository", () => {
    expect(stateMachine.length).toBeGreaterThanOrEqual(6);
    expect(retryPolicy.length).toBeGreaterThanOrEqual(1);
  });

  it.each([...stateMachine, ...retryPolicy].map((f) => [f.name, f] as const))(
    "reproduces the decision of %s",
    (_name, fixture) => {
      expect(fixture.expected.kind).toBe("output");
      expect(replay(fixture)).toEqual(fixture.expected.value);
    },
  );
});
