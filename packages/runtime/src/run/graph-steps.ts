/**
 * Executes one planned graph step — a native tool, a nested skill, an inline `run` source or
 * an approval — and seals its child receipt. Returns the machine's outcome for the step.
 */
import { resolveContextSkills } from "../agents/context-skills.js";
import { runManagedAgent } from "../agents/managed-agent.js";
import { agentActForRunner, agentRequestId, validateAgentAnswer } from "../agents/request.js";
import { FAILURE_CATEGORY, RuntimeError, isRuntimeError } from "../errors.js";
import { artifactEnvelope, packageArtifacts } from "../graph/artifacts.js";
import type { ExecuteStepAction, GraphDoc, GraphStep, StepOutcome } from "../graph/index.js";
import { approvalDecisionPacket, stepById } from "../graph/index.js";
import type { LoadedSkillPackage } from "../packages/resolve.js";
import { resolveInputs } from "../parser/inputs.js";
import type { JsonObject } from "../parser/json.js";
import { normalizeRunner } from "../parser/runners.js";
import { admitGraphStepScopes } from "../policy/scopes.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import type { Receipt } from "../receipts/index.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { ApprovalDecision } from "../tools/types.js";
import { asAgentTask } from "./agent-step.js";
import { agentClosure, withoutClosure } from "../contracts/agent-closure.js";
import { stepKey, runnerBaseEnv } from "./context.js";
import type { RunScope } from "./context.js";
import { executeRunner } from "./execute.js";
import { appendRunEvent } from "./ledger.js";
import type { SealOutcome } from "./graph-stop.js";
import { loadNestedPackage } from "./graph-prepare.js";
import type { AdvanceGraph } from "./graph-stop.js";
import { runNestedGraph } from "./nested-graph.js";
import { failureReason, sealStepReceipt, settlementOf } from "./step-receipt.js";
import { dataReceiptFacts } from "../data/receipt-facts.js";
import { effectReceiptFacts } from "../tools/payment/receipt-facts.js";
import { runStateRoots } from "./state-roots.js";
import { invokeTool } from "./tools.js";
import { STEP_CLOSED, sealReasonCode } from "../runners/outcome.js";

/** Tool failure codes that mean the tool refused before attempting anything. */
const REFUSAL_CODES = new Set([
  "PROVIDER_MISMATCH",
  "NETWORK_DENIED",
  "POLICY_DENIED",
  "PATH_ESCAPE",
  "IDEMPOTENCY_KEY_REQUIRED",
]);

/** A step's machine outcome plus the child receipt that proves it (none for a pause). */
export interface StepResult {
  outcome: StepOutcome;
  receipt?: Receipt;
  /** A managed agent's proposed tool input, by the gate it paused on (the inbox previews it). */
  gateInputs?: Record<string, JsonObject>;
}

export type { SealOutcome } from "./graph-stop.js";

/** The output key an approval step's decision packet is wrapped under (`artifacts.wrap_as`). */
function wrapName(step: GraphStep): string {
  const wrap = step.artifacts?.wrap_as;
  return typeof wrap === "string" && wrap !== "" ? wrap : "approval_decision";
}

/**
 * The scopes a step may exercise: its own, which must lie inside the graph runner's grant
 * (exact-string matching); a graph without a grant does not attenuate.
 */
export function grantedScopes(scope: RunScope, step: GraphStep): string[] {
  const grant = scope.prep.runner.scopes;
  const own = step.scopes.length > 0 ? step.scopes : grant;
  if (grant.length === 0) return own;
  const admission = admitGraphStepScopes({
    stepId: step.id,
    requestedScopes: own,
    grant: { scopes: grant },
  });
  if (admission.status === "deny") {
    const outside = admission.requestedScopes.filter((s) => !grant.includes(s));
    throw new RuntimeError("POLICY_DENIED", admission.reasons.join("; "), {
      step: step.id,
      scopes: outside,
    });
  }
  return own;
}

/** Resolves a nested skill reference relative to the graph's package. */
export async function nestedRunner(
  scope: RunScope,
  step: GraphStep & { kind: "skill" },
): Promise<{
  runner: RunnerDefinition;
  packageDir: string;
  body: string;
  name: string;
  pkg?: LoadedSkillPackage;
}> {
  const { pkg, runner } = await loadNestedPackage(scope.deps, scope.prep.pkg, step);
  return { runner, packageDir: pkg.packageDir, body: pkg.body, name: pkg.name, pkg };
}

