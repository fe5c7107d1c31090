/**
 * `runx skill`: resolve a package, admit inputs and policy, execute the selected runner
 * under supervision, redact, seal and store the receipt, and return the run envelope.
 * Failures before the package and runner resolve produce no receipt; refusals after that
 * seal a `blocked` receipt (spec §4.7).
 */
import { RuntimeError, isRuntimeError } from "../errors.js";
import type { ProjectConfig } from "../config.js";
import { computePackageDigest } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import { loadPackageCached } from "../packages/package-cache.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { readInputsDocument } from "../packages/inputs-document.js";
import { selectRunner } from "../parser/select-runner.js";
import { resolveInputs, suppliedFromDocument } from "../parser/inputs.js";
import type { MissingInput, SuppliedInput } from "../parser/inputs.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import { detectInlineCode } from "../policy/inline-code.js";
import {
  buildRefusalReceipt,
  buildSkillReceipt,
  hashCanonical,
  sealReceipt,
} from "../receipts/index.js";
import type { Commitment, Receipt, ReceiptSigner, ReceiptStore } from "../receipts/index.js";
import { createTaintSet } from "../redaction.js";
import type { StateStore } from "../store/types.js";
import type { WorkspacePaths } from "../workspace.js";
import { displayPath } from "../workspace.js";
import { makeEnvelope } from "./envelope.js";
import type { RunClosure, SkillRunEnvelope } from "./envelope.js";
import { appendRunEvent } from "./ledger.js";
import { assertRunnerSupported, executeRunner } from "./execute.js";

/** What the caller asks for. */
export interface SkillRequest {
  ref: string;
  runner?: string;
  /** Per-key inputs from flags (exclusive with `inputsFile`). */
  inputs: Record<string, SuppliedInput>;
  /** `--inputs` argument: a workspace path or `-`. */
  inputsFile?: string;
  /** Names of environment variables delivered as secrets (`--secret-env`). */
  secretEnv: string[];
  /** Refuse to run unless the package digest equals this. */
  packageDigest?: string;
}

/** Services a run needs, supplied by the composition root. */
export interface RunSkillDeps {
  paths: WorkspacePaths;
  env: Readonly<Record<string, string | undefined>>;
  runtimeRelease: string;
  signer(): ReceiptSigner;
  receipts(): ReceiptStore;
  state(): StateStore;
  config(): ProjectConfig;
  now(): Date;
  randomHex(bytes: number): string;
  readStdin(): AsyncIterable<Uint8Array | string>;
}

/** Receipt timestamps: RFC 3339 UTC at second precision, like upstream. */
export function receiptTimestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

interface Prepared {
  pkg: LoadedSkillPackage;
  runner: RunnerDefinition;
  runId: string;
  packageDigest: string;
  closureDigest: string;
  preparedContextDigest: string;
}

