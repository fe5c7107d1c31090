/**
 * The lifecycle of one non-graph step: pending → admitted → running → succeeded | failed.
 * An event that does not fit the current status leaves the state unchanged; success needs
 * the admission witness (step id and receipt id) of the step it completes. Pure.
 */

/** Where a single step stands. */
export type SingleStepStatus = "pending" | "admitted" | "running" | "succeeded" | "failed";

/** The state of a single step. */
export interface SingleStepState {
  stepId: string;
  status: SingleStepStatus;
  startedAt?: string;
  completedAt?: string;
  error?: string;
}

/** What happened to the step. */
export type SingleStepEvent =
  | { type: "admit" }
  | { type: "start"; at: string }
  | { type: "succeed"; at: string; admissionWitness: { stepId: string; receiptId: string } }
  | { type: "fail"; at: string; error: string };

/** A fresh, pending step. */
export function createSingleStepState(stepId: string): SingleStepState {
  return { stepId, status: "pending" };
}

/** The state after `event`. */
export function transitionSingleStep(
  state: SingleStepState,
  event: SingleStepEvent,
): SingleStepState {
  switch (event.type) {
    case "admit":
      return state.status === "pending" ? { ...state, status: "admitted" } : state;
    case "start":
      return state.status === "admitted"
        ? { ...state, status: "running", startedAt: event.at }
        : state;
    case "succeed":
      // Success counts only with the admission witness of this step's receipt.
      return state.status === "running" &&
        event.admissionWitness.stepId === state.stepId &&
        event.admissionWitness.receiptId !== ""
        ? { ...state, status: "succeeded", completedAt: event.at }
        : state;
    case "fail":
      return state.status === "running"
        ? { ...state, status: "failed", completedAt: event.at, error: event.error }
        : state;
  }
}
