/** The console's run browser: filtered keyset listing and one run in detail. */
import { RuntimeError } from "../errors.js";
import { DEFAULT_GATE_POLICY } from "../policy/gate-resolution.js";
import { answerContract } from "../run/answer-contract.js";
import type { AnswerContract } from "../run/answer-contract.js";
import { readCheckpoint } from "../run/checkpoint.js";
import { outcomeIsOpen } from "../contracts/envelope.js";
import type { DetailedOutcome, RunRequest } from "../contracts/envelope.js";
import { admitResumeSync } from "../run/resume-admission.js";
import type { ApprovalDecisionRecord, ConsoleStore, RunFilter } from "../store/console-store.js";
import type { RunRecord, StateStore } from "../store/types.js";
import type { Operator } from "./operators.js";
import { roleAtLeast } from "./operators.js";
import { runTimeline } from "./timeline.js";
import type { RunTimeline } from "./timeline.js";
import type { ConsoleInputs } from "./validate.js";

/** One row of the run list. */
export interface RunSummary {
  id: string;
  skill: string;
  runner: string;
  status: RunRecord["status"];
  disposition: string | null;
  receiptId: string | null;
  packageDigest: string;
  executionClosureDigest: string | null;
  createdAt: string;
  updatedAt: string;
  /** What a paused run waits for. */
  waitingFor: "approval" | "agent" | null;
  /** What the run means: status, disposition and pending requests read together. */
  outcome: DetailedOutcome;
  /** Creation to seal for a finished run; null while it runs or waits. */
  durationMs: number | null;
}

/** One row of the run list: the summary and who started it in the console. */
export interface RunListItem extends RunSummary {
  /** The operator who started the run in the console; null when it started elsewhere (CLI, MCP). */
  initiator: string | null;
}

/** One page of the run list, newest first. */
export interface RunListPage {
  items: RunListItem[];
  /** Older runs; null on the last page. */
  nextCursor: string | null;
  /** Newer runs; null on the first page. */
  prevCursor: string | null;
  /** Runs matching the filters (all pages). */
  total: number;
  /** True when counting stopped at `total` and more runs match ("1,000+"). */
  totalCapped: boolean;
}

/** One authenticated decision as the console shows it. */
export interface DecisionView {
  id: string;
  gateId: string;
  username: string;
  decision: "approve" | "deny";
  reason: string;
  decidedAt: string;
  packageDigest: string;
  executionClosureDigest: string;
  /**
   * The pause decided (its `deferred` receipt); only decisions of a gate's current pause
   * count. Which decisions a release signed is in the continuation's receipts (their
   * authority term), not here.
   */
  pauseReceiptId: string;
}

/** A pending agent or input request and what its answer must look like. */
export type PendingRequestView = Exclude<RunRequest, { kind: "approval" }> & {
  contract: AnswerContract;
};

/** A run in detail. */
export interface RunDetail {
  run: RunSummary & {
    inputsDigest: string;
    initiator: string | null;
    /** Whether the initiator granted the run's adapter dispatches spawn authority. */
    spawnGranted: boolean;
  };
  /** Admitted inputs as the checkpoint holds them (already redacted); null when none is kept. */
  inputs: Record<string, unknown> | null;
  /** The sealed result (redacted at write). */
  result: unknown;
  error: unknown;
  steps: Array<{
    stepId: string;
    status: string;
    attempt: number;
    receiptId: string | null;
    output: unknown;
    startedAt: string | null;
    finishedAt: string | null;
  }>;
  /** Pending human gates (resolved only through approvals.decide). */
  pendingApprovals: Array<Extract<RunRequest, { kind: "approval" }>>;
  /**
   * Pending agent/input requests (answered through runs.answer, never approvals), each with
   * the contract its answer must satisfy (the console's view; the run envelope is unchanged).
   */
  pendingRequests: PendingRequestView[];
  receipts: Array<{
    receiptId: string;
    skill: string;
    disposition: string;
    createdAt: string;
    isChild: boolean;
  }>;
  decisions: DecisionView[];
}

const parse = (text: string | null): unknown =>
  text === null ? null : (JSON.parse(text) as unknown);

/** Projects a run row for the list. */
export function runSummary(run: RunRecord): RunSummary {
  // The store derived it when status, disposition or requests last changed (the list filters
  // by the same column, so a row's badge and the filter that finds it never disagree).
  const outcome = run.outcome;
  // The seal is the run's last write: its updated_at is when it finished.
  const sealedMs = Date.parse(run.updatedAt);
  return {
    id: run.id,
    skill: run.skillName,
    runner: run.runner,
    status: run.status,
    disposition: run.disposition,
    receiptId: run.receiptId,
    packageDigest: run.packageDigest,
    executionClosureDigest: run.executionClosureDigest,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    waitingFor:
      run.status === "needs_approval" ? "approval" : run.status === "needs_agent" ? "agent" : null,
    outcome,
    durationMs:
      outcomeIsOpen(outcome) || Number.isNaN(sealedMs)
        ? null
        : Math.max(0, sealedMs - run.createdMs),
  };
}

/** Projects a decision row. */
export function decisionView(row: ApprovalDecisionRecord): DecisionView {
  return {
    id: row.id,
    gateId: row.gateId,
    username: row.username,
    decision: row.decision,
    reason: row.reason,
    decidedAt: row.decidedAt,
    packageDigest: row.packageDigest,
    executionClosureDigest: row.executionClosureDigest,
    pauseReceiptId: row.pauseReceiptId,
  };
}

function millis(text: string | undefined, path: string): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new RuntimeError("INPUT_INVALID", `${path}: not a time`, { path });
  return ms;
}

