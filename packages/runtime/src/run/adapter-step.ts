/**
 * The `adapter` runner in a run: one dispatch attempt through the gate, its signed
 * dispatch receipt sealed as a child of the run's receipt, or a `needs_approval` pause whose
 * gate binds the packet, adapter and authority digests. Resume with an approval rebuilds the
 * packet and refuses (`approval_stale`) when anything bound has changed since. An attempt whose
 * adapter asks questions (`needs_input`) pauses the run `needs_agent`; resume with answers keyed
 * by `question_id` builds a new packet that retries the first and passes the gate again.
 * The pieces are shared with adapter steps of graphs (run/adapter-graph-step.ts).
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { AdapterRunner, RunnerDefinition } from "../parser/runner-types.js";
import { buildSkillReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { AuthorityTerm, Commitment, Receipt, Reference } from "../receipts/index.js";
import type { AsyncStateOperations } from "../store/port.js";
import { dispatchAttempt } from "../adapters/dispatch.js";
import type {
  AdapterStepConfig,
  ApprovalBinding,
  DispatchOutcome,
  DispatchReceiptBody,
} from "../adapters/dispatch.js";
import {
  clearCancel,
  nextAttempt,
  runPathProblem,
  writeAttemptRecord,
} from "../adapters/records.js";
import { DEFAULT_CEILING } from "../adapters/vocabulary.js";
import type { ResumeAnswers } from "./answers.js";
import type { Checkpoint } from "./checkpoint.js";
import {
  commitment,
  createRunRecord,
  idempotencyFor,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
  runnerBaseEnv,
} from "./context.js";
import type { RunScope } from "./context.js";
import { makeEnvelope } from "../contracts/envelope.js";
import type { Disposition, RunRequest, SkillRunEnvelope } from "../contracts/envelope.js";
import { appendRunEvent } from "./ledger.js";
import { pauseRun } from "./pause.js";
import type { StepStart } from "./single-step.js";
import { packetAnswers } from "./adapter-answers.js";
import type { DispatchQuestion } from "./adapter-answers.js";

export { packetAnswers } from "./adapter-answers.js";

/** The principal that stands for the local operator. */
export const LOCAL_OPERATOR = "runx:principal:local_operator";

const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** Reads the runner's `adapter:` block; a malformed block is a package error naming the field. */
export function adapterConfigOf(runner: AdapterRunner): AdapterStepConfig {
  const block = runner.adapter;
  const allowed = ["id", "lane", "workflow", "authority", "commit_policy", "workspace"];
  for (const key of Object.keys(block)) {
    if (!allowed.includes(key)) {
      throw new RuntimeError(
        "PACKAGE_INVALID",
        `runners.${runner.name}.adapter.${key}: unknown field`,
        { path: `runners.${runner.name}.adapter.${key}` },
      );
    }
  }
  const authority = block.authority ?? [];
  if (!Array.isArray(authority) || !authority.every((w) => typeof w === "string")) {
    throw new RuntimeError(
      "PACKAGE_INVALID",
      `runners.${runner.name}.adapter.authority: must be a list of authority words`,
      { path: `runners.${runner.name}.adapter.authority` },
    );
  }
  const ws = isJsonObject(block.workspace) ? block.workspace : {};
  return {
    id: str(block.id) ?? "",
    lane: str(block.lane) ?? "",
    workflow: str(block.workflow),
    authority: authority,
    commit_policy: str(block.commit_policy) ?? "commit_forbidden",
    workspace: {
      worktree: str(ws.worktree),
      branch: str(ws.branch),
      base_commit: str(ws.base_commit),
    },
  };
}

/**
 * The authority ceiling of an adapter runner: its own `policy.authority_ceiling`, else the
 * default. A graph that declares a ceiling on its own runner narrows every adapter step in it.
 */
export function ceilingOf(runner: AdapterRunner, enclosing?: RunnerDefinition): string[] {
  const read = (r: RunnerDefinition | undefined): string[] | undefined => {
    const ceiling = (r?.policy as { authority_ceiling?: unknown } | undefined)?.authority_ceiling;
    return Array.isArray(ceiling)
      ? ceiling.filter((w): w is string => typeof w === "string")
      : undefined;
  };
  const own = read(runner) ?? [...DEFAULT_CEILING];
  const outer = enclosing !== undefined && enclosing !== runner ? read(enclosing) : undefined;
  return outer === undefined ? own : own.filter((w) => outer.includes(w));
}

/** The id of the approval gate of a step's dispatch. */
export function approvalRequestId(stepId: string): string {
  return `adapter.${stepId}.approval`;
}

