/**
 * Executes one planned graph step — a native tool, a nested skill, an inline `run` source or
 * an approval — and seals its child receipt. Returns the machine's outcome for the step.
 */
import { dirname, isAbsolute, relative, resolve } from "node:path";
import { agentActForRunner, agentRequestId, validateAgentAnswer } from "../agents/request.js";
import { RuntimeError, isRuntimeError } from "../errors.js";
import type { ExecuteStepAction, GraphDoc, GraphStep, StepOutcome } from "../graph/index.js";
import { approvalDecisionPacket, stepById } from "../graph/index.js";
import { loadPackageCached } from "../packages/package-cache.js";
import { computePackageDigest } from "../packages/digest.js";
import { resolveSkillRef } from "../packages/locate.js";
import { resolveInputs } from "../parser/inputs.js";
import type { JsonObject } from "../parser/json.js";
import { normalizeRunner } from "../parser/runners.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import { selectRunner } from "../parser/select-runner.js";
import { buildSkillReceipt, hashCanonical, sealReceipt } from "../receipts/index.js";
import type { Receipt } from "../receipts/index.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { ApprovalDecision } from "../tools/types.js";
import { asAgentTask } from "./agent-step.js";
import {
  commitment,
  idempotencyFor,
  profiled,
  receiptTimestamp,
  runMetadata,
  storeReceipt,
} from "./context.js";
import type { RunScope } from "./context.js";
import { executeRunner } from "./execute.js";
import type { RunnerOutcome } from "./execute.js";
import { dataReceiptFacts } from "../data/receipt-facts.js";
import { invokeTool } from "./tools.js";

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
}

/** Seals and stores the child receipt of one step attempt. */
export async function sealStepReceipt(
  scope: RunScope,
  doc: GraphDoc,
  stepId: string,
  attempt: number,
  outcome: Omit<RunnerOutcome, "disposition" | "reasonCode"> & {
    disposition: RunnerOutcome["disposition"] | "blocked" | "declined";
    reasonCode: string;
  },
  declaredOutputs: readonly string[] | undefined,
): Promise<Receipt> {
  const { deps, prep, taint } = scope;
  const output = taint.redactJson(outcome.output) as Record<string, unknown>;
  const closed = outcome.disposition === "closed";
  const claim =
    closed && declaredOutputs !== undefined
      ? Object.fromEntries(declaredOutputs.filter((k) => k in output).map((k) => [k, output[k]]))
      : {};
  const contentDigest = hashCanonical({ step: stepId, attempt, output: closed ? output : null });
  const summary = outcome.summary !== undefined ? taint.redactText(outcome.summary) : undefined;
  const receipt = sealReceipt(
    buildSkillReceipt({
      ...profiled(deps, {
        name: doc.name,
        createdAt: receiptTimestamp(deps.now()),
        commitments: [
          ...(closed ? [commitment("output", hashCanonical(output))] : []),
          ...(outcome.streams !== undefined
            ? [
                commitment("stdout", outcome.streams.stdoutSha256),
                commitment("stderr", outcome.streams.stderrSha256),
              ]
            : []),
        ],
        ...(outcome.boundary !== undefined ? { executionBoundary: outcome.boundary } : {}),
        idempotency: idempotencyFor(prep, contentDigest, `${stepId}#${attempt}`),
        metadata: { ...runMetadata(deps, prep), step_id: stepId, attempt, ...outcome.metadata },
      }),
      step: stepId,
      disposition: outcome.disposition,
      reasonCode: outcome.reasonCode,
      ...(closed ? {} : { sealSummary: summary ?? `step ${stepId} ${outcome.disposition}` }),
      ...(summary !== undefined && !closed ? { outcomeSummary: summary } : {}),
      claim: claim as Record<string, never>,
    }),
    deps.signer(),
  );
  await storeReceipt(
    deps,
    prep,
    receipt,
    () => {
      deps.state().upsertStep({
        runId: prep.runId,
        stepId,
        status: outcome.disposition,
        attempt,
        receiptId: receipt.id,
        outputJson: JSON.stringify({ output }),
        finishedAt: receipt.created_at,
      });
    },
    { isChild: true },
  );
  return receipt;
}

/** The output key an approval step's decision packet is wrapped under (`artifacts.wrap_as`). */
function wrapName(step: GraphStep): string {
  const wrap = step.artifacts?.wrap_as;
  return typeof wrap === "string" && wrap !== "" ? wrap : "approval_decision";
}

/** The scopes a step may exercise: its own, which must lie inside the graph runner's grant. */
export function grantedScopes(scope: RunScope, step: GraphStep): string[] {
  const grant = scope.prep.runner.scopes;
  const own = step.scopes.length > 0 ? step.scopes : grant;
  const outside = grant.length > 0 ? own.filter((s) => !grant.includes(s)) : [];
  if (outside.length > 0) {
    throw new RuntimeError(
      "POLICY_DENIED",
      `step ${step.id} asks for scope ${outside.join(", ")} outside the graph's grant`,
      { step: step.id, scopes: outside },
    );
  }
  return own;
}

