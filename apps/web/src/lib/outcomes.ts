/**
 * How the console shows a run's outcome: a word, an icon and a colour for each of the closed
 * set the API defines (run-outcome.schema.json), in the order the filter offers them.
 */
import type { RunSummary } from "./api-types";

/** One of the API's run outcomes. */
export type Outcome = RunSummary["outcome"];

/** The icon drawn beside an outcome's word (decoration: the word says it all). */
export type OutcomeIcon =
  | "check"
  | "play"
  | "pause"
  | "dots"
  | "question"
  | "lock"
  | "hand"
  | "cross"
  | "stop"
  | "clock"
  | "arrow";

/** What a person reads for one outcome. */
export interface OutcomeView {
  label: string;
  /** One sentence: what it means for the run. */
  description: string;
  icon: OutcomeIcon;
}

/** Every outcome (a missing one fails the type check). */
export const OUTCOME_VIEWS: Record<Outcome, OutcomeView> = {
  running: { label: "running", description: "The run is executing.", icon: "play" },
  paused_for_approval: {
    label: "paused for approval",
    description: "Waiting for an operator to approve or deny a gate.",
    icon: "pause",
  },
  paused_for_agent: {
    label: "paused for agent",
    description: "Waiting for an agent's answer.",
    icon: "dots",
  },
  paused_for_input: {
    label: "paused for input",
    description: "Waiting for answers to its questions.",
    icon: "question",
  },
  completed: {
    label: "completed",
    description: "Sealed with a closed receipt: the work is done.",
    icon: "check",
  },
  declined: {
    label: "declined",
    description: "An operator denied a gate; the gated work did not run.",
    icon: "hand",
  },
  blocked: {
    label: "blocked",
    description: "Refused by policy, admission or a failed precondition.",
    icon: "lock",
  },
  failed: { label: "failed", description: "The work failed.", icon: "cross" },
  killed: {
    label: "cancelled",
    description: "Cancelled or interrupted: its process was stopped.",
    icon: "stop",
  },
  timed_out: { label: "timed out", description: "It exceeded its time limit.", icon: "clock" },
  superseded: { label: "superseded", description: "A later run replaced it.", icon: "arrow" },
};

/** The outcome filter's groups, in the order it lists them. */
export const OUTCOME_GROUPS: ReadonlyArray<{ label: string; outcomes: readonly Outcome[] }> = [
  { label: "Waiting", outcomes: ["paused_for_approval", "paused_for_agent", "paused_for_input"] },
  { label: "In progress", outcomes: ["running"] },
  {
    label: "Finished",
    outcomes: ["completed", "declined", "blocked", "failed", "killed", "timed_out", "superseded"],
  },
];

/** Whether `value` names an outcome (URL parameters are checked before they reach the API). */
export function isOutcome(value: string | undefined): value is Outcome {
  return value !== undefined && Object.hasOwn(OUTCOME_VIEWS, value);
}

/** The view of an outcome, or a plain one naming a value this console does not know. */
export function outcomeView(outcome: string): OutcomeView {
  return isOutcome(outcome)
    ? OUTCOME_VIEWS[outcome]
    : {
        label: outcome.replaceAll("_", " "),
        description: "An outcome this console does not know.",
        icon: "question",
      };
}

/** A run's duration, short ("850 ms", "4.2 s", "3 min 5 s", "2 h 10 min"), or "—". */
export function durationText(ms: number | null): string {
  if (ms === null || !Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;
  return `${Math.floor(ms / 3_600_000)} h ${Math.floor((ms % 3_600_000) / 60_000)} min`;
}

/** "1 run", "1,234 runs", "1,000+ runs" (a capped count says so). */
export function runCount(total: number, capped: boolean): string {
  const n = total.toLocaleString("en-US");
  return `${n}${capped ? "+" : ""} ${total === 1 && !capped ? "run" : "runs"}`;
}
