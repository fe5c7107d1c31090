/**
 * Graph runs: drive the pure graph machine, executing planned steps (each sealing a child
 * receipt), pausing durably for agents and humans, and sealing the graph receipt whose
 * lineage commits every child by id and body digest.
 */
import { RuntimeError } from "../errors.js";
import { applyStepOutcome, createGraphState, nextActions, resumeGraph } from "../graph/index.js";
import type { GraphDoc, GraphState, GraphStep } from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import { buildGraphReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Receipt, Reference } from "../receipts/index.js";
import type { ReceiptLookup } from "../store/receipt-lookup.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { ResumeAnswers } from "./answers.js";
import type { Checkpoint } from "./checkpoint.js";
import {
  recordRunning,
  runReceipts,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
} from "./context.js";
import type { RunScope } from "./context.js";
import { makeEnvelope } from "../contracts/envelope.js";
import type { GraphTrace, GraphTraceStep, SkillRunEnvelope } from "../contracts/envelope.js";
import { prepareGraph } from "./graph-prepare.js";
import { executeGraphStep } from "./graph-steps.js";
import { pauseReasonCode, toSyncPoint } from "./graph-stop.js";
import type { GraphAdvance } from "./graph-stop.js";
import { appendRunEvent } from "./ledger.js";
import { pauseRun } from "./pause.js";
import type { StepStart } from "./single-step.js";
import { runtimeToolCatalog, runToolRoots } from "./tools.js";

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
  await recordRunning(deps, prep, {
    runExists: start.runExists,
    inputsDigest: hashCanonical(scope.taint.redactJson(inputs)),
  });
  return driveGraph(scope, doc, catalog, state, start.previous);
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
  // A resumed run's earlier steps may have sealed in another process (on PostgreSQL, in
  // another workspace): their receipts are read where the state store keeps them.
  let stored: ReceiptLookup | undefined;
  for (const step of state.steps) {
    if (step.receiptId === undefined) continue;
    const receipt = fresh.get(step.receiptId);
    if (receipt !== undefined) {
      out.push(receipt);
      continue;
    }
    stored ??= await runReceipts(scope.deps);
    out.push(await stored.read(step.receiptId));
  }
  return out;
}

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
): Promise<GraphAdvance> {
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
        advanceGraph,
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
  await storeReceipt(deps, prep, receipt, async (tx) => {
    await appendRunEvent(tx, prep.runId, {
      kind: "sealed",
      status: disposition,
      detail: { reason_code: reasonCode },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt: receipt.created_at,
      receiptId: receipt.id,
    });
    await tx.updateRun(prep.runId, {
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
