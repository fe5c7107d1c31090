/**
 * Graph runs: drive the pure graph machine, executing planned steps (each sealing a child
 * receipt), pausing durably for agents and humans, and sealing the graph receipt whose
 * lineage commits every child by id and body digest.
 */
import { RuntimeError, isRuntimeError } from "../errors.js";
import {
  applyStepOutcome,
  assertRetryAdmissible,
  bindStepContracts,
  contractFromRunner,
  createGraphState,
  effectiveRetry,
  graphFromRunner,
  nextActions,
  resumeGraph,
  validateResultProducers,
} from "../graph/index.js";
import type {
  FanoutSyncRecord,
  GraphDoc,
  GraphState,
  GraphStep,
  StepContract,
} from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import type { GraphRunner } from "../parser/runner-types.js";
import { buildGraphReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Receipt, Reference, SyncPoint } from "../receipts/index.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { ResumeAnswers } from "./answers.js";
import type { Checkpoint } from "./checkpoint.js";
import {
  createRunRecord,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
} from "./context.js";
import type { RunScope, RunSkillDeps } from "./context.js";
import { makeEnvelope } from "./envelope.js";
import type { GraphTrace, GraphTraceStep, RunRequest, SkillRunEnvelope } from "./envelope.js";
import { executeGraphStep, loadNestedPackage } from "./graph-steps.js";
import { appendRunEvent } from "./ledger.js";
import { pauseRun } from "./pause.js";
import type { StepStart } from "./single-step.js";
import { runtimeToolCatalog, runToolRoots } from "./tools.js";

/** The graph document of the run's runner, with step contracts bound and checked. */
export async function prepareGraph(scope: RunScope, catalog: ToolCatalog): Promise<GraphDoc> {
  const runner = scope.prep.runner as GraphRunner;
  return boundGraph(scope.deps, scope.prep.pkg, runner, catalog, []);
}

function isMissingBranch(step: { fanout_group?: string }, error: unknown): boolean {
  return (
    step.fanout_group !== undefined && isRuntimeError(error) && error.code === "PACKAGE_NOT_FOUND"
  );
}

/** How deep nested graph runners are followed for their output contracts. */
const MAX_NESTED_GRAPH_DEPTH = 16;

/**
 * A graph runner's document with every step's contract bound, its result producers and retry
 * admission checked. A step running a nested graph runner has that graph's contract: the keys
 * its own result producers emit (resolved the same way, recursively), so preparation rejects
 * a missing contract anywhere below before any step runs.
 */
export async function boundGraph(
  deps: RunSkillDeps,
  pkg: { packageDir: string; graphDocumentPath?: string },
  runner: GraphRunner,
  catalog: ToolCatalog,
  /** `<package dir>#<runner>` of the graphs being prepared above this one. */
  path: readonly string[],
): Promise<GraphDoc> {
  const raw = graphFromRunner(runner);
  const here = [...path, `${pkg.graphDocumentPath ?? pkg.packageDir}#${runner.name}`];
  // Nested skills are resolved first so their runners' output contracts bind to the steps.
  const nested = new Map<string, StepContract>();
  const adapterSteps = raw.steps.filter((s) => s.kind === "run" && s.run.type === "adapter");
  for (const step of raw.steps) {
    if (step.kind !== "skill") continue;
    let child: Awaited<ReturnType<typeof loadNestedPackage>>;
    try {
      child = await loadNestedPackage(deps, pkg, step);
    } catch (error) {
      // A fanout branch naming a package that does not exist fails as a branch when it runs
      // (its group's failure rule decides the graph), not as a refusal of the whole graph;
      // containment refusals and every other step still refuse before anything runs.
      if (isMissingBranch(step, error)) continue;
      throw error;
    }
    if (child.runner.type === "adapter") adapterSteps.push(step);
    const contract = contractFromRunner(child.runner);
    const key = `${child.pkg.graphDocumentPath ?? child.pkg.packageDir}#${child.runner.name}`;
    if (
      child.runner.type === "graph" &&
      contract.outputs === undefined &&
      !here.includes(key) &&
      here.length < MAX_NESTED_GRAPH_DEPTH
    ) {
      const inner = await boundGraph(deps, child.pkg, child.runner, catalog, here);
      const keys = Object.values(validateResultProducers(inner)).flat();
      if (!inner.result_from_defaulted || keys.length > 0) contract.outputs = keys;
    }
    nested.set(step.id, contract);
  }
  const doc = bindStepContracts(raw, (step): StepContract | undefined => {
    if (step.kind === "tool") {
      const tool = catalog.get(step.tool);
      if (tool === undefined) {
        throw new RuntimeError(
          "TOOL_NOT_FOUND",
          `step ${step.id} calls native tool ${step.tool}, which this runtime does not provide (see runx tool list)`,
          { step: step.id, tool: step.tool },
        );
      }
      const props = tool.outputSchema.properties;
      const outputs =
        props !== null && typeof props === "object" && !Array.isArray(props)
          ? Object.keys(props)
          : [];
      return {
        outputs,
        mutating: tool.mutating,
        tool_output: true,
        ...(tool.idempotencyKey !== undefined ? { idempotency_key: tool.idempotencyKey } : {}),
      };
    }
    if (step.kind === "skill") return nested.get(step.id);
    if (step.run.type !== "approval") {
      const outputs = step.run.outputs;
      return outputs !== undefined &&
        outputs !== null &&
        typeof outputs === "object" &&
        !Array.isArray(outputs)
        ? contractFromRunner({ outputs: outputs as never })
        : undefined;
    }
    return undefined;
  });
  validateResultProducers(doc);
  assertRetryAdmissible(doc);
  // A dispatch is one attempt: a retry is a new packet with its own approval, never automatic.
  for (const step of adapterSteps) {
    const declared = doc.steps.find((s) => s.id === step.id);
    if (declared !== undefined && effectiveRetry(declared).max_attempts > 1) {
      throw new RuntimeError(
        "RETRY_REFUSED",
        `step ${step.id} hands work to an adapter; a dispatch is never retried automatically (a retry is a new packet with its own approval)`,
        { step_id: step.id },
      );
    }
  }
  return doc;
}

