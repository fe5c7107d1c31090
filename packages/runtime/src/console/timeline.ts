/**
 * A run's timeline for the console: every step (those not reached yet too, from the plan the
 * `run_started` ledger line recorded) with its times, attempts, status and receipt, and the
 * event history (start, step starts and ends, pauses with what they wait for, decisions,
 * resumes with who and why, the seal). `buildTimeline` is pure over what the state store
 * holds; `runTimeline` reads those facts.
 */
import type { RunRequest } from "../contracts/envelope.js";
import type { Checkpoint } from "../run/checkpoint.js";
import type { RunEntryPoint } from "../run/origin.js";
import type { ApprovalDecisionRecord, ConsoleStore } from "../store/console-store.js";
import type { LedgerEntryRecord, RunRecord, StateStore, StepRecord } from "../store/types.js";

/** Where a step stands on the timeline. */
export type TimelineStepStatus =
  /** Not started yet (a planned step the run has not reached). */
  | "pending"
  /** Started and not finished while the run runs. */
  | "running"
  /** The run is paused on this step (an approval, an agent's or a person's answer). */
  | "waiting"
  /** Planned but never run: the run ended before reaching it. */
  | "not_run"
  /** Finished: the step receipt's disposition (closed, failed, blocked, declined …). */
  | (string & {});

/** One step of the run. */
export interface TimelineStep {
  /** The step's key (`spend/quote` for a step of a nested graph). */
  stepId: string;
  label: string | null;
  /** `tool`, `skill`, an inline source's type (`approval` …), or a runner's type; null if unknown. */
  kind: string | null;
  status: TimelineStepStatus;
  /** Executions of the step so far (a pause does not end one). */
  attempts: number;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  /** The step's latest receipt. */
  receiptId: string | null;
  /** Whether the plan recorded at the start lists the step (false for nested-graph steps). */
  planned: boolean;
}

/** What a pause waits for. */
export interface TimelineRequest {
  requestId: string;
  kind: RunRequest["kind"];
  /** The approval gate (approval requests). */
  gateId: string | null;
  /** Why the gate asks (approval requests). */
  gateReason: string | null;
}

/** The kinds of event in a run's history. */
export type TimelineEventKind =
  | "run_started"
  | "step_started"
  | "step_finished"
  | "paused"
  | "decision"
  | "resumed"
  | "resume_refused"
  | "sealed"
  | "failed";

/** One event of the history; fields that do not apply to its kind are null or empty. */
export interface TimelineEvent {
  /** 1-based position in the history. */
  seq: number;
  kind: TimelineEventKind;
  at: string;
  stepId: string | null;
  attempt: number | null;
  /** A finished step's or the seal's disposition; a refused resume's error code. */
  status: string | null;
  /** The entry point of a start or resume. */
  via: RunEntryPoint | null;
  /** Who started, decided or resumed (null where the entry point knows no person). */
  actor: string | null;
  /** The reason given: an approval decision's, the decisions a resume carried, an answer's note. */
  reason: string | null;
  receiptId: string | null;
  /** A pause: what it waits for. */
  requests: TimelineRequest[];
  /** A decision: approve or deny, and its gate. */
  decision: "approve" | "deny" | null;
  gateId: string | null;
  /** A resume: the requests it answered. */
  answered: string[];
}

/** The run's steps and event history. */
export interface RunTimeline {
  runId: string;
  /** False for runs recorded before plans were: only the steps that ran are listed. */
  planRecorded: boolean;
  steps: TimelineStep[];
  events: TimelineEvent[];
}

/** What the timeline is built from (all of it as the state store holds it). */
export interface TimelineFacts {
  run: RunRecord;
  steps: StepRecord[];
  ledger: LedgerEntryRecord[];
  decisions: ApprovalDecisionRecord[];
  /** The console operator who started the run, when one did. */
  initiator: string | null;
}

/** A ledger line's event, as `appendRunEvent` (run/ledger.ts) writes it. */
interface LedgerEvent {
  kind: string;
  status: string;
  stepId: string | null;
  detail: Record<string, unknown>;
  at: string;
  receiptId: string | null;
}

function ledgerEvent(record: LedgerEntryRecord): LedgerEvent {
  const line = record.entry as {
    entry?: {
      data?: { detail?: unknown };
      meta?: { created_at?: unknown; receipt_id?: unknown };
    };
  };
  const detail = line.entry?.data?.detail;
  const meta = line.entry?.meta;
  return {
    kind: record.kind,
    status: record.status,
    stepId: record.stepId,
    detail:
      detail !== null && typeof detail === "object" && !Array.isArray(detail)
        ? (detail as Record<string, unknown>)
        : {},
    at: typeof meta?.created_at === "string" ? meta.created_at : record.createdAt,
    receiptId: typeof meta?.receipt_id === "string" ? meta.receipt_id : null,
  };
}

const text = (value: unknown): string | null => (typeof value === "string" ? value : null);
const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

function origin(detail: Record<string, unknown>): {
  via: RunEntryPoint | null;
  actor: string | null;
  reason: string | null;
} {
  const o = detail.origin as Record<string, unknown> | undefined;
  return {
    via: (text(o?.via) as RunEntryPoint | null) ?? null,
    actor: text(o?.actor),
    reason: text(o?.reason),
  };
}