/** Run browser services. */
export function runServices(deps: { state: () => StateStore; store: () => ConsoleStore }) {
  return {
    /**
     * Newest first, keyset pages both ways (opaque cursors), filtered, with the count of
     * matching runs. `waitingForMe` keeps the runs paused for something `operator` can still
     * do (an approval gate they may decide and have not, or an agent or input request); a
     * viewer can do neither, so nothing waits for them.
     */
    list(input: ConsoleInputs["runs-list"], operator?: Pick<Operator, "id" | "role">): RunListPage {
      let status = input.status;
      if (input.waitingForApproval === true) {
        if (status !== undefined && status !== "needs_approval") {
          throw new RuntimeError(
            "INPUT_INVALID",
            "status: contradicts waitingForApproval (which means status needs_approval)",
            { path: "status" },
          );
        }
        status = "needs_approval";
      }
      const fromMs = millis(input.from, "from");
      const toMs = millis(input.to, "to");
      let awaiting: RunFilter["awaiting"];
      if (input.waitingForMe === true) {
        if (operator === undefined) {
          throw new RuntimeError("INPUT_INVALID", "waitingForMe: needs a signed-in operator", {
            path: "waitingForMe",
          });
        }
        if (!roleAtLeast(operator.role, "approver")) {
          return { items: [], nextCursor: null, prevCursor: null, total: 0, totalCapped: false };
        }
        awaiting = {
          operatorId: operator.id,
          defaultForbidInitiator: DEFAULT_GATE_POLICY.forbidInitiator,
        };
      }
      const store = deps.store();
      const page = store.listRunsFiltered({
        limit: input.limit ?? 50,
        ...(input.cursor !== undefined ? { cursor: input.cursor } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(input.outcome !== undefined ? { outcome: input.outcome } : {}),
        ...(input.skill !== undefined ? { skillName: input.skill } : {}),
        ...(input.skillSearch !== undefined ? { skillSearch: input.skillSearch } : {}),
        ...(fromMs !== undefined ? { fromMs } : {}),
        ...(toMs !== undefined ? { toMs } : {}),
        ...(awaiting !== undefined ? { awaiting } : {}),
      });
      const initiators = new Map(
        store.listInitiators(page.runs.map((r) => r.id)).map((i) => [i.runId, i.username]),
      );
      return {
        items: page.runs.map((run) => ({
          ...runSummary(run),
          initiator: initiators.get(run.id) ?? null,
        })),
        nextCursor: page.nextCursor,
        prevCursor: page.prevCursor,
        total: page.total,
        totalCapped: page.totalCapped,
      };
    },

    /**
     * Runs changed at or after `since` (ISO time), oldest change first: the feed a live view
     * polls (whichever process wrote the change: API workers, the CLI, another host).
     */
    changedSince(since: string, limit = 500): RunSummary[] {
      return deps.store().listRunsUpdatedSince(since, limit).map(runSummary);
    },

    /**
     * Refuses answers the paused run would refuse on resume (not paused, unknown or approval
     * ids, an answer that breaks its request's contract), before any job is queued. Reads
     * only: a refused answer leaves the run exactly as it was.
     */
    checkAnswers(input: ConsoleInputs["runs-answer"]): void {
      admitResumeSync(deps.state(), input.runId, { answers: input.answers });
    },

    /**
     * The run's steps (planned ones not reached yet too) with times, attempts and receipts,
     * and its event history: who started it, step starts and ends, pauses, decisions, resumes
     * with who and why, the seal.
     */
    timeline(runId: string): RunTimeline {
      return runTimeline(deps.state(), deps.store(), runId);
    },

    /** One run: step timeline, redacted inputs/outputs, receipts, pending requests, decisions. */
    detail(runId: string): RunDetail {
      const state = deps.state();
      const run = state.getRun(runId);
      let inputs: Record<string, unknown> | null = null;
      if (state.getLedgerTail(runId) !== undefined) {
        try {
          inputs = readCheckpoint(state, runId).inputs;
        } catch {
          inputs = null; // no pause checkpoint: the run never paused
        }
      }
      const requests =
        run.status === "needs_agent" || run.status === "needs_approval"
          ? ((parse(run.requestsJson) as RunRequest[] | null) ?? [])
          : [];
      const initiator = deps.store().getInitiator(runId);
      return {
        run: {
          ...runSummary(run),
          inputsDigest: run.inputsDigest,
          initiator: initiator?.username ?? null,
          spawnGranted: initiator?.allowSpawn === true,
        },
        inputs,
        result: parse(run.resultJson),
        error: parse(run.errorJson),
        steps: state.listSteps(runId).map((s) => ({
          stepId: s.stepId,
          status: s.status,
          attempt: s.attempt,
          receiptId: s.receiptId,
          output: parse(s.outputJson),
          startedAt: s.startedAt,
          finishedAt: s.finishedAt,
        })),
        pendingApprovals: requests.filter(
          (r): r is Extract<RunRequest, { kind: "approval" }> => r.kind === "approval",
        ),
        pendingRequests: requests.flatMap((r): PendingRequestView[] => {
          const contract = answerContract(r);
          return r.kind === "approval" || contract === null ? [] : [{ ...r, contract }];
        }),
        receipts: deps
          .store()
          .listRunReceipts(runId)
          .map((r) => ({
            receiptId: r.receiptId,
            skill: r.skillName,
            disposition: r.disposition,
            createdAt: r.createdAt,
            isChild: r.isChild,
          })),
        decisions: deps.store().listDecisions(runId).map(decisionView),
      };
    },
  };
}

/** The run services' surface. */
export type RunServices = ReturnType<typeof runServices>;
