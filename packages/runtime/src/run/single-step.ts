/**
 * Single-step runs (cli-tool, javascript, and answered agent tasks): execute once, redact,
 * seal the run's receipt, and record the outcome.
 */
import { sealReasonCode } from "../runners/outcome.js";
import { buildSkillReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Commitment, Reference } from "../receipts/index.js";
import {
  commitment,
  recordRunning,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
  runnerBaseEnv,
} from "./context.js";
import type { RunScope } from "./context.js";
import { makeEnvelope } from "../contracts/envelope.js";
import type { Disposition, RunClosure, SkillRunEnvelope } from "../contracts/envelope.js";
import { executeRunner } from "./execute.js";
import type { RunnerOutcome } from "./execute.js";
import { appendRunEvent } from "./ledger.js";
import { runStateRoots } from "./state-roots.js";

/** Where a single-step run starts from. */
export interface StepStart {
  /** The run record exists already (a resumed run). */
  runExists: boolean;
  /** The deferred receipt this run continues. */
  previous?: Reference;
}

/** Executes the selected process runner and seals. */
export async function runSingleStep(
  scope: RunScope,
  inputs: Record<string, unknown>,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const inputsDigest = hashCanonical(scope.taint.redactJson(inputs));
  const startedAt = receiptTimestamp(deps.now());
  // The child starts first (spawning is synchronous) and the run is recorded while it runs:
  // the state store's open and commit overlap the process instead of preceding it. A failed
  // record stops the child before the error propagates. The run's own signal (Ctrl-C) is
  // forwarded into `stop` while the child runs (AbortSignal.any would cost every run its
  // first-use set-up of weak references and a finalization registry).
  const stop = new AbortController();
  const forward = (): void => stop.abort(scope.signal.reason);
  if (scope.signal.aborted) forward();
  else scope.signal.addEventListener("abort", forward, { once: true });
  let outcome: RunnerOutcome;
  try {
    const running = executeRunner({
      runner: prep.runner,
      packageDir: prep.pkg.packageDir,
      workspaceRoot: deps.paths.root,
      scratchDir: `${deps.paths.runxDir}/runs/${prep.runId}`,
      inputs,
      baseEnv: runnerBaseEnv(scope, prep.runner),
      secrets: scope.secrets,
      strictInlineCode: deps.config().policy.strictCliToolInlineCode,
      signal: stop.signal,
      stateRoots: runStateRoots(scope),
    });
    // The runner can fail to start while the record below is written (a spawn error arrives
    // from the event loop); it is awaited further down, so it must not count as unhandled
    // meanwhile: an unhandled rejection ends the process (the CLI, or an API worker thread).
    running.catch(() => undefined);
    // Let the event loop run once before the synchronous store work: the child's stdin is
    // written and closed from the loop, and a child that reads its input to the end (as most
    // do) would otherwise wait for that end-of-file until the record is committed.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      await recordRunning(deps, prep, { runExists: start.runExists, inputsDigest }, async (tx) => {
        await tx.upsertStep({
          runId: prep.runId,
          stepId: prep.runner.name,
          status: "running",
          attempt: 1,
          startedAt,
        });
      });
    } catch (error) {
      stop.abort();
      await running.catch(() => undefined);
      throw error;
    }
    outcome = await running;
  } finally {
    scope.signal.removeEventListener("abort", forward);
  }
  return sealOutcome(scope, inputsDigest, outcome, start.previous);
}

/**
 * A finished step as sealed: a runner's outcome, or an agent act that closed itself with its
 * own disposition (whose answer stays the run's result: it is what the agent said).
 */
export type SealableOutcome = Omit<RunnerOutcome, "disposition" | "reasonCode"> & {
  disposition: Disposition;
  reasonCode: string;
  /** Keep the output as the envelope's result even when the act did not close. */
  keepResult?: boolean;
};