/** An inline `run: {type: cli-tool|javascript|agent-task|adapter, …}` source as a runner. */
function inlineRunner(step: GraphStep & { kind: "run" }): RunnerDefinition {
  return normalizeRunner(step.id, step.run, {
    path: ["steps", step.index, "run"],
    fail: (path, message) => {
      throw new RuntimeError("GRAPH_INVALID", `step ${step.id}: ${message}`, {
        step: step.id,
        path: path.join("."),
      });
    },
  });
}

/**
 * An agent step with no supplied answer: resolved in-process by the managed agent when one is
 * configured (the same tool admission, scopes and approvals as a top-level agent task: a gated
 * tool call pauses the graph `needs_approval` and the act runs again once it is decided), else
 * a `needs_agent` pause for the caller's answer.
 */
async function runAgentStep(
  scope: RunScope,
  step: GraphStep,
  runner: RunnerDefinition,
  skill: { name: string; body: string; packageDir: string },
  inputs: JsonObject,
  catalog: ToolCatalog,
  approvals: Record<string, { approved: boolean; reason?: string }>,
  seal: (outcome: SealOutcome, status: StepOutcome["status"]) => Promise<StepResult>,
  artifacts: Parameters<typeof packageArtifacts>[1],
): Promise<StepResult> {
  const task = asAgentTask(runner, skill.name);
  const { deps } = scope;
  const currentContext = await resolveContextSkills(task.context_skills ?? [], {
    packageDir: skill.packageDir,
    workspaceRoot: deps.paths.root,
    ...(deps.registry !== undefined ? { registryDir: deps.registry().root } : {}),
  });
  const request = agentActForRunner(task, {
    skill: skill.name,
    skillBody: skill.body,
    ...(step.instructions !== undefined ? { stepInstructions: step.instructions } : {}),
    inputs,
    runId: scope.prep.runId,
    stepId: step.id,
    currentContext,
  });
  const settings = deps.agentConfig !== undefined ? await deps.agentConfig() : undefined;
  if (settings === undefined) return { outcome: { status: "needs_agent", requests: [request] } };
  // The tools run under the runner's declared scopes, narrowed to what the graph grants.
  const granted = grantedScopes(scope, step);
  const scopes =
    task.scopes.length > 0
      ? task.scopes.filter((s) => granted.length === 0 || granted.includes(s))
      : granted;
  const tools = (task.allowed_tools ?? []).flatMap((name) => {
    const tool = catalog.get(name);
    return tool === undefined ? [] : [tool];
  });
  const decisions = new Map<string, ApprovalDecision>(Object.entries(approvals));
  const result = await runManagedAgent({
    settings,
    request,
    ...(task.outputs !== undefined ? { outputs: task.outputs } : {}),
    tools,
    callTool: (name, input) =>
      invokeTool(scope, catalog, name, input, {
        stepId: stepKey(scope, step.id),
        scopes,
        approvals: decisions,
      }),
    taint: scope.taint,
    signal: scope.signal,
  });
  if (result.status === "needs_approval") {
    return {
      outcome: { status: "needs_approval", requests: [result.request] },
      gateInputs: { [result.request.id]: result.input },
    };
  }
  if (result.status === "failure") {
    return seal(
      {
        disposition: "failed",
        reasonCode: "process_failed",
        output: {},
        summary: `${result.code}: ${result.reason}`,
        boundary: "remote_provider",
        metadata: {
          answered_by: "managed_agent",
          failure_code: result.code,
          rounds: result.rounds,
        },
      },
      "failure",
    );
  }
  return sealAgentAnswer(
    seal,
    result.output,
    artifacts,
    { answered_by: "managed_agent", model: result.model, rounds: result.rounds },
    "remote_provider",
  );
}

/**
 * Seals an agent step's answer: a completed step, unless the agent closed its act with another
 * disposition (a refusal fails the step with that disposition, so the graph never reads it as
 * done; a `blocked` step makes the graph `blocked`).
 */
async function sealAgentAnswer(
  seal: (outcome: SealOutcome, status: StepOutcome["status"]) => Promise<StepResult>,
  answer: JsonObject,
  artifacts: Parameters<typeof packageArtifacts>[1],
  metadata: SealOutcome["metadata"],
  boundary?: SealOutcome["boundary"],
): Promise<StepResult> {
  const closure = agentClosure(answer);
  const base = { metadata, ...(boundary !== undefined ? { boundary } : {}) };
  if (closure !== null && closure.disposition !== "closed") {
    return seal(
      {
        ...base,
        disposition: closure.disposition,
        reasonCode: closure.reasonCode,
        summary: closure.summary,
        output: {},
      },
      closure.disposition === "declined" ? "declined" : "failure",
    );
  }
  return seal(
    {
      ...base,
      disposition: "closed",
      reasonCode: closure === null ? sealReasonCode(STEP_CLOSED, artifacts) : closure.reasonCode,
      output: packageArtifacts(withoutClosure(answer), artifacts),
    },
    "success",
  );
}