function requestsOf(checkpoint: Checkpoint | undefined): TimelineRequest[] {
  return (checkpoint?.requests ?? []).map((r) => ({
    requestId: r.id,
    kind: r.kind,
    gateId: r.kind === "approval" ? r.gate.id : null,
    gateReason: r.kind === "approval" ? r.gate.reason : null,
  }));
}

const blank = {
  stepId: null,
  attempt: null,
  status: null,
  via: null,
  actor: null,
  reason: null,
  receiptId: null,
  requests: [],
  decision: null,
  gateId: null,
  answered: [],
} satisfies Omit<TimelineEvent, "seq" | "kind" | "at">;

type Draft = Omit<TimelineEvent, "seq">;

/** The history: ledger lines in chain order, each pause followed by the decisions made on it. */
function buildEvents(facts: TimelineFacts, events: LedgerEvent[]): TimelineEvent[] {
  const { run, decisions, initiator } = facts;
  const out: Draft[] = [];
  const byPause = new Map<string, ApprovalDecisionRecord[]>();
  for (const d of [...decisions].sort((a, b) => a.decidedAt.localeCompare(b.decidedAt))) {
    byPause.set(d.pauseReceiptId, [...(byPause.get(d.pauseReceiptId) ?? []), d]);
  }
  const decisionEvent = (d: ApprovalDecisionRecord): Draft => ({
    ...blank,
    kind: "decision",
    at: d.decidedAt,
    actor: d.username,
    reason: d.reason,
    decision: d.decision,
    gateId: d.gateId,
    receiptId: d.pauseReceiptId,
  });
  if (!events.some((e) => e.kind === "run_started")) {
    // A run recorded before starts were: its row and initiator say when and by whom.
    out.push({
      ...blank,
      kind: "run_started",
      at: run.createdAt,
      via: initiator !== null ? "console" : null,
      actor: initiator,
    });
  }
  for (const e of events) {
    const attempt = num(e.detail.attempt);
    switch (e.kind) {
      case "run_started": {
        const o = origin(e.detail);
        out.push({ ...blank, kind: "run_started", at: e.at, ...o, actor: o.actor ?? initiator });
        break;
      }
      case "step_started":
        out.push({ ...blank, kind: "step_started", at: e.at, stepId: e.stepId, attempt });
        break;
      case "step_finished":
        out.push({
          ...blank,
          kind: "step_finished",
          at: e.at,
          stepId: e.stepId,
          attempt,
          status: e.status,
          receiptId: e.receiptId,
        });
        break;
      case "resolution_requested": {
        out.push({
          ...blank,
          kind: "paused",
          at: e.at,
          receiptId: e.receiptId,
          requests: requestsOf(e.detail.checkpoint as Checkpoint | undefined),
        });
        const decided = e.receiptId === null ? undefined : byPause.get(e.receiptId);
        if (decided !== undefined && e.receiptId !== null) {
          out.push(...decided.map(decisionEvent));
          byPause.delete(e.receiptId);
        }
        break;
      }
      case "resumed": {
        const answered = Array.isArray(e.detail.answered)
          ? e.detail.answered.filter((a): a is string => typeof a === "string")
          : [];
        out.push({ ...blank, kind: "resumed", at: e.at, ...origin(e.detail), answered });
        break;
      }
      case "resume_refused":
        out.push({ ...blank, kind: "resume_refused", at: e.at, status: text(e.detail.code) });
        break;
      case "sealed":
        out.push({
          ...blank,
          kind: "sealed",
          at: e.at,
          status: e.status,
          receiptId: e.receiptId,
        });
        break;
      default:
        break; // a line this view does not show (another writer's kind)
    }
  }
  // Decisions on no pause the ledger holds (a pause written elsewhere), in time order.
  for (const rest of byPause.values()) out.push(...rest.map(decisionEvent));
  if (run.status === "failure" && !events.some((e) => e.kind === "sealed")) {
    out.push({
      ...blank,
      kind: "failed",
      at: run.updatedAt,
      status: run.disposition,
      receiptId: run.receiptId,
    });
  }
  return out.map((e, i) => ({ seq: i + 1, ...e }));
}

interface PlanEntry {
  stepId: string;
  label: string | null;
  kind: string | null;
}

function planOf(events: LedgerEvent[]): PlanEntry[] | null {
  const started = events.find((e) => e.kind === "run_started");
  const plan = started?.detail.plan;
  if (!Array.isArray(plan)) return null;
  return plan.flatMap((p: Record<string, unknown>): PlanEntry[] =>
    typeof p.step_id === "string"
      ? [{ stepId: p.step_id, label: text(p.label), kind: text(p.kind) }]
      : [],
  );
}