/** Resolves a nested skill reference relative to the graph's package. */
export async function nestedRunner(
  scope: RunScope,
  step: GraphStep & { kind: "skill" },
): Promise<{ runner: RunnerDefinition; packageDir: string; body: string; name: string }> {
  if (step.skill.startsWith("registry:")) {
    throw new RuntimeError(
      "PACKAGE_NOT_FOUND",
      `step ${step.id}: registry skills need a local registry (not configured)`,
      {
        step: step.id,
      },
    );
  }
  const base = scope.prep.pkg.packageDir;
  const target = isAbsolute(step.skill) ? step.skill : resolve(base, step.skill);
  const rel = relative(dirname(base), target);
  if (rel.startsWith("..") || isAbsolute(rel)) {
    throw new RuntimeError(
      "PATH_ESCAPE",
      `step ${step.id}: skill ${step.skill} is outside the graph's package folder`,
      {
        step: step.id,
      },
    );
  }
  const resolved = await resolveSkillRef(target, { workspaceRoot: scope.deps.paths.root });
  const digest = await computePackageDigest(resolved.packageDir);
  const pkg = await loadPackageCached(resolved, digest, {
    dir: `${scope.deps.paths.runxDir}/cache/packages`,
    runtimeRelease: scope.deps.runtimeRelease,
  });
  return {
    runner: selectRunner(pkg, step.runner),
    packageDir: pkg.packageDir,
    body: pkg.body,
    name: pkg.name,
  };
}

/** An inline `run: {type: cli-tool|javascript|agent-task, …}` source as a runner. */
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

function agentPause(
  scope: RunScope,
  step: GraphStep,
  runner: RunnerDefinition,
  skill: { name: string; body: string },
  inputs: JsonObject,
): StepResult {
  const request = agentActForRunner(asAgentTask(runner, skill.name), {
    skill: skill.name,
    skillBody: skill.body,
    ...(step.instructions !== undefined ? { stepInstructions: step.instructions } : {}),
    inputs,
    runId: scope.prep.runId,
    stepId: step.id,
  });
  return { outcome: { status: "needs_agent", requests: [request] } };
}

/** Runs one planned step. Refusals (scope, input, containment) become blocked step receipts. */
export async function executeGraphStep(
  scope: RunScope,
  doc: GraphDoc,
  catalog: ToolCatalog,
  action: ExecuteStepAction,
  approvals: Record<string, { approved: boolean; reason?: string }>,
  answers: Record<string, unknown> = {},
): Promise<StepResult> {
  const step = stepById(doc, action.stepId);
  const declared = step.contract?.outputs;
  const seal = async (
    outcome: Parameters<typeof sealStepReceipt>[4],
    status: StepOutcome["status"],
  ) => {
    const receipt = await sealStepReceipt(scope, doc, step.id, action.attempt, outcome, declared);
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
                [wrapName(step)]: { type: "runx.approval.decision.v1", version: "1", data: packet },
              }
            : {},
          ...(action.approval.approved ? {} : { summary: "denied by a human approver" }),
          metadata: {
            approval_gate: action.approval.gateId,
            approval_decision: action.approval.approved ? "approved" : "denied",
            approver: "local-operator (host-attested via runx resume)",
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
      const result = await invokeTool(scope, catalog, step.tool, action.resolvedInputs, {
        stepId: step.id,
        scopes: grantedScopes(scope, step),
        approvals: decisions,
        allowPrivateNetwork: scope.prep.runner.source.allow_private_network === true,
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
            reasonCode: "process_closed",
            output: result.output,
            boundary: "native_capability",
            metadata: { tool: step.tool, ...dataReceiptFacts(result.output) },
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
            ...dataReceiptFacts(result.output),
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
    if (runner.type === "agent-task" || runner.type === "agent") {
      const requestId = agentRequestId(asAgentTask(runner, nested.name).task);
      const answer = answers[requestId];
      if (answer === undefined)
        return agentPause(scope, step, runner, nested, action.resolvedInputs);
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
      return await seal(
        {
          disposition: "closed",
          reasonCode: "process_closed",
          output: answer as Record<string, unknown>,
          metadata: { answered_by: "caller", request_id: requestId },
        },
        "success",
      );
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
    const outcome = await executeRunner({
      runner,
      packageDir: nested.packageDir,
      workspaceRoot: scope.deps.paths.root,
      scratchDir: `${scope.deps.paths.runxDir}/runs/${scope.prep.runId}`,
      inputs: values,
      baseEnv: scope.deps.env,
      secrets: scope.secrets,
      strictInlineCode: scope.deps.config().policy.strictCliToolInlineCode,
      signal: scope.signal,
    });
    return await seal(outcome, outcome.disposition === "closed" ? "success" : "failure");
  } catch (error) {
    if (!isRuntimeError(error)) throw error;
    return seal(
      {
        disposition: "blocked",
        reasonCode: "preflight_refused",
        output: {},
        summary: `${error.code}: ${error.message}`,
        metadata: { failure_code: error.code },
      },
      "failure",
    );
  }
}