/** Runs a skill to a sealed, paused or refused envelope. */
export async function runSkill(
  deps: RunSkillDeps,
  request: SkillRequest,
  signal: AbortSignal,
): Promise<SkillRunEnvelope> {
  const root = deps.paths.root;
  const resolved = await resolveSkillRef(request.ref, { workspaceRoot: root });
  const packageDigest = await computePackageDigest(resolved.packageDir);
  const pkg = await loadPackageCached(resolved, packageDigest, {
    dir: `${deps.paths.runxDir}/cache/packages`,
    runtimeRelease: deps.runtimeRelease,
  });
  const runner = selectRunner(pkg, request.runner);
  const closureDigest = hashCanonical({
    runtime_release: deps.runtimeRelease,
    package_bindings: [{ skill: pkg.name, runner: runner.name, package_digest: packageDigest }],
  });
  const runId = `run_${runner.name.replace(/[^A-Za-z0-9_-]/g, "_")}_${deps.randomHex(8)}`;
  const prep: Prepared = {
    pkg,
    runner,
    runId,
    packageDigest,
    closureDigest,
    preparedContextDigest: hashCanonical({
      skill_path: displayPath(root, pkg.packageDir),
      runner: runner.name,
      runner_type: runner.type,
      package_digest: packageDigest,
      supplied_input_keys: Object.keys(request.inputs).sort(),
      inputs_document: request.inputsFile !== undefined,
      secret_env: [...request.secretEnv].sort(),
    }),
  };

  // Secrets are known before anything else so every later message can be scrubbed.
  const secrets: Record<string, string> = {};
  const taint = createTaintSet([]);
  let stage = "admit_secrets";
  try {
    for (const name of request.secretEnv) {
      const value = deps.env[name];
      if (value === undefined || value === "") {
        throw new RuntimeError("INPUT_INVALID", `--secret-env ${name}: the variable is not set`, {
          path: `secret_env.${name}`,
        });
      }
      secrets[name] = value;
      taint.add(value);
    }
    stage = "materialize_inputs";
    const supplied =
      request.inputsFile !== undefined
        ? suppliedFromDocument(
            await readInputsDocument(request.inputsFile, {
              workspaceRoot: root,
              readStdin: () => deps.readStdin(),
            }),
          )
        : request.inputs;
    stage = "validate_inputs";
    const { values, missing } = resolveInputs(runner.inputs, supplied);
    stage = "admit_package";
    if (request.packageDigest !== undefined && request.packageDigest !== packageDigest) {
      throw new RuntimeError(
        "POLICY_DENIED",
        "the package digest does not match --package-digest; the package changed",
        { expected: request.packageDigest, actual: packageDigest },
      );
    }
    stage = "admit_runner";
    assertRunnerSupported(runner);
    stage = "admit_policy";
    if (runner.type === "cli-tool" && deps.config().policy.strictCliToolInlineCode) {
      const hit = detectInlineCode(runner.command, runner.args);
      if (hit !== null) {
        throw new RuntimeError(
          "POLICY_DENIED",
          `policy strict_cli_tool_inline_code refuses inline code: ${hit.interpreter} ${hit.flag}; move the program into a script file in the package`,
          { interpreter: hit.interpreter, flag: hit.flag },
        );
      }
    }
    if (missing.length > 0) return await pauseForInputs(deps, prep, missing);
    return await execute(deps, prep, values, secrets, taint, signal);
  } catch (error) {
    if (!isRuntimeError(error) || isSealedFailure(error)) throw error;
    throw await refuse(deps, prep, stage, error, taint);
  }
}

function isSealedFailure(error: RuntimeError): boolean {
  return typeof error.details.receipt_id === "string";
}

function createRunRecord(deps: RunSkillDeps, prep: Prepared, inputsDigest: string): void {
  deps.state().createRun({
    id: prep.runId,
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    skillRef: displayPath(deps.paths.root, prep.pkg.packageDir),
    packageDir: displayPath(deps.paths.root, prep.pkg.packageDir),
    packageDigest: prep.packageDigest,
    executionClosureDigest: prep.closureDigest,
    inputsDigest,
  });
}

/**
 * Writes the sealed receipt (durably, to the receipt store), then indexes it and applies the
 * run's state changes (`andThen`) in one state-store transaction.
 */
async function storeReceipt(
  deps: RunSkillDeps,
  prep: Prepared,
  receipt: Receipt,
  andThen: () => void = () => undefined,
): Promise<void> {
  const outcome = await deps.receipts().write(receipt);
  const state = deps.state();
  state.transaction(() => {
    state.indexReceipt({
      receiptId: receipt.id,
      runId: prep.runId,
      skillName: prep.pkg.name,
      disposition: receipt.seal.disposition,
      createdAt: receipt.created_at,
      fileName: outcome.file_name,
    });
    andThen();
  });
}

/**
 * Live-run idempotency commitments: the intent (skill, runner, package), the trigger (this
 * run) and the content (its inputs). Binding the run id makes two otherwise identical runs in
 * the same second distinct receipts instead of colliding content addresses.
 */
