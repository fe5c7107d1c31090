/**
 * Agent-task runs. Without a managed agent the run pauses `needs_agent` with the exact
 * `agent_act` request and an answers template; `runx resume` with an answer under `answers`
 * validates it against the runner's declared outputs and seals. With a configured managed
 * agent (runx config set agent.*), the act is resolved in-process through an
 * OpenAI-compatible endpoint, offered only the runner's allowed native tools.
 */
import { resolveContextSkills } from "../agents/context-skills.js";
import { agentActForRunner } from "../agents/request.js";
import type { AgentActRequest } from "../agents/request.js";
import { runManagedAgent } from "../agents/managed-agent.js";
import type { AgentTaskRunner, RunnerDefinition } from "../parser/runner-types.js";
import type { JsonObject } from "../parser/json.js";
import { hashCanonical } from "../receipts/index.js";
import type { Reference } from "../receipts/index.js";
import type { ResumeAnswers } from "./answers.js";
import type { Checkpoint } from "./checkpoint.js";
import { recordRunning } from "./context.js";
import type { RunScope } from "./context.js";
import type { SkillRunEnvelope } from "../contracts/envelope.js";
import { pauseRun } from "./pause.js";
import { sealOutcome } from "./single-step.js";
import type { SealableOutcome, StepStart } from "./single-step.js";
import { agentClosure, withoutClosure } from "../contracts/agent-closure.js";
import { invokeTool, runtimeToolCatalog, runToolRoots } from "./tools.js";

/** An agent-task view of `agent` and `agent-task` runners (portable agents use the skill name). */
export function asAgentTask(runner: RunnerDefinition, skillName: string): AgentTaskRunner {
  if (runner.type === "agent-task") return runner;
  return { ...runner, type: "agent-task", agent: "agent", task: skillName };
}

async function buildRequest(scope: RunScope, inputs: JsonObject): Promise<AgentActRequest> {
  const { prep } = scope;
  const runner = asAgentTask(prep.runner, prep.pkg.name);
  const currentContext = await resolveContextSkills(runner.context_skills ?? [], {
    packageDir: prep.pkg.packageDir,
    workspaceRoot: scope.deps.paths.root,
    ...(scope.deps.registry !== undefined ? { registryDir: scope.deps.registry().root } : {}),
  });
  return agentActForRunner(runner, {
    skill: prep.pkg.name,
    skillBody: prep.pkg.body,
    inputs,
    runId: prep.runId,
    stepId: null,
    currentContext,
    provenance: { package_digest: prep.packageDigest },
  });
}

/**
 * The seal of an agent's answer: a completed action, unless the answer carries its own
 * closure with another disposition (a refusal must never read as a completed action).
 */
export function answeredOutcome(
  answer: Record<string, unknown>,
  metadata: SealableOutcome["metadata"],
  boundary?: SealableOutcome["boundary"],
): SealableOutcome {
  const closure = agentClosure(answer);
  const base = { metadata, ...(boundary !== undefined ? { boundary } : {}) };
  if (closure === null || closure.disposition === "closed") {
    return {
      ...base,
      disposition: "closed",
      reasonCode: closure === null ? "process_closed" : closure.reasonCode,
      output: withoutClosure(answer),
    };
  }
  return {
    ...base,
    disposition: closure.disposition,
    reasonCode: closure.reasonCode,
    summary: closure.summary,
    output: answer,
    keepResult: true,
  };
}

/** Runs an agent task: managed agent when configured, else pause for the caller's answer. */
export async function runAgentTask(
  scope: RunScope,
  inputs: JsonObject,
  start: StepStart,
  approvals: ReadonlyMap<string, { approved: boolean; reason?: string }> = new Map(),
): Promise<SkillRunEnvelope> {
  const { deps, prep } = scope;
  const request = await buildRequest(scope, inputs);
  const settings = deps.agentConfig !== undefined ? await deps.agentConfig() : undefined;
  if (settings === undefined) {
    return pauseRun(scope, {
      kind: "agent",
      requests: [request],
      inputs,
      reasonCode: "agent_required",
      summary: `waiting for agent work: ${request.id}`,
      runExists: start.runExists,
      ...(start.previous !== undefined ? { previous: start.previous } : {}),
    });
  }
  const inputsDigest = hashCanonical(scope.taint.redactJson(inputs));
  await recordRunning(deps, prep, { runExists: start.runExists, inputsDigest });
  const runner = asAgentTask(prep.runner, prep.pkg.name);
  const catalog = runtimeToolCatalog(runToolRoots(scope));
  const allowed = runner.allowed_tools ?? [];
  const tools = allowed.flatMap((name) => {
    const tool = catalog.get(name);
    return tool === undefined ? [] : [tool];
  });
  const result = await runManagedAgent({
    settings,
    request,
    ...(runner.outputs !== undefined ? { outputs: runner.outputs } : {}),
    tools,
    callTool: (name, input) =>
      invokeTool(scope, catalog, name, input, {
        stepId: runner.name,
        scopes: runner.scopes,
        approvals,
      }),
    taint: scope.taint,
    signal: scope.signal,
  });
  if (result.status === "needs_approval") {
    return pauseRun(scope, {
      kind: "agent",
      requests: [result.request],
      inputs,
      reasonCode: "approval_required",
      summary: `waiting for approval: ${result.request.id}`,
      runExists: true,
      gateInputs: { [result.request.id]: result.input },
      ...(start.previous !== undefined ? { previous: start.previous } : {}),
    });
  }
  return sealOutcome(
    scope,
    inputsDigest,
    result.status === "success"
      ? answeredOutcome(
          result.output,
          { answered_by: "managed_agent", model: result.model, rounds: result.rounds },
          "remote_provider",
        )
      : {
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
    start.previous,
  );
}

/** Continues an agent pause: a supplied answer seals; an approval re-runs the managed act. */
export async function resumeAgentTask(
  scope: RunScope,
  checkpoint: Checkpoint,
  answers: ResumeAnswers,
  previous: Reference,
): Promise<SkillRunEnvelope> {
  const request = checkpoint.requests[0];
  const inputs = checkpoint.inputs as JsonObject;
  if (request?.kind === "approval") {
    const decision = answers.approvals[request.id];
    if (decision === undefined) {
      return pauseRun(scope, {
        kind: "agent",
        requests: checkpoint.requests,
        inputs,
        reasonCode: "approval_required",
        summary: `waiting for approval: ${request.id}`,
        runExists: true,
        ...(checkpoint.gate_inputs !== undefined ? { gateInputs: checkpoint.gate_inputs } : {}),
        previous,
      });
    }
    return runAgentTask(
      scope,
      inputs,
      { runExists: true, previous },
      new Map([[request.id, decision]]),
    );
  }
  const answer = request === undefined ? undefined : answers.answers[request.id];
  if (request === undefined || answer === undefined) {
    return pauseRun(scope, {
      kind: "agent",
      requests: checkpoint.requests,
      inputs,
      reasonCode: "agent_required",
      summary: `waiting for agent work: ${checkpoint.requests.map((r) => r.id).join(", ")}`,
      runExists: true,
      previous,
    });
  }
  return sealOutcome(
    scope,
    hashCanonical(scope.taint.redactJson(inputs)),
    answeredOutcome(answer as Record<string, unknown>, {
      answered_by: "caller",
      request_id: request.id,
    }),
    previous,
  );
}