/**
 * The input a tool step hands its tool. Context edges join the step's input namespace (a
 * declared input may read `$input.<name>`); one the tool does not declare as an input field
 * is context for the step, not a tool argument, so it is not passed to the tool's closed
 * input contract. Declared inputs always pass (the tool refuses unknown ones).
 */
export function toolInput(
  catalog: ToolCatalog,
  step: GraphStep & { kind: "tool" },
  resolved: JsonObject,
): JsonObject {
  const props = catalog.get(step.tool)?.inputSchema.properties;
  const fields = props !== null && typeof props === "object" && !Array.isArray(props) ? props : {};
  const out: JsonObject = { ...resolved };
  for (const name of Object.keys(step.context)) {
    if (!Object.hasOwn(fields, name) && !Object.hasOwn(step.inputs, name)) delete out[name];
  }
  return out;
}

/** Who decided a gate: the console's authenticated operators, else the local CLI operator. */
function attestedApprover(scope: RunScope, gateId: string): string {
  const term = scope.deps.attestedApprovals?.find((t) => t.term_id === `approval:${gateId}`);
  if (term === undefined) return "local-operator (host-attested via runx resume)";
  const names = term.approvals.map((a) => a.approved_by_ref?.label ?? "unknown").join(", ");
  return `${names} (host-attested via the runx console)`;
}

/**
 * Appends the step's `step_started` ledger line (the event history's start of an attempt,
 * also of one that pauses before it seals) and returns its time for the step row.
 */
async function recordStepStarted(
  scope: RunScope,
  stepId: string,
  attempt: number,
): Promise<string> {
  const { deps, prep } = scope;
  const at = deps.now().toISOString();
  await appendRunEvent(await deps.runState(), prep.runId, {
    kind: "step_started",
    status: "running",
    stepId: stepKey(scope, stepId),
    detail: { attempt },
    producer: { skill: prep.pkg.name, runner: prep.runner.name },
    createdAt: at,
  });
  return at;
}

