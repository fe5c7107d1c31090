/**
 * A graph step whose runner is an adapter (a `skill:` whose selected runner has type `adapter`,
 * or an inline `run: {type: adapter, …}`). It goes through the same gate as a single-skill
 * dispatch: the run's own `--allow-spawn` (never graph inputs), approval bound to the packet,
 * adapter and authority, the preflight checks; and its dispatch receipt is sealed as a child of
 * the step's receipt, so the graph receipt commits it through the step.
 *
 * A pause (approval, or questions the adapter asked) seals a deferred step receipt and keeps
 * what the step needs to continue on the step (the graph machine's opaque `subgraph` slot): the
 * request it paused on and the receipt that asked. Resuming reads the human decision or the
 * answers from the resume document and runs the step again; the continuation's step receipt
 * names the deferred one as its `previous`.
 */
import { computeSourceDigest } from "../packages/digest.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { packageArtifacts } from "../graph/artifacts.js";
import type { GraphStep, StepOutcome } from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import type { AdapterRunner } from "../parser/runner-types.js";
import { hashCanonical, receiptBodyDigest } from "../receipts/index.js";
import type { Receipt, Reference } from "../receipts/index.js";
import type { ApprovalBinding } from "../adapters/dispatch.js";
import {
  approvalRequest,
  approvalRequestId,
  ceilingOf,
  dispatchCall,
  dispatchOutput,
  DISPOSITION,
  inputRequest,
  inputRequestId,
  needsInput,
  packetAnswers,
  sealDispatchChild,
} from "./adapter-step.js";
import type { DispatchCall } from "./adapter-step.js";
import { stepKey } from "./context.js";
import type { RunScope } from "./context.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { SealOutcome, StepResult } from "./graph-steps.js";

/** What a paused adapter step keeps until it runs again. */
interface SavedAdapterPause {
  adapter: {
    waiting: "approval" | "input";
    /** The request the step paused on (the approval binding, or the questions). */
    request: RunRequest;
    /** The packet answers of the attempt waiting for approval (a resume with answers). */
    answers: Array<{ question_id: string; value: unknown }> | null;
  };
  /** The deferred step receipt sealed when the step paused. */
  paused_receipt: { id: string; digest: string };
}

function isSaved(value: unknown): value is SavedAdapterPause {
  if (typeof value !== "object" || value === null) return false;
  const saved = value as Partial<SavedAdapterPause>;
  return (
    typeof saved.adapter === "object" &&
    saved.adapter !== null &&
    typeof saved.adapter.request?.id === "string" &&
    typeof saved.paused_receipt?.id === "string"
  );
}

/** Seals a graph step with the outcome; supplied by the caller (graph-steps.ts). */
export type SealStep = (
  outcome: SealOutcome,
  status: StepOutcome["status"],
) => Promise<StepResult & { receipt: Receipt }>;