/** Starts a graph run. */
export async function runGraph(
  scope: RunScope,
  inputs: JsonObject,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const catalog = runtimeToolCatalog(runToolRoots(scope));
  const doc = await prepareGraph(scope, catalog);
  const state = createGraphState(doc, inputs, { graphId: scope.prep.runId });
  const { deps, prep } = scope;
  deps.state().transaction(() => {
    if (!start.runExists) {
      createRunRecord(deps, prep, hashCanonical(scope.taint.redactJson(inputs)));
    } else deps.state().updateRun(prep.runId, { status: "running" });
  });
  return driveGraph(scope, doc, catalog, state, start.previous);
}

export function toSyncPoint(record: FanoutSyncRecord): SyncPoint {
  return {
    group_id: record.group_id,
    strategy: record.strategy === "any" || record.strategy === "all" ? record.strategy : "quorum",
    decision:
      record.decision === "proceed" || record.decision === "pause" || record.decision === "escalate"
        ? record.decision
        : "halt",
    rule_fired: record.rule_fired,
    reason: record.reason,
    branch_count: record.branch_count,
    success_count: record.success_count,
    failure_count: record.failure_count,
    required_successes: record.required_successes,
    branch_receipts: record.branch_receipts.flatMap((b) =>
      b.receipt_id !== undefined ? [`runx:receipt:${b.receipt_id}`] : [],
    ),
    ...(record.gate !== undefined ? { gate: record.gate } : {}),
  };
}

/**
 * A step that failed because it was refused (its receipt is `blocked`: no grant, a denied
 * scope, a containment refusal) makes the graph `blocked` rather than `failed`.
 */
function blockedIfRefused(
  stop: { code: string; disposition: string; reason: string; stepId?: string },
  state: GraphState,
  children: readonly Receipt[],
): { code: string; disposition: string; reason: string } {
  if (stop.disposition !== "failed" || stop.stepId === undefined) return stop;
  const receiptId = state.steps.find((s) => s.stepId === stop.stepId)?.receiptId;
  const receipt = children.find((r) => r.id === receiptId);
  return receipt?.seal.disposition === "blocked" ? { ...stop, disposition: "blocked" } : stop;
}

async function childReceipts(
  scope: RunScope,
  state: GraphState,
  fresh: Map<string, Receipt>,
): Promise<Receipt[]> {
  const out: Receipt[] = [];
  for (const step of state.steps) {
    if (step.receiptId === undefined) continue;
    out.push(fresh.get(step.receiptId) ?? (await scope.deps.receipts().read(step.receiptId)));
  }
  return out;
}