/** Seals a finished step as the run's receipt and records it; returns the sealed envelope. */
export async function sealOutcome(
  scope: RunScope,
  inputsDigest: string,
  outcome: SealableOutcome,
  previous?: Reference,
): Promise<SkillRunEnvelope> {
  const { deps, prep, taint } = scope;
  const output = taint.redactJson(outcome.output) as Record<string, unknown>;
  const summary = outcome.summary !== undefined ? taint.redactText(outcome.summary) : undefined;
  const closed = outcome.disposition === "closed";
  const reasonCode = sealReasonCode(outcome.reasonCode, prep.runner.artifacts);
  const declared = prep.runner.outputs;
  const claim =
    closed && declared !== undefined
      ? Object.fromEntries(
          Object.keys(declared)
            .filter((k) => k in output)
            .map((k) => [k, output[k]]),
        )
      : {};
  const commitments: Commitment[] = [
    commitment("input", inputsDigest),
    ...(closed ? [commitment("output", hashCanonical(output))] : []),
    ...(outcome.streams !== undefined
      ? [
          commitment("stdout", outcome.streams.stdoutSha256),
          commitment("stderr", outcome.streams.stderrSha256),
        ]
      : []),
  ];
  const createdAt = receiptTimestamp(deps.now());
  const receipt = sealReceipt(
    buildSkillReceipt({
      ...profiled(deps, {
        name: prep.pkg.name,
        createdAt,
        commitments,
        ...(outcome.boundary !== undefined ? { executionBoundary: outcome.boundary } : {}),
        idempotency: idempotencyFor(prep, inputsDigest, undefined, previous),
        // The declared-output claim is committed by the step identity (locator); it is
        // repeated here as an unsigned read aid so operators can see what is committed.
        metadata: {
          ...runMetadata(deps, prep),
          ...outcome.metadata,
          ...(Object.keys(claim).length > 0 ? { claim: taint.redactJson(claim) } : {}),
        },
      }),
      step: prep.runner.name,
      disposition: outcome.disposition,
      reasonCode,
      ...(closed
        ? {}
        : { sealSummary: summary ?? `step ${prep.runner.name} ${outcome.disposition}` }),
      ...(summary !== undefined && !closed ? { outcomeSummary: summary } : {}),
      claim: taint.redactJson(claim) as Record<string, never>,
      ...(previous !== undefined ? { lineage: { previous, resume_ref: previous } } : {}),
    }),
    deps.signer(),
  );
  const finishedAt = receiptTimestamp(deps.now());
  await storeReceipt(deps, prep, receipt, async (tx) => {
    await tx.upsertStep({
      runId: prep.runId,
      stepId: prep.runner.name,
      status: outcome.disposition,
      receiptId: receipt.id,
      outputJson: JSON.stringify({
        output,
        ...(outcome.streams !== undefined
          ? {
              stdout_tail: taint.redactText(outcome.streams.stdoutTail),
              stderr_tail: taint.redactText(outcome.streams.stderrTail),
              stdout_truncated: outcome.streams.stdoutTruncated,
              stderr_truncated: outcome.streams.stderrTruncated,
            }
          : {}),
      }),
      finishedAt,
    });
    await appendRunEvent(tx, prep.runId, {
      kind: "sealed",
      status: outcome.disposition,
      stepId: prep.runner.name,
      detail: { reason_code: reasonCode },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt: finishedAt,
      receiptId: receipt.id,
    });
    await tx.updateRun(prep.runId, {
      status: "sealed",
      disposition: outcome.disposition,
      receiptId: receipt.id,
      resultJson: JSON.stringify(output),
      requestsJson: null,
      ...(closed ? {} : { errorJson: JSON.stringify({ summary: summary ?? null }) }),
    });
  });
  const closure: RunClosure = {
    disposition: outcome.disposition,
    reason_code: reasonCode,
    summary: receipt.seal.summary,
  };
  return makeEnvelope({
    status: "sealed",
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    runId: prep.runId,
    receiptId: receipt.id,
    closure,
    result: closed || outcome.keepResult === true ? output : null,
  });
}
