/**
 * The normalized graph document's types, apart from the normalizer so that the checks, the
 * field parsers and the planner can share them without importing each other.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { RetryPolicy } from "../parser/runner-types.js";
import type { StepRef } from "./references.js";

/** A `when:` condition or a policy guard comparison: `<step>.<path>` compared to a JSON value. */
export interface FieldCondition {
  field: StepRef;
  equals?: JsonValue;
  not_equals?: JsonValue;
}

/** A policy guard (`policy.guards[]`, TS-era `policy.transitions[]` with `to`). */
export interface GraphGuard extends FieldCondition {
  step: string;
  /** The author's words for why the step is blocked when the condition fails (optional). */
  reason?: string;
}

/** A fanout threshold gate: a numeric branch output above `above` fires `action`. */
export interface ThresholdGate {
  step: string;
  field: string;
  above: number;
  action: "pause" | "escalate";
}

/** A fanout conflict gate: distinct values of `field` across branches fire `action`. */
export interface ConflictGate {
  field: string;
  steps?: string[];
  action: "pause" | "escalate";
}

/** Fanout strategy; `threshold` is a runx-ts extension (quorum that pauses instead of halting). */
export type FanoutStrategy = "all" | "any" | "quorum" | "threshold";

/** A declared fanout group and its branch steps (contiguous, in declaration order). */
export interface FanoutGroup {
  id: string;
  strategy: FanoutStrategy;
  min_success?: number;
  on_branch_failure: "halt" | "continue";
  threshold_gates: ThresholdGate[];
  conflict_gates: ConflictGate[];
  steps: string[];
}

/**
 * What the runtime knows about a step from outside the graph document (the nested skill's
 * runner, the native tool catalog). Filled by `bindStepContracts`; absent means "unknown".
 */
export interface StepContract {
  /** Declared output keys (the semantic output contract). */
  outputs?: string[];
  /**
   * The outputs are a native tool's fixed named output (e.g. `http_execution`), not a
   * contract the graph or a nested skill declared; see `sharesResultKey`.
   */
  tool_output?: boolean;
  mutating?: boolean;
  retry?: RetryPolicy;
  idempotency_key?: string;
}

/** Fields every step has, whatever executes it. */
export interface GraphStepCommon {
  id: string;
  /** Position in `steps` (0-based). */
  index: number;
  label?: string;
  inputs: JsonObject;
  /** Context edges: input name → reference to an earlier step's structured output. */
  context: Record<string, StepRef>;
  scopes: string[];
  policy?: JsonObject;
  retry?: RetryPolicy;
  idempotency_key?: string;
  /** The step itself declares `mutation: true` (TS-era also `mutating: true`). */
  mutating: boolean;
  fanout_group?: string;
  when?: FieldCondition;
  artifacts?: JsonObject;
  outputs?: JsonObject;
  allowed_tools?: string[];
  context_skills?: string[];
  instructions?: string;
  /** Earlier steps whose success this step needs (context edges and `$steps.` references). */
  depends_on: string[];
  contract?: StepContract;
}

/** A step that calls a native or local tool. */
export interface ToolStep extends GraphStepCommon {
  kind: "tool";
  tool: string;
}

/** A step that runs a nested skill package (optionally a named runner). */
export interface SkillStep extends GraphStepCommon {
  kind: "skill";
  skill: string;
  runner?: string;
}

/** A step with an inline source (`run: {type, ...}`), including `run: {type: approval}`. */
export interface RunStep extends GraphStepCommon {
  kind: "run";
  run: JsonObject & { type: string };
}

/** One normalized graph step. */
export type GraphStep = ToolStep | SkillStep | RunStep;

/** A normalized, validated graph document. */
export interface GraphDoc {
  name: string;
  owner?: string;
  steps: GraphStep[];
  result_from: string[];
  /** True when `result_from` was absent (TS-era compat: the last step's output is the result). */
  result_from_defaulted: boolean;
  fanout: Record<string, FanoutGroup>;
  guards: GraphGuard[];
}
