/**
 * Pausing a run: seal a `deferred` receipt, write the durable checkpoint into the run ledger,
 * and mark the run as waiting — all tied to one state-store transaction after the receipt is
 * durably stored.
 */
import type { AsyncStateOperations } from "../store/port.js";
import {
  buildSkillReceipt,
  hashCanonical,
  receiptBodyDigest,
  sealReceipt,
} from "../receipts/index.js";
import type { Reference } from "../receipts/index.js";
import { workspaceRef } from "../workspace.js";
import type { Checkpoint } from "./checkpoint.js";
import {
  createRunRecord,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
} from "./context.js";
import type { RunScope } from "./context.js";
import { makeEnvelope, pendingStatus } from "../contracts/envelope.js";
import type { RunRequest, SkillRunEnvelope } from "../contracts/envelope.js";
import { appendRunEvent } from "./ledger.js";

/** How a run pauses. */
export interface PauseSpec {
  kind: Checkpoint["kind"];
  requests: RunRequest[];
  inputs: Record<string, unknown>;
  reasonCode: string;
  summary: string;
  /** Whether the run record already exists (a resumed run pausing again). */
  runExists: boolean;
  /** The receipt this pause follows (a resumed run). */
  previous?: Reference;
  graphState?: unknown;
  /** Tool inputs proposed for the requested gates (managed agent pauses), by gate id. */
  gateInputs?: Record<string, unknown>;
  /** Child receipts committed so far (graph runs). */
  childReceipts?: Parameters<typeof buildSkillReceipt>[0]["children"];
  /** The `next` instruction shown to the caller. */
  next?: string;
  /** More state changes made in the pause's transaction (given the deferred receipt's id). */
  andThen?: (tx: AsyncStateOperations, receiptId: string) => Promise<void>;
}

/** Seals the deferred receipt, checkpoints and returns the paused envelope. */
export async function pauseRun(scope: RunScope, spec: PauseSpec): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const createdAt = receiptTimestamp(deps.now());
  const inputsDigest = hashCanonical(scope.taint.redactJson(spec.inputs));
  const receipt = sealReceipt(
    buildSkillReceipt({
      ...profiled(deps, {
        name: prep.pkg.name,
        createdAt,
        idempotency: idempotencyFor(
          prep,
          hashCanonical({ inputs: inputsDigest, requests: spec.requests }),
          undefined,
          spec.previous,
        ),
        metadata: runMetadata(deps, prep),
      }),
      step: prep.runner.name,
      disposition: "deferred",
      reasonCode: spec.reasonCode,
      sealSummary: spec.summary,
      succeeded: false,
      outcomeSummary: spec.summary,
      ...(spec.childReceipts !== undefined ? { children: spec.childReceipts } : {}),
      ...(spec.previous !== undefined ? { lineage: { previous: spec.previous } } : {}),
    }),
    deps.signer(),
  );
  const status = pendingStatus(spec.requests);
  const checkpoint: Checkpoint = {
    version: "runx.checkpoint.v1",
    kind: spec.kind,
    // Resolvable again on resume, also for a package outside the workspace.
    skill_ref: workspaceRef(deps.paths.root, prep.pkg.graphDocumentPath ?? prep.pkg.packageDir),
    runner: prep.runner.name,
    package_digest: prep.packageDigest,
    execution_closure_digest: prep.closureDigest,
    inputs: scope.taint.redactJson(spec.inputs) as Record<string, unknown>,
    // The credential's delivery name is resolved again on resume, not read from the env.
    secret_env: Object.keys(scope.secrets).filter((name) => name !== scope.credential?.envName),
    ...(scope.credential?.source === "explicit_profile" && scope.credential.profile !== undefined
      ? { credential_profile: scope.credential.profile }
      : {}),
    requests: spec.requests,
    paused_receipt: { id: receipt.id, digest: receiptBodyDigest(receipt) },
    ...(spec.graphState !== undefined ? { graph_state: spec.graphState } : {}),
    ...(spec.gateInputs !== undefined
      ? { gate_inputs: scope.taint.redactJson(spec.gateInputs) as Record<string, unknown> }
      : {}),
  };
  await storeReceipt(deps, prep, receipt, async (tx) => {
    if (!spec.runExists) await createRunRecord(tx, deps, prep, inputsDigest);
    await appendRunEvent(tx, prep.runId, {
      kind: "resolution_requested",
      status: "waiting",
      detail: {
        resume_skill_ref: checkpoint.skill_ref,
        selected_runner: prep.runner.name,
        package_digest: prep.packageDigest,
        execution_closure_digest: prep.closureDigest,
        request_ids: spec.requests.map((r) => r.id),
        checkpoint,
      },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt,
      receiptId: receipt.id,
    });
    await tx.updateRun(prep.runId, {
      status,
      disposition: "deferred",
      receiptId: receipt.id,
      requestsJson: JSON.stringify(spec.requests),
    });
    await spec.andThen?.(tx, receipt.id);
  });
  return makeEnvelope({
    status,
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    runId: prep.runId,
    receiptId: receipt.id,
    closure: { disposition: "deferred", reason_code: spec.reasonCode, summary: spec.summary },
    result: null,
    requests: spec.requests,
    ...(spec.next !== undefined ? { next: spec.next } : {}),
  });
}