/** Runs one planned step. Refusals (scope, input, containment) become blocked step receipts. */
export async function executeGraphStep(
  scope: RunScope,
  doc: GraphDoc,
  catalog: ToolCatalog,
  action: ExecuteStepAction,
  approvals: Record<string, { approved: boolean; reason?: string }>,
  answers: Record<string, unknown>,
  /** The paused state of the step's nested graph, when it paused before (opaque JSON). */
  subgraph: unknown,
  /** The graph driver, for a step that runs a nested graph (passed in: see `graph-stop.ts`). */
  advance: AdvanceGraph,
): Promise<StepResult> {
  const step = stepById(doc, action.stepId);
  const declared = step.contract?.outputs;
  const startedAt = await recordStepStarted(scope, step.id, action.attempt);
  const seal = async (
    outcome: SealOutcome,
    status: StepOutcome["status"],
  ): Promise<StepResult & { receipt: Receipt }> => {
    const receipt = await sealStepReceipt(
      scope,
      doc,
      step.id,
      action.attempt,
      { startedAt, ...outcome },
      declared,
    );
    const result: StepOutcome = {
      status,
      receiptId: receipt.id,
      receiptDigest: receipt.digest,
      ...(status === "success"
        ? { output: scope.taint.redactJson(outcome.output) as JsonObject }
        : {}),
      ...(outcome.summary !== undefined ? { reason: scope.taint.redactText(outcome.summary) } : {}),
    };
    return { outcome: result, receipt };
  };
  try {
    if (action.approval !== undefined) {
      const packet = approvalDecisionPacket(action);
      return await seal(
        {
          disposition: action.approval.approved ? "closed" : "declined",
          reasonCode: action.approval.approved ? "approval_granted" : "approval_denied",
          output: action.approval.approved
            ? {
                [wrapName(step)]: artifactEnvelope(packet),
              }
            : {},
          ...(action.approval.approved ? {} : { summary: "denied by a human approver" }),
          metadata: {
            approval_gate: action.approval.gateId,
            approval_decision: action.approval.approved ? "approved" : "denied",
            approver: attestedApprover(scope, action.approval.gateId),
            ...(action.approval.reason !== undefined
              ? { approval_reason: action.approval.reason }
              : {}),
          },
        },
        action.approval.approved ? "success" : "declined",
      );
    }
    if (step.kind === "tool") {
      const decisions = new Map<string, ApprovalDecision>(Object.entries(approvals));
      const input = toolInput(catalog, step, action.resolvedInputs);
      const result = await invokeTool(scope, catalog, step.tool, input, {
        stepId: stepKey(scope, step.id),
        scopes: grantedScopes(scope, step),
        approvals: decisions,
        allowPrivateNetwork: scope.prep.runner.source.allow_private_network === true,
        // planStep refused this step unless its policy approval evidence held.
        policyApproved: true,
      });
      if (result.status === "needs_approval") {
        const { approval } = result;
        return {
          outcome: {
            status: "needs_approval",
            requests: [
              {
                id: approval.gate_id,
                kind: "approval",
                gate: {
                  id: approval.gate_id,
                  reason: approval.reason,
                  ...(approval.gate_type !== undefined ? { type: approval.gate_type } : {}),
                  summary: approval.summary,
                },
              },
            ],
          },
        };
      }
      if (result.status === "success") {
        return await seal(
          {
            disposition: "closed",
            reasonCode: STEP_CLOSED,
            output: result.output,
            boundary: "native_capability",
            metadata: {
              tool: step.tool,
              ...dataReceiptFacts(result.output),
              ...effectReceiptFacts(result.output),
            },
            ...settlementOf(step.tool, input, result.output),
          },
          "success",
        );
      }
      if (result.status === "declined") {
        return await seal(
          {
            disposition: "declined",
            reasonCode: "approval_denied",
            output: {},
            summary: result.summary,
            metadata: { tool: step.tool },
          },
          "declined",
        );
      }
      // A refusal by the tool's own admission (no provider grant, network denied, policy)
      // seals the step `blocked`: nothing was attempted.
      const refused = REFUSAL_CODES.has(result.code);
      return await seal(
        {
          disposition: refused ? "blocked" : "failed",
          reasonCode: refused ? "preflight_refused" : "process_failed",
          output: {},
          summary: `${result.code}: ${result.summary}`,
          boundary: "native_capability",
          metadata: {
            tool: step.tool,
            failure_code: result.code,
            ...failureReason(result.output),
            ...dataReceiptFacts(result.output),
            ...effectReceiptFacts(result.output),
          },
        },
        "failure",
      );
    }
    const nested =
      step.kind === "skill"
        ? await nestedRunner(scope, step)
        : {
            runner: inlineRunner(step),
            packageDir: scope.prep.pkg.packageDir,
            body: scope.prep.pkg.body,
            name: scope.prep.pkg.name,
          };
    const runner = nested.runner;
    // The step's own artifact contract, else its runner's, shapes what later steps read.
    const artifacts = step.artifacts ?? runner.artifacts;
    if (runner.type === "agent-task" || runner.type === "agent") {
      const requestId = agentRequestId(asAgentTask(runner, nested.name).task);
      const answer = answers[requestId];
      if (answer === undefined) {
        return await runAgentStep(
          scope,
          step,
          runner,
          nested,
          action.resolvedInputs,
          catalog,
          approvals,
          seal,
          artifacts,
        );
      }
      const check = validateAgentAnswer(runner.outputs, answer);
      if (!check.ok) {
        throw new RuntimeError(
          "ANSWERS_INVALID",
          `answer ${requestId}: ${check.path}: ${check.message}`,
          {
            path: `answers.${requestId}`,
          },
        );
      }
      return await sealAgentAnswer(seal, check.value, artifacts, {
        answered_by: "caller",
        request_id: requestId,
      });
    }
    const { values, missing } = resolveInputs(
      runner.inputs,
      Object.fromEntries(
        Object.entries(action.resolvedInputs)
          .filter(([k]) => Object.keys(runner.inputs).length === 0 || k in runner.inputs)
          .map(([k, v]) => [k, { value: v }]),
      ),
    );
    if (missing.length > 0) {
      throw new RuntimeError(
        "INPUT_INVALID",
        `step ${step.id} is missing input ${missing.map((m) => m.id).join(", ")}`,
        {
          step: step.id,
        },
      );
    }
    if (runner.type === "adapter") {
      // The adapter boundary: the same gate, approval pause and spawn authority as a
      // single-skill dispatch; its dispatch receipt becomes a child of this step's receipt.
      const { executeAdapterGraphStep } = await import("./adapter-graph-step.js");
      return await executeAdapterGraphStep(
        scope,
        step,
        runner,
        { name: nested.name, ...(nested.pkg !== undefined ? { pkg: nested.pkg } : {}) },
        values,
        approvals,
        answers,
        subgraph,
        artifacts,
        seal,
      );
    }
    if (runner.type === "graph") {
      if (nested.pkg === undefined) {
        throw new RuntimeError(
          "GRAPH_INVALID",
          `step ${step.id}: an inline run source cannot be a graph`,
          { step: step.id },
        );
      }
      const end = await runNestedGraph(
        scope,
        step,
        { pkg: nested.pkg, runner },
        grantedScopes(scope, step),
        values,
        approvals,
        answers,
        subgraph,
        advance,
        action.policyApproval,
      );
      if (end.kind === "paused") {
        const sealed = await seal(end.outcome, end.status);
        return {
          outcome: {
            ...sealed.outcome,
            requests: end.requests,
            subgraph: end.save(sealed.receipt),
          },
          receipt: sealed.receipt,
        };
      }
      if (end.status !== "success") return await seal(end.outcome, end.status);
      return await seal(
        { ...end.outcome, output: packageArtifacts(end.outcome.output as JsonObject, artifacts) },
        "success",
      );
    }
    const secrets = await stepCredential(scope, step.id, runner, nested.pkg);
    const outcome = await executeRunner({
      runner,
      packageDir: nested.packageDir,
      workspaceRoot: scope.deps.paths.root,
      scratchDir: `${scope.deps.paths.runxDir}/runs/${scope.prep.runId}`,
      inputs: values,
      baseEnv: runnerBaseEnv(scope, runner),
      secrets,
      strictInlineCode: scope.deps.config().policy.strictCliToolInlineCode,
      signal: scope.signal,
      stateRoots: runStateRoots(scope),
    });
    if (outcome.disposition !== "closed") return await seal(outcome, "failure");
    return await seal(
      {
        ...outcome,
        reasonCode: sealReasonCode(STEP_CLOSED, artifacts),
        output: packageArtifacts(outcome.output as JsonObject, artifacts),
      },
      "success",
    );
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    // Input that breaks the step's contract, or a step whose skill or runner is itself broken
    // (an unknown runner type, a missing package), is the step failing; every other refusal
    // (scope, containment, policy) is blocked: nothing was attempted either way.
    const failed = error.code === "INPUT_INVALID" || FAILURE_CATEGORY[error.code] === "skill_error";
    return seal(
      {
        disposition: failed ? "failed" : "blocked",
        reasonCode: failed ? "process_failed" : "preflight_refused",
        output: {},
        summary: `${error.code}: ${error.message}`,
        metadata: { failure_code: error.code },
      },
      "failure",
    );
  }
}

