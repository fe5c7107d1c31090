/**
 * The `adapter` runner in a run (issue 8): one dispatch attempt through the gate, its signed
 * dispatch receipt sealed as a child of the run's receipt, or a `needs_approval` pause whose
 * gate binds the packet, adapter and authority digests. Resume with an approval rebuilds the
 * packet and refuses (`approval_stale`) when anything bound has changed since.
 */
import { RuntimeError } from "../errors.js";
import { isJsonObject } from "../parser/json.js";
import type { AdapterRunner } from "../parser/runner-types.js";
import { buildSkillReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Commitment, Receipt, Reference } from "../receipts/index.js";
import { dispatchAttempt } from "../adapters/dispatch.js";
import type { AdapterStepConfig, ApprovalBinding, DispatchOutcome } from "../adapters/dispatch.js";
import { clearCancel, nextAttempt, writeAttemptRecord } from "../adapters/records.js";
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
} from "./context.js";
import type { RunScope } from "./context.js";
import { makeEnvelope } from "./envelope.js";
import type { Disposition, SkillRunEnvelope } from "./envelope.js";
import { appendRunEvent } from "./ledger.js";
import { pauseRun } from "./pause.js";
import type { StepStart } from "./single-step.js";

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

function ceilingOf(runner: AdapterRunner): string[] {
  const ceiling = runner.policy?.authority_ceiling;
  return Array.isArray(ceiling)
    ? ceiling.filter((w): w is string => typeof w === "string")
    : [...DEFAULT_CEILING];
}

function approvalRequestId(stepId: string): string {
  return `adapter.${stepId}.approval`;
}

async function attempt(
  scope: RunScope,
  inputs: Record<string, unknown>,
  approval: { decision: boolean; binding: ApprovalBinding; receiptId: string } | null,
): Promise<DispatchOutcome> {
  const { deps, prep } = scope;
  const runner = prep.runner as AdapterRunner;
  const fixtureModes =
    deps.receiptProfile?.kind === "harness" || deps.env.RUNX_ADAPTER_FIXTURE_MODES === "1";
  return dispatchAttempt({
    root: deps.paths.root,
    runxDir: deps.paths.runxDir,
    home: deps.env.HOME,
    runId: prep.runId,
    stepId: runner.name,
    graphRunId: null,
    attempt: nextAttempt(deps.paths.runxDir, prep.runId, runner.name),
    skill: { name: prep.pkg.name, version: null, digest: prep.packageDigest },
    adapter: adapterConfigOf(runner),
    ceiling: ceilingOf(runner),
    inputs,
    baseEnv: deps.env,
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
            approver: LOCAL_OPERATOR,
          },
    ...(approval !== null ? { createdAt: approval.binding.created_at } : {}),
    fixtureModes,
    now: () => deps.now(),
    signal: scope.signal,
    invokedBy: scope.spawnAuthority?.principal ?? LOCAL_OPERATOR,
    ...(deps.adapterProbe !== undefined ? { probe: deps.adapterProbe } : {}),
    ...(deps.onAdapterSpawn !== undefined ? { onSpawn: deps.onAdapterSpawn } : {}),
  });
}

/** Runs the adapter step of a fresh run. */
export async function runAdapterStep(
  scope: RunScope,
  inputs: Record<string, unknown>,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const outcome = await attempt(scope, inputs, null);
  return finish(scope, inputs, outcome, start);
}

/** Continues a run paused for a dispatch approval. */
export async function resumeAdapterStep(
  scope: RunScope,
  checkpoint: Checkpoint,
  answers: ResumeAnswers,
  previous: Reference,
): Promise<SkillRunEnvelope> {
  const request = checkpoint.requests[0];
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
  const outcome = await attempt(scope, checkpoint.inputs, {
    decision: decision.approved,
    binding,
    receiptId: checkpoint.paused_receipt.id,
  });
  return finish(scope, checkpoint.inputs, outcome, { runExists: true, previous });
}

const DISPOSITION: Readonly<Record<string, Disposition>> = {
  completed: "closed",
  dry_run: "closed",
  rejected: "blocked",
  blocked: "blocked",
  failed: "failed",
  cancelled: "killed",
};