function idempotencyFor(prep: Prepared, inputsDigest: string): Receipt["idempotency"] {
  return {
    intent_key: hashCanonical({
      skill: prep.pkg.name,
      runner: prep.runner.name,
      package_digest: prep.packageDigest,
    }),
    trigger_fingerprint: hashCanonical({ run_id: prep.runId }),
    content_hash: inputsDigest,
  };
}

function runMetadata(deps: RunSkillDeps, prep: Prepared): Record<string, string> {
  return {
    run_id: prep.runId,
    skill: prep.pkg.name,
    runner: prep.runner.name,
    runner_type: prep.runner.type,
    package: displayPath(deps.paths.root, prep.pkg.packageDir),
    package_digest: prep.packageDigest,
    execution_closure_digest: prep.closureDigest,
    runtime_release: deps.runtimeRelease,
  };
}

/** Seals a `blocked` refusal receipt and returns the error to raise, carrying its id. */
async function refuse(
  deps: RunSkillDeps,
  prep: Prepared,
  stage: string,
  error: RuntimeError,
  taint: ReturnType<typeof createTaintSet>,
): Promise<RuntimeError> {
  const message = taint.redactText(error.message);
  markRunFailed(deps, prep.runId);
  const createdAt = receiptTimestamp(deps.now());
  const receipt = sealReceipt(
    buildRefusalReceipt({
      name: prep.pkg.name,
      step: prep.runner.name,
      createdAt,
      idempotency: idempotencyFor(prep, prep.preparedContextDigest),
      metadata: runMetadata(deps, prep),
      failure: {
        code: error.code,
        message,
        prepared_context_digest: prep.preparedContextDigest,
        stage,
      },
    }),
    deps.signer(),
  );
  await storeReceipt(deps, prep, receipt, () => markRunFailed(deps, prep.runId, receipt.id));
  const details = taint.redactJson(error.details) as Record<string, unknown>;
  return new RuntimeError(error.code, message, {
    ...details,
    receipt_id: receipt.id,
    prepared_context_digest: prep.preparedContextDigest,
    stage,
  });
}

/** Marks a run record (if one was created) as failed/blocked. */
function markRunFailed(deps: RunSkillDeps, runId: string, receiptId?: string): void {
  try {
    deps.state().updateRun(runId, {
      status: "failure",
      disposition: "blocked",
      ...(receiptId !== undefined ? { receiptId } : {}),
    });
  } catch (error) {
    if (!isRuntimeError(error) || error.code !== "RUN_NOT_FOUND") throw error;
  }
}

async function pauseForInputs(
  deps: RunSkillDeps,
  prep: Prepared,
  missing: MissingInput[],
): Promise<SkillRunEnvelope> {
  const requestId = `input.${prep.pkg.name}.${missing.map((m) => m.id).join(".")}`;
  const requests = [{ id: requestId, kind: "input" as const, questions: missing }];
  const createdAt = receiptTimestamp(deps.now());
  const receipt = sealReceipt(
    buildSkillReceipt({
      name: prep.pkg.name,
      step: prep.runner.name,
      createdAt,
      disposition: "deferred",
      reasonCode: "input_required",
      sealSummary: `waiting for input: ${missing.map((m) => m.id).join(", ")}`,
      succeeded: false,
      outcomeSummary: "required inputs were not supplied",
      idempotency: idempotencyFor(prep, hashCanonical({})),
      metadata: runMetadata(deps, prep),
    }),
    deps.signer(),
  );
  await storeReceipt(deps, prep, receipt, () => {
    createRunRecord(deps, prep, hashCanonical({}));
    appendRunEvent(deps.state(), prep.runId, {
      kind: "resolution_requested",
      status: "waiting",
      detail: {
        resume_skill_ref: displayPath(deps.paths.root, prep.pkg.packageDir),
        selected_runner: prep.runner.name,
        package_digest: prep.packageDigest,
        execution_closure_digest: prep.closureDigest,
        request_ids: [requestId],
      },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt,
      receiptId: receipt.id,
    });
    deps.state().updateRun(prep.runId, {
      status: "needs_agent",
      disposition: "deferred",
      receiptId: receipt.id,
      requestsJson: JSON.stringify(requests),
    });
  });
  return makeEnvelope({
    status: "needs_agent",
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    runId: prep.runId,
    receiptId: receipt.id,
    closure: {
      disposition: "deferred",
      reason_code: "input_required",
      summary: receipt.seal.summary,
    },
    result: null,
    requests,
    next: `runx skill ${displayPath(deps.paths.root, prep.pkg.packageDir)} ${missing
      .map((m) => `--${m.id.replaceAll("_", "-")} <${m.type}>`)
      .join(" ")}`,
  });
}