/** The id of the request carrying a dispatch's questions (`needs_input`). */
export function inputRequestId(stepId: string): string {
  return `adapter.${stepId}.input`;
}

/** One dispatch of an adapter runner, as a single-skill run or a graph step asks for it. */
export interface DispatchCall {
  runner: AdapterRunner;
  /** The step's key in the run (a graph step's path); names records and the packet. */
  stepId: string;
  graphRunId: string | null;
  skill: { name: string; version: string | null; digest: string };
  ceiling: string[];
  /** The step inputs; `answers` (question_id/value pairs) when resuming `needs_input`. */
  inputs: Record<string, unknown>;
  approval: { decision: boolean; binding: ApprovalBinding; receiptId: string } | null;
  /** The packet this one retries (a resume with answers). */
  retryOf?: string | null;
}

/**
 * Who approved a step's dispatch: the authenticated console operators whose decisions released
 * the gate (host-attested, comma-separated when the gate policy needs several), else the local
 * operator (`runx resume` with an approvals document).
 */
export function dispatchApprover(scope: RunScope, stepId: string): string {
  const termId = `approval:${approvalRequestId(stepId)}`;
  const term = scope.deps.attestedApprovals?.find((t) => t.term_id === termId);
  const principals = (term?.approvals ?? [])
    .map((a) => a.approved_by_ref?.uri)
    .filter((uri): uri is string => typeof uri === "string" && uri !== "");
  return principals.length > 0 ? principals.join(",") : LOCAL_OPERATOR;
}

/** Runs one dispatch attempt of `call` through the gate (and the adapter, when it passes). */
export async function dispatchCall(scope: RunScope, call: DispatchCall): Promise<DispatchOutcome> {
  const { deps, prep } = scope;
  const fixtureModes =
    deps.receiptProfile?.kind === "harness" || deps.env.RUNX_ADAPTER_FIXTURE_MODES === "1";
  const { approval } = call;
  const retryOf = call.retryOf ?? approval?.binding.retry_of ?? null;
  const approver = approval !== null ? dispatchApprover(scope, call.stepId) : null;
  return dispatchAttempt({
    root: deps.paths.root,
    runxDir: deps.paths.runxDir,
    home: deps.env.HOME,
    runId: prep.runId,
    stepId: call.stepId,
    graphRunId: call.graphRunId,
    attempt: nextAttempt(deps.paths.runxDir, prep.runId, call.stepId),
    skill: call.skill,
    adapter: adapterConfigOf(call.runner),
    ceiling: call.ceiling,
    inputs: call.inputs,
    baseEnv: runnerBaseEnv(scope, call.runner),
    secrets: scope.secrets,
    taint: scope.taint,
    spawnAuthority: scope.spawnAuthority ?? { granted: false, source: null, principal: null },
    approval:
      approval === null
        ? null
        : {
            approved: approval.decision,
            binding: approval.binding,
            requestReceiptId: approval.receiptId,
            approver: approver ?? LOCAL_OPERATOR,
          },
    ...(approval !== null ? { createdAt: approval.binding.created_at } : {}),
    ...(retryOf !== null ? { retryOf } : {}),
    fixtureModes,
    now: () => deps.now(),
    signal: scope.signal,
    invokedBy: scope.spawnAuthority?.principal ?? approver ?? LOCAL_OPERATOR,
    ...(deps.adapterProbe !== undefined ? { probe: deps.adapterProbe } : {}),
    ...(deps.onAdapterSpawn !== undefined ? { onSpawn: deps.onAdapterSpawn } : {}),
  });
}

/** The approval request a `needs_approval` outcome pauses on. */
export function approvalRequest(
  stepId: string,
  outcome: Extract<DispatchOutcome, { kind: "needs_approval" }>,
): RunRequest {
  const id = approvalRequestId(stepId);
  return {
    id,
    kind: "approval",
    gate: {
      id,
      type: "adapter_dispatch",
      reason: `approve dispatching packet ${outcome.packet.packet_id} to adapter ${outcome.binding.adapter_id} with ${outcome.binding.authority_granted.join(", ")}`,
      summary: outcome.binding,
    },
  };
}

/** True when an attempt ended asking questions (`needs_input`): the run waits for answers. */
export function needsInput(outcome: DispatchOutcome): boolean {
  return (
    outcome.kind === "attempt" &&
    outcome.body.status === "blocked" &&
    outcome.body.failure === null &&
    outcome.questions.length > 0
  );
}

/**
 * The request a `needs_input` attempt pauses on: one `agent_act` request whose answer is an
 * object keyed by `question_id`. An answer is task input, never approval: resuming with it
 * builds a new packet (`retry_of` the asking one) that goes through the whole gate again.
 */