async function finish(
  scope: RunScope,
  inputs: Record<string, unknown>,
  outcome: DispatchOutcome,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const stepId = prep.runner.name;
  if (outcome.kind === "needs_approval") {
    const id = approvalRequestId(stepId);
    return pauseRun(scope, {
      kind: "adapter",
      requests: [
        {
          id,
          kind: "approval",
          gate: {
            id,
            type: "adapter_dispatch",
            reason: `approve dispatching packet ${outcome.packet.packet_id} to adapter ${outcome.binding.adapter_id} with ${outcome.binding.authority_granted.join(", ")}`,
            summary: outcome.binding,
          },
        },
      ],
      inputs,
      reasonCode: "approval_required",
      summary: `waiting for approval: ${id}`,
      runExists: start.runExists,
      ...(start.previous !== undefined ? { previous: start.previous } : {}),
      next: `runx resume ${prep.runId} <answers.json> --allow-spawn   (answers: {"approvals": {"${id}": true}})`,
    });
  }
  const body = outcome.body;
  const disposition = DISPOSITION[body.status] ?? "failed";
  const inputsDigest = hashCanonical(scope.taint.redactJson(inputs));
  const createdAt = receiptTimestamp(deps.now());
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
  const reasonCode = body.failure?.code ?? `dispatch_${body.status}`;
  const summary = body.failure?.message ?? body.summary ?? `dispatch ${body.status}`;
  const child: Receipt = sealReceipt(
    buildSkillReceipt({
      name: prep.pkg.name,
      step: `${stepId}.dispatch-${body.attempt}`,
      createdAt,
      subjectKind: "agent_adapter_dispatch",
      disposition:
        DISPOSITION[body.status] === "closed" && body.status === "dry_run"
          ? "declined"
          : disposition,
      reasonCode,
      succeeded: body.status === "completed",
      sealSummary: summary,
      outcomeSummary: summary,
      commitments,
      ...(body.process.spawned ? { executionBoundary: "trusted_host_process" as const } : {}),
      idempotency: idempotencyFor(prep, body.receipt_id, `${stepId}.dispatch-${body.attempt}`),
      metadata: { ...runMetadata(deps, prep), dispatch: body as unknown as Record<string, never> },
    }),
    deps.signer(),
  );
  await storeReceipt(
    deps,
    prep,
    child,
    () => {
      if (!start.runExists) createRunRecord(deps, prep, inputsDigest);
    },
    { isChild: true },
  );
  writeAttemptRecord(deps.paths.runxDir, { receipt_id: child.id, dispatch: body });
  clearCancel(deps.paths.runxDir, prep.runId);

  const output = {
    dispatch: {
      status: body.status,
      attempt: body.attempt,
      failure_code: body.failure?.code ?? null,
      receipt_id: child.id,
      packet_id: body.packet_id,
      packet_digest: body.packet_digest,
      // Only a completed dispatch promotes its (validated) artifacts.
      artifacts: body.status === "completed" ? body.artifacts : [],
      questions: outcome.questions,
      summary: body.summary,
    },
  };
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
      ...(start.previous !== undefined
        ? { lineage: { previous: start.previous, resume_ref: start.previous } }
        : {}),
    }),
    deps.signer(),
    { children: [child] },
  );
  await storeReceipt(deps, prep, receipt, () => {
    deps.state().upsertStep({
      runId: prep.runId,
      stepId,
      status: disposition,
      attempt: body.attempt,
      receiptId: receipt.id,
      outputJson: JSON.stringify({ output }),
      finishedAt: parentCreated,
    });
    appendRunEvent(deps.state(), prep.runId, {
      kind: "sealed",
      status: disposition,
      stepId,
      detail: { reason_code: reasonCode, dispatch_status: body.status, dispatch_receipt: child.id },
      producer: { skill: prep.pkg.name, runner: stepId },
      createdAt: parentCreated,
      receiptId: receipt.id,
    });
    deps.state().updateRun(prep.runId, {
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