/** Where a graph's driving stopped: a pause, its result, a terminal failure or an interrupt. */
export type GraphStop =
  | { kind: "pause"; requests: RunRequest[] }
  | { kind: "complete"; result: JsonObject }
  | { kind: "fail"; failure: { code: string; disposition: string; reason: string } }
  | { kind: "killed" };

/**
 * Drives the graph machine until it stops, executing every planned step (each seals its
 * child receipt). Touches no run record: the caller pauses or seals (a root graph, or a
 * nested graph sealing the step that runs it).
 */
export async function advanceGraph(
  scope: RunScope,
  doc: GraphDoc,
  catalog: ToolCatalog,
  initial: GraphState,
  answers: Record<string, unknown>,
): Promise<{
  state: GraphState;
  children: Receipt[];
  stop: GraphStop;
  gateInputs: Record<string, unknown>;
}> {
  let state = initial;
  const fresh = new Map<string, Receipt>();
  const gateInputs: Record<string, unknown> = {};
  for (let round = 0; round < 10_000; round++) {
    const actions = nextActions(doc, state);
    const runs = actions.filter((a) => a.kind === "execute_step");
    if (runs.length === 0) {
      const stop = actions[0];
      if (stop === undefined || stop.kind === "execute_step") {
        throw new RuntimeError("INTERNAL", "the graph planner returned nothing to do");
      }
      const children = await childReceipts(scope, state, fresh);
      return {
        state,
        children,
        stop:
          stop.kind === "fail"
            ? { kind: "fail", failure: blockedIfRefused(stop, state, children) }
            : stop,
        gateInputs,
      };
    }
    for (const action of runs) {
      if (scope.signal.aborted) {
        return {
          state,
          children: await childReceipts(scope, state, fresh),
          stop: { kind: "killed" },
          gateInputs,
        };
      }
      const {
        outcome,
        receipt,
        gateInputs: proposed,
      } = await executeGraphStep(
        scope,
        doc,
        catalog,
        action,
        state.approvals,
        answers,
        state.steps.find((s) => s.stepId === action.stepId)?.subgraph,
      );
      if (receipt !== undefined) fresh.set(receipt.id, receipt);
      if (proposed !== undefined) Object.assign(gateInputs, proposed);
      state = applyStepOutcome(doc, state, action.stepId, outcome);
    }
  }
  throw new RuntimeError("INTERNAL", "the graph did not settle within 10000 rounds");
}

async function driveGraph(
  scope: RunScope,
  doc: GraphDoc,
  catalog: ToolCatalog,
  initial: GraphState,
  previous: Reference | undefined,
  answers: Record<string, unknown> = {},
): Promise<SkillRunEnvelope> {
  const { state, children, stop, gateInputs } = await advanceGraph(
    scope,
    doc,
    catalog,
    initial,
    answers,
  );
  if (stop.kind === "pause") {
    return pauseRun(scope, {
      kind: "graph",
      requests: stop.requests,
      inputs: state.inputs,
      reasonCode: pauseReasonCode(stop.requests),
      summary: `waiting for ${stop.requests.map((r) => r.id).join(", ")}`,
      runExists: true,
      graphState: state,
      childReceipts: children,
      ...(Object.keys(gateInputs).length > 0 ? { gateInputs } : {}),
      ...(previous !== undefined ? { previous } : {}),
    });
  }
  return sealGraph(
    scope,
    doc,
    state,
    children,
    previous,
    stop.kind === "complete"
      ? { result: stop.result }
      : stop.kind === "fail"
        ? { failure: stop.failure }
        : {
            failure: { code: "STEP_FAILED", disposition: "failed", reason: "interrupted" },
            killed: true,
          },
  );
}

/** The seal reason of a pause: only human approvals, or agent work too. */
export function pauseReasonCode(requests: readonly RunRequest[]): string {
  return requests.every((r) => r.kind === "approval") ? "approval_required" : "agent_required";
}

