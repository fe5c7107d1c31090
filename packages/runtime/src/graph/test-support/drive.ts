/**
 * Test driver for the graph machine: plays the runner's part with a scripted executor, the way
 * the graph runner will (plan → execute → record, until a pause or the end).
 */
import type { JsonObject, JsonValue } from "../../parser/json.js";
import { normalizeGraph } from "../document.js";
import type { GraphDoc } from "../document.js";
import { approvalDecisionPacket } from "../actions.js";
import { applyStepOutcome, nextActions } from "../machine.js";
import type { ExecuteStepAction, GraphAction, GraphState, StepOutcome } from "../machine.js";

/** Decides the outcome of one planned execution. */
export type Executor = (action: ExecuteStepAction, state: GraphState) => StepOutcome;

/** The result of driving a run until it stops executing. */
export interface Driven {
  state: GraphState;
  /** The actions that stopped the drive (a pause, complete or fail). */
  stop: GraphAction;
  /** `stepId#attempt` of every execution, in order. */
  executed: string[];
}

/** Runs planned executions through `execute` until the machine pauses or ends. */
export function drive(doc: GraphDoc, start: GraphState, execute: Executor): Driven {
  let state = start;
  const executed: string[] = [];
  for (let round = 0; round < 200; round++) {
    const actions = nextActions(doc, state);
    const runs = actions.filter((a): a is ExecuteStepAction => a.kind === "execute_step");
    if (runs.length === 0) {
      const stop = actions[0];
      if (stop === undefined) throw new Error("nextActions returned nothing");
      return { state, stop, executed };
    }
    for (const action of runs) {
      executed.push(`${action.stepId}#${action.attempt}`);
      state = applyStepOutcome(doc, state, action.stepId, execute(action, state));
    }
  }
  throw new Error("graph did not stop within 200 rounds");
}

/** Succeeds every step with its resolved inputs as output (an "echo" runner). */
export const echo: Executor = (action) => ({
  status: "success",
  output: action.resolvedInputs,
  receiptId: `rx_${action.stepId}_${action.attempt}`,
});

/** Wraps outputs the way `artifacts.wrap_as: <name>` envelopes do (`<name>.data.<field>`). */
export function wrapped(name: string, data: JsonObject): JsonObject {
  return { [name]: { data } };
}

/**
 * A scripted executor: per step id, a function of the action; unlisted steps echo. Approval
 * steps answer from the recorded decision (approved → decision packet, denied → declined).
 */
export function script(
  table: Record<string, (action: ExecuteStepAction) => StepOutcome>,
): Executor {
  return (action, state) => {
    if (action.approval !== undefined) {
      const packet = approvalDecisionPacket(action);
      return action.approval.approved
        ? { status: "success", output: { approval_decision: { data: packet } } }
        : { status: "declined", reason: "denied by a human" };
    }
    return (table[action.stepId] ?? ((a) => echo(a, state)))(action);
  };
}

/** Normalizes an inline graph literal (tests write graphs as plain objects). */
export function graph(value: JsonValue): GraphDoc {
  return normalizeGraph(value);
}

/** The step statuses as `id:status`, in order. */
export function statuses(state: GraphState): string[] {
  return state.steps.map((s) => `${s.stepId}:${s.status}`);
}
