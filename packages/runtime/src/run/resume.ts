/**
 * `runx resume`: continue a paused run from its durable checkpoint. The checkpoint binds the
 * package digest and the execution-closure digest (which includes the runtime release); a
 * resume whose recomputed or supplied bindings disagree is refused before anything runs. A
 * sealed run is terminal. Only one process can take a paused run forward.
 */
import { RuntimeError, isRuntimeError } from "../errors.js";
import type { SuppliedInput } from "../parser/inputs.js";
import { assertGateResolvableHere } from "../policy/gate-resolution.js";
import { createTaintSet } from "../redaction.js";
import type { RunScope, RunSkillDeps } from "./context.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { resumeAgentTask } from "./agent-step.js";
import { resumeGraphRun } from "./graph-run.js";
import { appendRunEvent } from "./ledger.js";
import { originDetail } from "./origin.js";
import type { RunOrigin } from "./origin.js";
import { prepareRun } from "./prepare.js";
import { admitResume } from "./resume-admission.js";
import {
  admitPolicy,
  continueWithInputs,
  deliverSecrets,
  spawnAuthorityOf,
  withRefusal,
} from "./run-skill.js";
import type { AllowSpawn } from "./run-skill.js";
import { admitCredential } from "./credential.js";

/** What the caller asks for. */
export interface ResumeRequest {
  runId: string;
  /** The parsed resume document (`{answers, approvals}`). */
  document: unknown;
  packageDigest?: string;
  executionClosureDigest?: string;
  /** `--allow-spawn` given to this resume (or the console's grant for the run). */
  allowSpawn?: AllowSpawn;
  /** Who resumes the run, through which entry point, and why (the ledger's `resumed` line). */
  origin?: RunOrigin;
}