export function inputRequest(
  stepId: string,
  body: DispatchReceiptBody,
  questions: readonly DispatchQuestion[],
  dispatchReceiptId: string,
): RunRequest {
  return {
    id: inputRequestId(stepId),
    kind: "agent_act",
    invocation: {
      type: "adapter_questions",
      adapter_id: body.adapter_id,
      packet_id: body.packet_id,
      dispatch_receipt_id: dispatchReceiptId,
      questions: questions.map((q) => ({
        question_id: q.question_id,
        prompt: q.prompt,
        ...(q.answer_schema !== undefined ? { answer_schema: q.answer_schema } : {}),
      })),
      answer: "an object keyed by question_id",
    },
  };
}

/** What a step receipt's output says about its dispatch. */
export function dispatchOutput(
  outcome: Extract<DispatchOutcome, { kind: "attempt" }>,
  childId: string,
): { dispatch: Record<string, unknown> } {
  const body = outcome.body;
  return {
    dispatch: {
      status: body.status,
      attempt: body.attempt,
      failure_code: body.failure?.code ?? null,
      receipt_id: childId,
      packet_id: body.packet_id,
      packet_digest: body.packet_digest,
      retry_of: body.retry_of,
      // Only a completed dispatch promotes its (validated) artifacts.
      artifacts: body.status === "completed" ? body.artifacts : [],
      questions: outcome.questions,
      summary: body.summary,
    },
  };
}

/**
 * The console's host-attested approvals that released this continuation, signed into the
 * receipts it seals (as every other runner's receipts carry them).
 */
function attestedTerms(deps: RunScope["deps"]): { authorityTerms?: readonly AuthorityTerm[] } {
  const terms = deps.attestedApprovals;
  return terms !== undefined && terms.length > 0 ? { authorityTerms: terms } : {};
}

/** The disposition of the step that ran a dispatch with this receipt status. */
export const DISPOSITION: Readonly<Record<string, Disposition>> = {
  completed: "closed",
  dry_run: "closed",
  rejected: "blocked",
  blocked: "blocked",
  failed: "failed",
  cancelled: "killed",
};

/**
 * Seals one attempt's dispatch receipt as a signed child receipt (committing the
 * `dispatch-receipt.v1` document), stores it and records the attempt append-only.
 */
export async function sealDispatchChild(
  scope: RunScope,
  skillName: string,
  stepId: string,
  outcome: Extract<DispatchOutcome, { kind: "attempt" }>,
  inputsDigest: string,
): Promise<Receipt> {
  const { deps, prep } = scope;
  const body = outcome.body;
  const asking = needsInput(outcome);
  const disposition = asking ? "deferred" : (DISPOSITION[body.status] ?? "failed");
  const commitments: Commitment[] = [
    commitment("input", body.packet_digest ?? inputsDigest),
    commitment("output", hashCanonical(body)),
    ...(outcome.streams !== undefined
      ? [
          commitment("stdout", outcome.streams.stdoutSha256),
          commitment("stderr", outcome.streams.stderrSha256),
        ]
      : []),
  ];
  const reasonCode = asking ? "agent_required" : (body.failure?.code ?? `dispatch_${body.status}`);
  const summary = body.failure?.message ?? body.summary ?? `dispatch ${body.status}`;
  const child: Receipt = sealReceipt(
    buildSkillReceipt({
      name: skillName,
      step: `${stepId}.dispatch-${body.attempt}`,
      createdAt: receiptTimestamp(deps.now()),
      subjectKind: "agent_adapter_dispatch",
      disposition: body.status === "dry_run" ? "declined" : disposition,
      reasonCode,
      succeeded: body.status === "completed",
      sealSummary: summary,
      outcomeSummary: summary,
      commitments,
      ...(body.process.spawned ? { executionBoundary: "trusted_host_process" as const } : {}),
      idempotency: idempotencyFor(prep, body.receipt_id, `${stepId}.dispatch-${body.attempt}`),
      metadata: { ...runMetadata(deps, prep), dispatch: body as unknown as Record<string, never> },
      ...attestedTerms(deps),
    }),
    deps.signer(),
  );
  await storeReceipt(deps, prep, child, undefined, { isChild: true });
  // A run directory reached through a symlink holds no record (the attempt was refused as
  // path_unsafe for it; the signed receipt is the record). Anything else is written in place,
  // and a link swapped in since the gate makes the write fail rather than land at its target.
  const unrecordable =
    body.failure?.code === "path_unsafe" &&
    runPathProblem(deps.paths.runxDir, prep.runId, "dispatches") !== undefined;
  if (!unrecordable) {
    writeAttemptRecord(deps.paths.runxDir, { receipt_id: child.id, dispatch: body });
    clearCancel(deps.paths.runxDir, prep.runId);
  }
  return child;
}

