/**
 * `runx skill`: resolve a package, admit inputs and policy, then execute the selected runner
 * (or pause for what it needs) and return the run envelope. Failures before the package and
 * runner resolve produce no receipt; refusals after that seal a `blocked` receipt.
 */
import { RuntimeError, isRuntimeError } from "../errors.js";
import { resolveInputs, suppliedFromDocument } from "../parser/inputs.js";
import type { MissingInput, SuppliedInput } from "../parser/inputs.js";
import { detectInlineCode } from "../policy/inline-code.js";
import { admitLocalSkill } from "../policy/local-admission.js";
import { buildRefusalReceipt, sealReceipt } from "../receipts/index.js";
import { createTaintSet } from "../redaction.js";
import type { TaintSet } from "../redaction.js";
import { displayPath } from "../workspace.js";
import {
  idempotencyFor,
  profiled,
  markRunFailed,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
} from "./context.js";
import type { Prepared, RunScope, RunSkillDeps } from "./context.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { admitCredential } from "./credential.js";
import { assertRunnerSupported } from "./execute.js";
import type { RunOrigin } from "./origin.js";
import { pauseRun } from "./pause.js";
import { prepareRun } from "./prepare.js";
import { runSingleStep } from "./single-step.js";
import type { StepStart } from "./single-step.js";

export type { RunSkillDeps } from "./context.js";
export { receiptTimestamp } from "./context.js";

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
  /** Refuse to run unless the execution-closure digest equals this. */
  executionClosureDigest?: string;
  /** `--allow-spawn` (or a console/API grant): adapter dispatches of this run may launch. */
  allowSpawn?: AllowSpawn;
  /** A run id minted by the caller (the console records the initiator before the run starts). */
  runId?: string;
  /** For a registry ref (`owner/name@version`): the expected package digest (`--digest`). */
  registryDigest?: string;
  /** The entry point and person starting the run (the run ledger's `run_started` line). */
  origin?: RunOrigin;
  /** `--profile`: the stored credential profile for the runner's declared credential. */
  profile?: string;
}

/** Runs a skill to a sealed, paused or refused envelope. */
export async function runSkill(
  deps: RunSkillDeps,
  request: SkillRequest,
  signal: AbortSignal,
): Promise<SkillRunEnvelope> {
  const prep = await prepareRun(deps, {
    ref: request.ref,
    ...(request.runner !== undefined ? { runner: request.runner } : {}),
    ...(request.runId !== undefined ? { runId: request.runId } : {}),
    ...(request.registryDigest !== undefined ? { registryDigest: request.registryDigest } : {}),
    ...(request.origin !== undefined ? { origin: request.origin } : {}),
    contextExtras: {
      supplied_input_keys: Object.keys(request.inputs).sort(),
      inputs_document: request.inputsFile !== undefined,
      secret_env: [...request.secretEnv].sort(),
    },
  });
  const taint = createTaintSet([]);
  const scope: RunScope = {
    deps,
    prep,
    secrets: {},
    taint,
    signal,
    spawnAuthority: spawnAuthorityOf(request.allowSpawn),
  };
  return withRefusal(scope, async (stage) => {
    stage("admit_secrets");
    scope.secrets = deliverSecrets(deps, request.secretEnv, taint);
    stage("admit_credential");
    const needsCredential = await admitCredential(scope, request.profile);
    if (needsCredential !== undefined) return needsCredential;
    stage("materialize_inputs");
    const supplied =
      request.inputsFile !== undefined
        ? await readSuppliedDocument(deps, request.inputsFile)
        : request.inputs;
    stage("admit_package");
    checkBindings(prep, request.packageDigest, request.executionClosureDigest);
    stage("admit_runner");
    assertRunnerSupported(prep.runner);
    stage("admit_policy");
    admitPolicy(scope);
    stage("validate_inputs");
    return continueWithInputs(scope, supplied, { runExists: false });
  });
}

/**
 * Resolves supplied inputs against the runner's declarations, then either pauses for the
 * missing ones or executes. Shared by a fresh run and a resumed input pause.
 */
export async function continueWithInputs(
  scope: RunScope,
  supplied: Record<string, SuppliedInput>,
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const { values, missing } = resolveInputs(scope.prep.runner.inputs, supplied);
  if (missing.length > 0) return pauseForInputs(scope, supplied, missing, start);
  const type = scope.prep.runner.type;
  // Agent and graph machinery (managed agent, tool catalog, graph engine) load on demand, so a
  // plain process run does not pay for them at start-up.
  if (type === "agent-task" || type === "agent") {
    const { runAgentTask } = await import("./agent-step.js");
    return runAgentTask(scope, values, start);
  }
  if (type === "graph") {
    const { runGraph } = await import("./graph-run.js");
    return runGraph(scope, values, start);
  }
  if (type === "adapter") {
    const { runAdapterStep } = await import("./adapter-step.js");
    return runAdapterStep(scope, values, start);
  }
  return runSingleStep(scope, values, start);
}

function pauseForInputs(
  scope: RunScope,
  supplied: Record<string, SuppliedInput>,
  missing: MissingInput[],
  start: StepStart,
): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const requestId = `input.${prep.pkg.name}.${missing.map((m) => m.id).join(".")}`;
  const values = Object.fromEntries(Object.entries(supplied).map(([k, v]) => [k, v.value]));
  return pauseRun(scope, {
    kind: "inputs",
    requests: [{ id: requestId, kind: "input", questions: missing }],
    inputs: values,
    reasonCode: "input_required",
    summary: `waiting for input: ${missing.map((m) => m.id).join(", ")}`,
    runExists: start.runExists,
    ...(start.previous !== undefined ? { previous: start.previous } : {}),
    next: `runx skill ${displayPath(deps.paths.root, prep.pkg.graphDocumentPath ?? prep.pkg.packageDir)} ${missing
      .map((m) => `--${m.id.replaceAll("_", "-")} <${m.type}>`)
      .join(" ")}   (or: runx resume ${prep.runId} <answers.json>)`,
  });
}