/**
 * The secrets a nested step's process receives: the run's, plus the step runner's own
 * declared credential when it has one, resolved from the project binding, the provider
 * default or the declared env name (a `--profile` selects only the top-level runner's).
 * Nothing matching fails the step before its process starts.
 */
async function stepCredential(
  scope: RunScope,
  stepId: string,
  runner: RunnerDefinition,
  pkg: LoadedSkillPackage | undefined,
): Promise<Record<string, string>> {
  if (runner.credential === undefined || pkg === undefined) return scope.secrets;
  const { requirementOf, resolveCredential, setupCommands } =
    await import("../credentials/resolve.js");
  const requirement = requirementOf(pkg.profile?.credentials ?? {}, runner.credential);
  const resolved = await resolveCredential({
    requirement,
    skillName: pkg.name,
    runxHome: scope.deps.runxHome,
    workspaceRoot: scope.deps.paths.root,
    env: scope.deps.workspaceEnv ?? scope.deps.env,
  });
  if (resolved === undefined) {
    throw new RuntimeError(
      "CREDENTIAL_UNAVAILABLE",
      `step ${stepId}: credential "${requirement.name}" of ${pkg.name} is not configured; ` +
        `set it up: ${setupCommands(requirement, pkg.name)[0] ?? ""}`,
      { step: stepId, credential: requirement.name, setup: setupCommands(requirement, pkg.name) },
    );
  }
  scope.taint.add(resolved.value);
  return { ...scope.secrets, [resolved.ref.envName]: resolved.value };
}