function callOf(scope: RunScope, inputs: Record<string, unknown>): Omit<DispatchCall, "approval"> {
  const runner = scope.prep.runner as AdapterRunner;
  return {
    runner,
    stepId: runner.name,
    graphRunId: null,
    skill: { name: scope.prep.pkg.name, version: null, digest: scope.prep.packageDigest },
    ceiling: ceilingOf(runner),
    inputs,
  };
}

/**
 * Records the run as `running` before its dispatch goes through the gate and launches (like a
 * single-step process run), so the console and `runx history` see it while the adapter works;
 * the step row names the attempt in flight. A resumed run's record exists (resume took it).
 */
async function recordDispatching(
  scope: RunScope,
  inputs: Record<string, unknown>,
  start: StepStart,
): Promise<StepStart> {
  const { deps, prep } = scope;
  const stepId = prep.runner.name;
  await (
    await deps.runState()
  ).transaction(async (tx) => {
    if (!start.runExists) {
      await createRunRecord(tx, deps, prep, hashCanonical(scope.taint.redactJson(inputs)));
    }
    await tx.upsertStep({
      runId: prep.runId,
      stepId,
      status: "running",
      attempt: nextAttempt(deps.paths.runxDir, prep.runId, stepId),
      startedAt: receiptTimestamp(deps.now()),
      finishedAt: null,
      receiptId: null,
    });
  });
  return { ...start, runExists: true };
}

/** Runs the adapter step of a fresh run. */
export async function runAdapterStep(
  scope: RunScope,
  inputs: Record<string, unknown>,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const recorded = await recordDispatching(scope, inputs, start);
  const outcome = await dispatchCall(scope, { ...callOf(scope, inputs), approval: null });
  return finish(scope, inputs, outcome, recorded);
}

/** Checks a resume document against an adapter pause before the run is taken. */
export function checkAdapterAnswers(checkpoint: Checkpoint, answers: ResumeAnswers): void {
  const request = checkpoint.requests[0];
  if (request?.kind === "agent_act") {
    if (answers.answers[request.id] === undefined) {
      throw new RuntimeError(
        "ANSWERS_INVALID",
        `the dispatch waits for answers under answers.${request.id}`,
        { path: `answers.${request.id}` },
      );
    }
    packetAnswers(request, answers.answers[request.id]);
  } else if (request?.kind === "approval" && answers.approvals[request.id] === undefined) {
    throw new RuntimeError(
      "ANSWERS_INVALID",
      `the dispatch waits for a human decision under approvals.${request.id}`,
      { path: `approvals.${request.id}` },
    );
  }
}

/**
 * Continues a run paused by its dispatch: for an approval, the human decision (the packet is
 * rebuilt and refused as `approval_stale` when anything bound changed); for questions, the
 * answers, which build a new packet that passes the whole gate again (its own approval, its
 * own `--allow-spawn`). An answer alone never spawns.
 */
export async function resumeAdapterStep(
  scope: RunScope,
  checkpoint: Checkpoint,
  answers: ResumeAnswers,
  previous: Reference,
): Promise<SkillRunEnvelope> {
  const request = checkpoint.requests[0];
  const start = { runExists: true, previous };
  if (request?.kind === "agent_act") {
    const answer = answers.answers[request.id];
    if (answer === undefined) {
      throw new RuntimeError(
        "ANSWERS_INVALID",
        `the dispatch waits for answers under answers.${request.id}`,
        { path: `answers.${request.id}` },
      );
    }
    const inputs = { ...checkpoint.inputs, answers: packetAnswers(request, answer) };
    const retryOf = request.invocation.packet_id;
    await recordDispatching(scope, inputs, start);
    const outcome = await dispatchCall(scope, {
      ...callOf(scope, inputs),
      approval: null,
      retryOf: typeof retryOf === "string" ? retryOf : null,
    });
    return finish(scope, inputs, outcome, start);
  }
  if (request?.kind !== "approval")
    throw new RuntimeError("RESUME_REFUSED", "the adapter checkpoint holds no approval gate", {});
  const decision = answers.approvals[request.id];
  if (decision === undefined) {
    throw new RuntimeError(
      "ANSWERS_INVALID",
      `the dispatch waits for a human decision under approvals.${request.id}`,
      { path: `approvals.${request.id}` },
    );
  }
  const binding = request.gate.summary as ApprovalBinding;
  await recordDispatching(scope, checkpoint.inputs, start);
  const outcome = await dispatchCall(scope, {
    ...callOf(scope, checkpoint.inputs),
    approval: { decision: decision.approved, binding, receiptId: checkpoint.paused_receipt.id },
  });
  return finish(scope, checkpoint.inputs, outcome, start);
}