function commitment(scope: Commitment["scope"], value: string): Commitment {
  return { scope, algorithm: "sha256", value, canonicalization: "runx.stable-json.v1" };
}

async function execute(
  deps: RunSkillDeps,
  prep: Prepared,
  inputs: Record<string, unknown>,
  secrets: Record<string, string>,
  taint: ReturnType<typeof createTaintSet>,
  signal: AbortSignal,
): Promise<SkillRunEnvelope> {
  const inputsDigest = hashCanonical(taint.redactJson(inputs));
  const startedAt = receiptTimestamp(deps.now());
  deps.state().transaction(() => {
    createRunRecord(deps, prep, inputsDigest);
    deps.state().upsertStep({
      runId: prep.runId,
      stepId: prep.runner.name,
      status: "running",
      attempt: 1,
      startedAt,
    });
  });
  const outcome = await executeRunner({
    runner: prep.runner,
    packageDir: prep.pkg.packageDir,
    workspaceRoot: deps.paths.root,
    scratchDir: `${deps.paths.runxDir}/runs/${prep.runId}`,
    inputs,
    baseEnv: deps.env,
    secrets,
    strictInlineCode: deps.config().policy.strictCliToolInlineCode,
    signal,
  });
  const output = taint.redactJson(outcome.output) as Record<string, unknown>;
  const summary = outcome.summary !== undefined ? taint.redactText(outcome.summary) : undefined;
  const closed = outcome.disposition === "closed";
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
      name: prep.pkg.name,
      step: prep.runner.name,
      createdAt,
      disposition: outcome.disposition,
      reasonCode: outcome.reasonCode,
      ...(closed
        ? {}
        : { sealSummary: summary ?? `step ${prep.runner.name} ${outcome.disposition}` }),
      ...(summary !== undefined && !closed ? { outcomeSummary: summary } : {}),
      claim: taint.redactJson(claim) as Record<string, never>,
      commitments,
      executionBoundary: outcome.boundary,
      idempotency: idempotencyFor(prep, inputsDigest),
      metadata: { ...runMetadata(deps, prep), ...outcome.metadata },
    }),
    deps.signer(),
  );
  const finishedAt = receiptTimestamp(deps.now());
  await storeReceipt(deps, prep, receipt, () => {
    deps.state().upsertStep({
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
    appendRunEvent(deps.state(), prep.runId, {
      kind: "sealed",
      status: outcome.disposition,
      stepId: prep.runner.name,
      detail: { reason_code: outcome.reasonCode },
      producer: { skill: prep.pkg.name, runner: prep.runner.name },
      createdAt: finishedAt,
      receiptId: receipt.id,
    });
    deps.state().updateRun(prep.runId, {
      status: "sealed",
      disposition: outcome.disposition,
      receiptId: receipt.id,
      resultJson: JSON.stringify(output),
      ...(closed ? {} : { errorJson: JSON.stringify({ summary: summary ?? null }) }),
    });
  });
  const closure: RunClosure = {
    disposition: outcome.disposition,
    reason_code: outcome.reasonCode,
    summary: receipt.seal.summary,
  };
  return makeEnvelope({
    status: "sealed",
    skillName: prep.pkg.name,
    runner: prep.runner.name,
    runId: prep.runId,
    receiptId: receipt.id,
    closure,
    result: closed ? output : null,
  });
}