async function sealGraph(
  scope: RunScope,
  doc: GraphDoc,
  state: GraphState,
  children: Receipt[],
  previous: Reference | undefined,
  end:
    | { result: JsonObject }
    | { failure: { code: string; disposition: string; reason: string }; killed?: boolean },
): Promise<SkillRunEnvelope> {
  const { deps, prep, taint } = scope;
  const result = "result" in end ? (taint.redactJson(end.result) as JsonObject) : null;
  const disposition =
    "result" in end
      ? "closed"
      : end.killed === true
        ? "killed"
        : (end.failure.disposition as "failed" | "blocked" | "declined");
  const reasonCode = "result" in end ? "graph_closed" : end.failure.code.toLowerCase();
  const summary =
    "result" in end ? `graph ${doc.name} completed` : taint.redactText(end.failure.reason);
  const receipt = sealReceipt(
    buildGraphReceipt({
      ...(() => {
        const facts = profiled(deps, {
          name: doc.name,
          createdAt: receiptTimestamp(deps.now()),
          idempotency: idempotencyFor(prep, hashCanonical({ result }), undefined, previous),
          metadata: {
            ...runMetadata(deps, prep),
            steps: state.steps.map((s) => ({
              step_id: s.stepId,
              status: s.status,
              receipt_id: s.receiptId ?? null,
            })),
          },
        });
        return {
          name: facts.name,
          createdAt: facts.createdAt,
          ...(facts.idempotency !== undefined ? { idempotency: facts.idempotency } : {}),
          ...(facts.metadata !== undefined ? { metadata: facts.metadata } : {}),
          ...(facts.authorityTerms !== undefined ? { authorityTerms: facts.authorityTerms } : {}),
        };
      })(),
      children,
      disposition,
      reasonCode,
      sealSummary: summary,
      lineage: {
        ...(previous !== undefined ? { previous, resume_ref: previous } : {}),
        sync: state.sync.map(toSyncPoint),
      },
    }),
    deps.signer(),
  );
  await storeReceipt(deps, prep, receipt, () => {
    appendRunEvent(deps.state(), prep.runId, {
      kind: "sealed",
      status: disposition,
      detail: { reason_code: reasonCode },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt: receipt.created_at,
      receiptId: receipt.id,
    });
    deps.state().updateRun(prep.runId, {
      status: "sealed",
      disposition,
      receiptId: receipt.id,
      resultJson: result === null ? null : JSON.stringify(result),
      requestsJson: null,
      ...(result === null ? { errorJson: JSON.stringify({ summary }) } : {}),
    });
  });
  return makeEnvelope({
    status: "sealed",
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    runId: prep.runId,
    receiptId: receipt.id,
    closure: { disposition, reason_code: reasonCode, summary },
    result,
    trace: graphTrace(doc, state, disposition),
  });
}

/** What a step ran, as the trace names it. */
function traceSkill(step: GraphStep): string {
  if (step.kind === "skill") return step.skill;
  if (step.kind === "tool") return `tool:${step.tool}`;
  return `run:${step.run.type}`;
}

/**
 * The compact trace of a sealed graph: its name, how it ended, and each executed step by
 * reference (its receipt), never its payload: outputs stay in the state and receipt stores.
 */
export function graphTrace(doc: GraphDoc, state: GraphState, disposition: string): GraphTrace {
  const status =
    disposition === "closed"
      ? "succeeded"
      : disposition === "blocked" || disposition === "deferred"
        ? disposition
        : "failed";
  const steps: GraphTraceStep[] = [];
  for (const entry of state.steps) {
    if (entry.receiptId === undefined) continue;
    const step = doc.steps.find((s) => s.id === entry.stepId);
    steps.push({
      step_id: entry.stepId,
      skill: step !== undefined ? traceSkill(step) : entry.stepId,
      status: entry.status === "succeeded" ? "success" : "failure",
      receipt_id: entry.receiptId,
    });
  }
  return { graph: doc.name, status, steps };
}

/** Continues a paused graph: human decisions through the machine, agent answers as step results. */
export async function resumeGraphRun(
  scope: RunScope,
  checkpoint: Checkpoint,
  answers: ResumeAnswers,
  previous: Reference,
): Promise<SkillRunEnvelope> {
  const catalog = runtimeToolCatalog(runToolRoots(scope));
  const doc = await prepareGraph(scope, catalog);
  let state = checkpoint.graph_state as GraphState;
  const approvals = Object.fromEntries(
    Object.entries(answers.approvals).map(([id, d]) => [
      id,
      {
        approved: d.approved,
        actor: "human" as const,
        ...(d.reason !== undefined ? { reason: d.reason } : {}),
      },
    ]),
  );
  // Un-pauses the graph (recording human decisions); paused agent steps are planned again
  // and take their answers from the resume document.
  state = resumeGraph(doc, state, { approvals });
  return driveGraph(scope, doc, catalog, state, previous, answers.answers);
}
