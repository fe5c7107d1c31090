/**
 * The data of upstream's kernel sequential-graph surface (`runx kernel eval`): step
 * definitions, the graph and step states, fan-out policies with their gates, branch results,
 * sync decisions and the events that move a graph. Shared by the planner and transitions
 * (kernel/sequential.ts), the fan-out sync rules (kernel/fanout-sync.ts) and the input
 * readers (kernel/state-machine.ts). Types only.
 */
import type { JsonObject } from "../parser/json.js";

/** Where one step stands. */
export type GraphStepStatus = "pending" | "running" | "succeeded" | "failed" | "skipped";
/** Where the whole graph stands. */
export type GraphStatus = "pending" | "running" | "succeeded" | "failed" | "paused" | "escalated";
/** How many branches of a fan-out group must succeed: all, any, or `minSuccess`. */
export type SyncStrategy = "all" | "any" | "quorum";
/** What a fired gate does to the graph. */
export type GateAction = "pause" | "escalate";
/** A sync decision's verdict on its group. */
export type SyncOutcome = "proceed" | "halt" | "pause" | "escalate";

/** One step as the planner sees it: its context sources, retry budget and fan-out group. */
export interface StepDefinition {
  id: string;
  contextFrom?: string[];
  retry?: { maxAttempts: number };
  fanoutGroup?: string;
}

/** One step's recorded state. */
export interface StepState {
  stepId: string;
  status: GraphStepStatus;
  attempts: number;
  startedAt?: string;
  completedAt?: string;
  receiptId?: string;
  outputs?: JsonObject;
  error?: string;
}

/** The graph state the planner and transitions read and return. */
export interface SequentialState {
  graphId: string;
  status: GraphStatus;
  steps: StepState[];
}

/** Fires when one branch's numeric output field is above a bound. */
export interface ThresholdGate {
  step: string;
  field: string;
  above: number;
  action: GateAction;
}

/** Fires when the named branches disagree on an output field. */
export interface ConflictGate {
  field: string;
  steps: string[];
  action: GateAction;
}

/** A fan-out group's sync policy. */
export interface FanoutPolicy {
  groupId: string;
  strategy: SyncStrategy;
  minSuccess?: number;
  onBranchFailure: "halt" | "continue";
  thresholdGates?: ThresholdGate[];
  conflictGates?: ConflictGate[];
}

/** One branch's result, as the sync rules read it. */
export interface BranchResult {
  stepId: string;
  status: GraphStepStatus;
  outputs?: JsonObject;
}

/** The sync decision of one group: verdict, the rule that fired, why, and the tally. */
export interface SyncDecision {
  groupId: string;
  decision: SyncOutcome;
  strategy: SyncStrategy;
  ruleFired: string;
  reason: string;
  branchCount: number;
  successCount: number;
  failureCount: number;
  requiredSuccesses: number;
  gate?: JsonObject;
}

/** An event that moves the graph state. */
export type SequentialEvent =
  | { type: "start_step"; stepId: string; at: string }
  | {
      type: "step_succeeded";
      at: string;
      admissionWitness: { stepId: string; receiptId: string };
      outputs?: JsonObject;
    }
  | { type: "step_failed"; stepId: string; at: string; error: string }
  | { type: "step_skipped"; stepId: string; at: string }
  | { type: "complete" }
  | { type: "pause_graph"; reason: string }
  | { type: "escalate_graph"; reason: string }
  | { type: "fail_graph"; error: string };