/** Continues a paused run (input, agent or graph pause). */
export async function resumeRun(
  deps: RunSkillDeps,
  request: ResumeRequest,
  signal: AbortSignal,
): Promise<SkillRunEnvelope> {
  const state = await deps.runState();
  // The same admission as the console's answer check: a refusal here leaves the run paused.
  const { run, checkpoint, answers } = await admitResume(state, request.runId, request.document);
  // A console gate policy binds every entry point: a resume document's decision is refused
  // for a gate the console governs unless it is the console's own attested release.
  await assertGateResolvableHere(
    () => deps.gateBindings(),
    run,
    Object.keys(answers.approvals),
    deps.attestedApprovals,
  );
  const bound = (what: string, expected: string, actual: string): void => {
    if (expected !== actual) {
      throw new RuntimeError(
        "RESUME_REFUSED",
        `the ${what} changed since the run paused; refusing to resume a run against different code`,
        { run_id: run.id, expected, actual },
      );
    }
  };
  if (request.packageDigest !== undefined) {
    bound("package digest (--package-digest)", checkpoint.package_digest, request.packageDigest);
  }
  if (request.executionClosureDigest !== undefined) {
    bound(
      "execution-closure digest (--execution-closure-digest)",
      checkpoint.execution_closure_digest,
      request.executionClosureDigest,
    );
  }
  const prep = await prepareRun(deps, {
    ref: checkpoint.skill_ref,
    runner: checkpoint.runner,
    runId: run.id,
  });
  bound("package digest", checkpoint.package_digest, prep.packageDigest);
  bound("execution-closure digest", checkpoint.execution_closure_digest, prep.closureDigest);
  // A dispatch pause also needs its answer or decision now (it does not pause again).
  if (checkpoint.kind === "adapter")
    (await import("./adapter-step.js")).checkAdapterAnswers(checkpoint, answers);

  // Take the run: only one process moves a paused run forward.
  await state.transaction(async (tx) => {
    // Reading the ledger tail in a transaction locks the run on PostgreSQL (SQLite's
    // IMMEDIATE transaction already excludes other writers), so two processes racing for the
    // same paused run see each other's status here.
    await tx.getLedgerTail(run.id);
    const current = await tx.getRun(run.id);
    if (current.status !== "needs_agent" && current.status !== "needs_approval") {
      throw new RuntimeError("RESUME_REFUSED", `run ${run.id} was resumed by another process`, {
        run_id: run.id,
      });
    }
    await tx.updateRun(run.id, { status: "running" });
    await appendRunEvent(tx, run.id, {
      kind: "resumed",
      status: "running",
      detail: {
        origin: originDetail(request.origin),
        pause_receipt_id: checkpoint.paused_receipt.id,
        answered: Object.keys(answers.answers),
        decisions: Object.entries(answers.approvals).map(([gateId, d]) => ({
          gate_id: gateId,
          approved: d.approved,
        })),
      },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt: deps.now().toISOString(),
      receiptId: checkpoint.paused_receipt.id,
    });
  });

  const scope: RunScope = {
    deps,
    prep,
    secrets: {},
    taint: createTaintSet([]),
    signal,
    spawnAuthority: spawnAuthorityOf(request.allowSpawn),
  };
  const previous = {
    type: "receipt",
    uri: `runx:receipt:${checkpoint.paused_receipt.id}`,
    locator: checkpoint.paused_receipt.digest,
  };
  try {
    return await withRefusal(scope, async (stage) => {
      stage("admit_secrets");
      scope.secrets = deliverSecrets(deps, checkpoint.secret_env, scope.taint);
      stage("admit_credential");
      const needsCredential = await admitCredential(scope, checkpoint.credential_profile);
      if (needsCredential !== undefined) throw credentialGone(needsCredential);
      stage("admit_policy");
      admitPolicy(scope);
      if (checkpoint.kind === "inputs") {
        stage("validate_inputs");
        const supplied: Record<string, SuppliedInput> = {};
        for (const [k, v] of Object.entries(checkpoint.inputs)) {
          supplied[k] = { value: v as SuppliedInput["value"] };
        }
        for (const request of checkpoint.requests) {
          const answer = answers.answers[request.id];
          if (answer === undefined) continue;
          if (typeof answer !== "object" || answer === null || Array.isArray(answer)) {
            throw new RuntimeError(
              "ANSWERS_INVALID",
              "an input answer is an object of input values",
              { path: `answers.${request.id}` },
            );
          }
          for (const [k, v] of Object.entries(answer)) {
            supplied[k] = { value: v as SuppliedInput["value"] };
          }
        }
        return await continueWithInputs(scope, supplied, { runExists: true, previous });
      }
      if (checkpoint.kind === "agent") {
        stage("resume");
        return await resumeAgentTask(scope, checkpoint, answers, previous);
      }
      if (checkpoint.kind === "graph") {
        stage("resume");
        return await resumeGraphRun(scope, checkpoint, answers, previous);
      }
      if (checkpoint.kind === "adapter") {
        stage("resume");
        const { resumeAdapterStep } = await import("./adapter-step.js");
        return await resumeAdapterStep(scope, checkpoint, answers, previous);
      }
      throw new RuntimeError("RESUME_REFUSED", "the checkpoint names an unknown pause kind", {
        run_id: run.id,
      });
    });
  } catch (error) {
    // A refusal before anything ran leaves the run paused as it was.
    const current = await state.getRun(run.id);
    if (current.status === "running") {
      await state.transaction(async (tx) => {
        await tx.updateRun(run.id, { status: run.status });
        await appendRunEvent(tx, run.id, {
          kind: "resume_refused",
          status: run.status,
          detail: { code: isRuntimeError(error) ? error.code : "INTERNAL" },
          producer: { skill: prep.pkg.name, runner: prep.runner.name },
          createdAt: deps.now().toISOString(),
        });
      });
    }
    throw error;
  }
}

/** A paused run whose credential no longer resolves cannot continue: say how to set it up. */
function credentialGone(envelope: SkillRunEnvelope): RuntimeError {
  const req = envelope.credential_requirement;
  return new RuntimeError(
    "CREDENTIAL_UNAVAILABLE",
    `credential "${req?.credential ?? "?"}" no longer resolves; set it up again: ${envelope.next ?? ""}`,
    { credential: req?.credential ?? null, setup: req?.setup ?? [] },
  );
}