/** Runs (or resumes) one adapter step of a graph. */
export async function executeAdapterGraphStep(
  scope: RunScope,
  step: GraphStep,
  runner: AdapterRunner,
  skill: { name: string; pkg?: LoadedSkillPackage },
  inputs: JsonObject,
  approvals: Record<string, { approved: boolean; reason?: string }>,
  answers: Record<string, unknown>,
  saved: unknown,
  artifacts: GraphStep["artifacts"],
  seal: SealStep,
): Promise<StepResult> {
  const { prep } = scope;
  const key = stepKey(scope, step.id);
  const pause = isSaved(saved) ? saved : undefined;
  const previous: Reference | undefined =
    pause !== undefined
      ? {
          type: "receipt",
          uri: `runx:receipt:${pause.paused_receipt.id}`,
          locator: pause.paused_receipt.digest,
        }
      : undefined;
  const base: Omit<DispatchCall, "approval" | "inputs"> = {
    runner,
    stepId: key,
    graphRunId:
      scope.nest !== undefined ? `${prep.runId}/${scope.nest.path.join("/")}` : prep.runId,
    skill: {
      name: skill.name,
      version: null,
      digest: skill.pkg !== undefined ? computeSourceDigest(skill.pkg) : prep.packageDigest,
    },
    // The graph's own ceiling, when it declares one, narrows the step's.
    ceiling: ceilingOf(runner, prep.runner),
  };
  // Still waiting: a resume that did not answer this step's request leaves it paused as it was.
  const stillPaused = (p: SavedAdapterPause): StepResult => ({
    outcome: {
      status: p.adapter.waiting === "approval" ? "needs_approval" : "needs_agent",
      requests: [p.adapter.request],
      subgraph: p,
    },
  });

  let call: DispatchCall;
  if (pause?.adapter.waiting === "approval") {
    const decision = approvals[approvalRequestId(key)];
    if (decision === undefined) return stillPaused(pause);
    const request = pause.adapter.request;
    const binding = (request.kind === "approval" ? request.gate.summary : {}) as ApprovalBinding;
    call = {
      ...base,
      inputs:
        pause.adapter.answers !== null ? { ...inputs, answers: pause.adapter.answers } : inputs,
      approval: { decision: decision.approved, binding, receiptId: pause.paused_receipt.id },
    };
  } else if (pause?.adapter.waiting === "input") {
    const answer = answers[inputRequestId(key)];
    if (answer === undefined) return stillPaused(pause);
    const request = pause.adapter.request;
    const retryOf = request.kind === "agent_act" ? request.invocation.packet_id : undefined;
    call = {
      ...base,
      inputs: { ...inputs, answers: packetAnswers(request, answer) },
      approval: null,
      retryOf: typeof retryOf === "string" ? retryOf : null,
    };
  } else {
    call = { ...base, inputs, approval: null };
  }

  const lineage = previous !== undefined ? { previous, resume_ref: previous } : undefined;
  const packetAnswersOf = (): SavedAdapterPause["adapter"]["answers"] =>
    Array.isArray(call.inputs.answers)
      ? (call.inputs.answers as SavedAdapterPause["adapter"]["answers"])
      : null;
  const pauseWith = async (
    request: RunRequest,
    waiting: "approval" | "input",
    summary: string,
    children: Receipt[],
  ): Promise<StepResult> => {
    const status = waiting === "approval" ? "needs_approval" : "needs_agent";
    const sealed = await seal(
      {
        disposition: "deferred",
        reasonCode: waiting === "approval" ? "approval_required" : "agent_required",
        output: {},
        summary,
        children,
        ...(lineage !== undefined ? { lineage } : {}),
        metadata: { adapter_id: runner.adapter.id as string, request_id: request.id },
      },
      status,
    );
    const kept: SavedAdapterPause = {
      adapter: { waiting, request, answers: waiting === "approval" ? packetAnswersOf() : null },
      paused_receipt: { id: sealed.receipt.id, digest: receiptBodyDigest(sealed.receipt) },
    };
    return {
      outcome: { ...sealed.outcome, requests: [request], subgraph: kept },
      receipt: sealed.receipt,
    };
  };

  const outcome = await dispatchCall(scope, call);
  if (outcome.kind === "needs_approval") {
    const request = approvalRequest(key, outcome);
    return pauseWith(request, "approval", `waiting for approval: ${request.id}`, []);
  }
  const body = outcome.body;
  const inputsDigest = hashCanonical(scope.taint.redactJson(call.inputs));
  const child = await sealDispatchChild(scope, skill.name, key, outcome, inputsDigest);
  if (needsInput(outcome)) {
    const request = inputRequest(key, body, outcome.questions, child.id);
    return pauseWith(
      request,
      "input",
      `adapter ${body.adapter_id} asks: ${outcome.questions.map((q) => q.question_id).join(", ")}`,
      [child],
    );
  }
  const disposition = DISPOSITION[body.status] ?? "failed";
  const output = dispatchOutput(outcome, child.id);
  const closed = disposition === "closed";
  const summary = body.failure?.message ?? body.summary ?? `dispatch ${body.status}`;
  return seal(
    {
      disposition,
      reasonCode: body.failure?.code ?? `dispatch_${body.status}`,
      output: closed ? packageArtifacts(output as JsonObject, artifacts) : output,
      ...(closed ? {} : { summary }),
      children: [child],
      ...(lineage !== undefined ? { lineage } : {}),
      ...(body.process.spawned ? { boundary: "trusted_host_process" as const } : {}),
      metadata: {
        adapter_id: body.adapter_id,
        dispatch_status: body.status,
        dispatch_receipt: child.id,
      },
    },
    closed ? "success" : "failure",
  );
}