/** Reads `--inputs <file|->` (loaded on demand: most runs pass their inputs as flags). */
async function readSuppliedDocument(
  deps: RunSkillDeps,
  inputsFile: string,
): Promise<Record<string, SuppliedInput>> {
  const { readInputsDocument } = await import("../packages/inputs-document.js");
  return suppliedFromDocument(
    await readInputsDocument(inputsFile, {
      workspaceRoot: deps.paths.root,
      readStdin: () => deps.readStdin(),
    }),
  );
}

/**
 * Spawn authority given by an operator-originated invocation:
 * `true` is the CLI's `--allow-spawn` (the local operator); the console and the API name the
 * authenticated principal who granted it. Never read from inputs, skill defaults or models.
 */
export type AllowSpawn = boolean | { source: "console" | "api"; principal: string };

/** Spawn authority from the operator's own grant; graph inputs and model output never grant it. */
export function spawnAuthorityOf(allowSpawn: AllowSpawn | undefined): RunScope["spawnAuthority"] {
  if (allowSpawn === true) {
    return { granted: true, source: "cli", principal: "runx:principal:local_operator" };
  }
  if (typeof allowSpawn === "object" && allowSpawn.principal !== "") {
    return { granted: true, source: allowSpawn.source, principal: allowSpawn.principal };
  }
  return { granted: false, source: null, principal: null };
}

/** Reads `--secret-env` variables, adding each value to the taint set. */
export function deliverSecrets(
  deps: RunSkillDeps,
  names: readonly string[],
  taint: TaintSet,
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const name of names) {
    const value = (deps.workspaceEnv ?? deps.env)[name];
    if (value === undefined || value === "") {
      throw new RuntimeError("INPUT_INVALID", `--secret-env ${name}: the variable is not set`, {
        path: `secret_env.${name}`,
      });
    }
    secrets[name] = value;
    taint.add(value);
  }
  return secrets;
}

/** Refuses a run whose package or closure digest differs from the caller's binding. */
export function checkBindings(
  prep: Prepared,
  packageDigest: string | undefined,
  closureDigest: string | undefined,
): void {
  if (packageDigest !== undefined && packageDigest !== prep.packageDigest) {
    throw new RuntimeError("POLICY_DENIED", "the package digest does not match the bound digest", {
      expected: packageDigest,
      actual: prep.packageDigest,
    });
  }
  if (closureDigest !== undefined && closureDigest !== prep.closureDigest) {
    throw new RuntimeError(
      "POLICY_DENIED",
      "the execution-closure digest does not match the bound digest",
      { expected: closureDigest, actual: prep.closureDigest },
    );
  }
}

/**
 * Project policy checked before anything runs: local admission of the selected runner (the
 * strict inline-code rule when the project enables it). runx has no connected-auth grants, so
 * that part of admission is skipped; runners enforce their own timeout ranges.
 */
export function admitPolicy(scope: RunScope): void {
  const { runner, pkg } = scope.prep;
  const source =
    runner.type === "cli-tool"
      ? { type: runner.type, command: runner.command, args: runner.args }
      : { type: runner.type };
  const decision = admitLocalSkill(
    { name: pkg.name, source },
    {
      skipConnectedAuth: true,
      strictCliToolInlineCode: scope.deps.config().policy.strictCliToolInlineCode,
    },
  );
  if (decision.status === "allow") return;
  const hit = runner.type === "cli-tool" ? detectInlineCode(runner.command, runner.args) : null;
  throw new RuntimeError("POLICY_DENIED", decision.reasons.join("; "), {
    reasons: decision.reasons,
    ...(hit !== null
      ? { policy: "strict_cli_tool_inline_code", interpreter: hit.interpreter, flag: hit.flag }
      : {}),
  });
}

/**
 * Runs `body`; a RuntimeError it raises (other than one that already carries a sealed
 * receipt) is turned into a sealed `blocked` refusal receipt naming the stage it failed in.
 */
export async function withRefusal<T>(
  scope: RunScope,
  body: (stage: (name: string) => void) => Promise<T>,
): Promise<T> {
  let current = "prepare";
  try {
    return await body((name) => {
      current = name;
    });
  } catch (error) {
    if (!isRuntimeError(error) || typeof error.details.receipt_id === "string") throw error;
    throw await refuse(scope, current, error);
  }
}

async function refuse(scope: RunScope, stage: string, error: RuntimeError): Promise<RuntimeError> {
  const { deps, prep, taint } = scope;
  const message = taint.redactText(error.message);
  await markRunFailed(await deps.runState(), prep.runId);
  const receipt = sealReceipt(
    buildRefusalReceipt({
      ...profiled(deps, {
        name: prep.pkg.name,
        createdAt: receiptTimestamp(deps.now()),
        idempotency: idempotencyFor(prep, prep.preparedContextDigest),
        metadata: runMetadata(deps, prep),
      }),
      step: prep.runner.name,
      failure: {
        code: error.code,
        message,
        prepared_context_digest: prep.preparedContextDigest,
        stage,
      },
    }),
    deps.signer(),
  );
  await storeReceipt(deps, prep, receipt, (tx) => markRunFailed(tx, prep.runId, receipt.id));
  const details = taint.redactJson(error.details) as Record<string, unknown>;
  return new RuntimeError(error.code, message, {
    ...details,
    receipt_id: receipt.id,
    prepared_context_digest: prep.preparedContextDigest,
    stage,
  });
}