/** The graph state of the latest pause, when the run is paused now. */
function pausedGraph(
  run: RunRecord,
  events: LedgerEvent[],
): { steps: Array<{ stepId: string; status: string }> } | null {
  if (run.status !== "needs_agent" && run.status !== "needs_approval") return null;
  const pause = events.filter((e) => e.kind === "resolution_requested").pop();
  const state = (pause?.detail.checkpoint as Checkpoint | undefined)?.graph_state as
    { steps?: Array<{ stepId: string; status: string }> } | undefined;
  return Array.isArray(state?.steps) ? { steps: state.steps } : null;
}

function durationOf(startedAt: string | null, finishedAt: string | null): number | null {
  if (startedAt === null || finishedAt === null) return null;
  const ms = Date.parse(finishedAt) - Date.parse(startedAt);
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/** The steps: the plan's order (nested-graph steps after the step running them), then the rest. */
function buildSteps(facts: TimelineFacts, events: LedgerEvent[], plan: PlanEntry[] | null) {
  const { run } = facts;
  const rows = new Map(facts.steps.map((s) => [s.stepId, s]));
  const starts = new Map<string, { at: string; attempt: number }>();
  const maxAttempt = new Map<string, number>();
  for (const e of events) {
    if ((e.kind !== "step_started" && e.kind !== "step_finished") || e.stepId === null) continue;
    const attempt = num(e.detail.attempt) ?? 1;
    maxAttempt.set(e.stepId, Math.max(maxAttempt.get(e.stepId) ?? 0, attempt));
    if (e.kind === "step_started") starts.set(e.stepId, { at: e.at, attempt });
  }
  const graph = pausedGraph(run, events);
  // The step a paused graph waits on: one its state marks paused, else (an approval step,
  // which the planner pauses on before it runs) the first step not settled.
  const waiting = new Set<string>();
  if (graph !== null) {
    for (const s of graph.steps) if (s.status === "paused") waiting.add(s.stepId);
    const first = graph.steps.find((s) => s.status === "pending");
    if (waiting.size === 0 && first !== undefined) waiting.add(first.stepId);
  }
  const open =
    run.status === "running" || run.status === "needs_agent" || run.status === "needs_approval";
  // A paused run that is not a graph (one step) waits on its step.
  if (open && run.status !== "running" && graph === null) {
    for (const entry of plan ?? []) waiting.add(entry.stepId);
  }
  const ids: Array<{ stepId: string; entry: PlanEntry | null }> = [];
  const seen = new Set<string>();
  const add = (stepId: string, entry: PlanEntry | null): void => {
    if (seen.has(stepId)) return;
    seen.add(stepId);
    ids.push({ stepId, entry });
    // A nested graph's steps (`<id>/<child>`) sit under the step that runs them.
    for (const key of [...rows.keys(), ...starts.keys()]) {
      if (key.startsWith(`${stepId}/`) && !key.slice(stepId.length + 1).includes("/")) {
        add(key, null);
      }
    }
  };
  for (const entry of plan ?? []) add(entry.stepId, entry);
  for (const key of [...rows.keys(), ...starts.keys()]) add(key, null);
  return ids.map(({ stepId, entry }): TimelineStep => {
    const row = rows.get(stepId);
    const started = starts.get(stepId);
    // A step started again after its row last sealed (a nested graph's step resumed after its
    // deferred pause) is running again, whatever its row still says.
    const again =
      started !== undefined &&
      row?.finishedAt !== undefined &&
      row.finishedAt !== null &&
      Date.parse(started.at) > Date.parse(row.finishedAt) &&
      run.status === "running";
    const finished =
      row !== undefined && row.status !== "running" && row.receiptId !== null && !again;
    const finishedAt = finished ? (row.finishedAt ?? null) : null;
    const startedAt = (again ? started?.at : row?.startedAt) ?? started?.at ?? null;
    let status: TimelineStepStatus;
    if (waiting.has(stepId)) status = "waiting";
    else if (finished) status = row.status;
    else if (row?.status === "running" || started !== undefined) {
      status = open ? "running" : "not_run";
    } else status = open ? "pending" : "not_run";
    return {
      stepId,
      label: entry?.label ?? null,
      kind: entry?.kind ?? null,
      status,
      attempts: Math.max(row?.attempt ?? 0, maxAttempt.get(stepId) ?? 0),
      startedAt,
      finishedAt,
      durationMs: durationOf(startedAt, finishedAt),
      receiptId: row?.receiptId ?? null,
      planned: entry !== null,
    };
  });
}

/** Builds a run's timeline from the facts the state store holds. Pure. */
export function buildTimeline(facts: TimelineFacts): RunTimeline {
  const events = facts.ledger.map(ledgerEvent);
  const plan = planOf(events);
  return {
    runId: facts.run.id,
    planRecorded: plan !== null,
    steps: buildSteps(facts, events, plan),
    events: buildEvents(facts, events),
  };
}

/** Reads a run's timeline facts from the stores and builds it (RUN_NOT_FOUND when unknown). */
export function runTimeline(state: StateStore, store: ConsoleStore, runId: string): RunTimeline {
  const run = state.getRun(runId);
  return buildTimeline({
    run,
    steps: state.listSteps(runId),
    ledger: state.readLedger(runId),
    decisions: store.listDecisions(runId),
    initiator: store.getInitiator(runId)?.username ?? null,
  });
}