async function finish(
  scope: RunScope,
  inputs: Record<string, unknown>,
  outcome: DispatchOutcome,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const stepId = prep.runner.name;
  // The step row written when the dispatch began waits with the run.
  const stepWaits = async (tx: AsyncStateOperations, receiptId: string): Promise<void> => {
    await tx.upsertStep({ runId: prep.runId, stepId, status: "deferred", receiptId });
  };
  if (outcome.kind === "needs_approval") {
    const request = approvalRequest(stepId, outcome);
    return pauseRun(scope, {
      kind: "adapter",
      requests: [request],
      inputs,
      reasonCode: "approval_required",
      summary: `waiting for approval: ${request.id}`,
      runExists: true,
      andThen: stepWaits,
      ...(start.previous !== undefined ? { previous: start.previous } : {}),
      next: `runx resume ${prep.runId} <answers.json> --allow-spawn   (answers: {"approvals": {"${request.id}": true}})`,
    });
  }
  const body = outcome.body;
  const inputsDigest = hashCanonical(scope.taint.redactJson(inputs));
  const child = await sealDispatchChild(scope, prep.pkg.name, stepId, outcome, inputsDigest);
  if (needsInput(outcome)) {
    const request = inputRequest(stepId, body, outcome.questions, child.id);
    return pauseRun(scope, {
      kind: "adapter",
      requests: [request],
      inputs,
      reasonCode: "agent_required",
      summary: `adapter ${body.adapter_id} asks: ${outcome.questions.map((q) => q.question_id).join(", ")}`,
      runExists: true,
      andThen: stepWaits,
      childReceipts: [child],
      ...(start.previous !== undefined ? { previous: start.previous } : {}),
      next: `runx resume ${prep.runId} <answers.json> --allow-spawn   (answers: {"answers": {"${request.id}": {${outcome.questions.map((q) => `"${q.question_id}": …`).join(", ")}}}})`,
    });
  }
  const disposition = DISPOSITION[body.status] ?? "failed";
  const reasonCode = body.failure?.code ?? `dispatch_${body.status}`;
  const summary = body.failure?.message ?? body.summary ?? `dispatch ${body.status}`;
  const output = dispatchOutput(outcome, child.id);
  const closed = disposition === "closed";
  const parentCreated = receiptTimestamp(deps.now());
  const receipt = sealReceipt(
    buildSkillReceipt({
      name: prep.pkg.name,
      step: stepId,
      createdAt: parentCreated,
      disposition,
      reasonCode,
      succeeded: closed,
      ...(closed ? {} : { sealSummary: summary, outcomeSummary: summary }),
      commitments: [commitment("input", inputsDigest), commitment("output", hashCanonical(output))],
      children: [child],
      idempotency: idempotencyFor(prep, inputsDigest, undefined, start.previous),
      metadata: { ...runMetadata(deps, prep), dispatch_status: body.status },
      ...attestedTerms(deps),
      ...(start.previous !== undefined
        ? { lineage: { previous: start.previous, resume_ref: start.previous } }
        : {}),
    }),
    deps.signer(),
    { children: [child] },
  );
  await storeReceipt(deps, prep, receipt, async (tx) => {
    await tx.upsertStep({
      runId: prep.runId,
      stepId,
      status: disposition,
      attempt: body.attempt,
      receiptId: receipt.id,
      outputJson: JSON.stringify({ output }),
      finishedAt: parentCreated,
    });
    await appendRunEvent(tx, prep.runId, {
      kind: "sealed",
      status: disposition,
      stepId,
      detail: { reason_code: reasonCode, dispatch_status: body.status, dispatch_receipt: child.id },
      producer: { skill: prep.pkg.name, runner: stepId },
      createdAt: parentCreated,
      receiptId: receipt.id,
    });
    await tx.updateRun(prep.runId, {
      status: "sealed",
      disposition,
      receiptId: receipt.id,
      resultJson: JSON.stringify(output),
      requestsJson: null,
      ...(closed ? {} : { errorJson: JSON.stringify({ summary }) }),
    });
  });
  return makeEnvelope({
    status: "sealed",
    skillName: prep.pkg.name,
    runner: stepId,
    runId: prep.runId,
    receiptId: receipt.id,
    closure: { disposition, reason_code: reasonCode, summary: receipt.seal.summary },
    result: output,
  });
}
