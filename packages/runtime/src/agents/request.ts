/**
 * The `agent_act` request an agent-task runner or graph agent step pauses with, and the
 * invocation envelope a managed agent receives. Pure: callers pass the package body, inputs
 * and resolved context; nothing here reads files or clocks.
 */
import { sha256Prefixed } from "../receipts/canonical.js";
import type { JsonObject, JsonValue } from "../parser/json.js";
import type { AgentTaskRunner } from "../parser/runner-types.js";
import { outputContractSchema } from "./output-contract.js";
import type { OutputDeclarations } from "./output-contract.js";

export {
  compileAnswerValidator,
  formatAnswerProblem,
  outputContractSchema,
  validateAgentAnswer,
} from "./output-contract.js";
export type { AnswerCheck, AnswerValidator, OutputDeclarations } from "./output-contract.js";

/** How the envelope labels everything the model sends back. */
export const AGENT_TRUST_BOUNDARY = "untrusted_model_output";
/** The artifact type of a context skill in `current_context`. */
export const SKILL_CONTEXT_TYPE = "runx.skill.context";

/** A referenced SKILL.md presented to the agent as untrusted advisory data. */
export type SkillContextArtifact = {
  type: typeof SKILL_CONTEXT_TYPE;
  /** The context skill's name (frontmatter `name`). */
  label: string;
  /** The reference as written in `context_skills`. */
  ref: string;
  /** `sha256:<hex>` of the SKILL.md bytes. */
  digest: string;
  bytes: number;
  content: string;
  trust: "untrusted";
};

/** The invocation envelope (keys as upstream writes them). */
export type AgentActEnvelope = {
  allowed_tools: string[];
  current_context: JsonValue[];
  historical_context: JsonValue[];
  inputs: JsonObject;
  instructions: string;
  /** `sha256:<hex>` of the UTF-8 `instructions`. */
  instructions_sha256: string;
  provenance: JsonObject;
  requirements: JsonObject;
  run_id: string;
  skill: string;
  step_id: string | null;
  trust_boundary: typeof AGENT_TRUST_BOUNDARY;
  /** The declared output contract as JSON Schema. */
  output: JsonObject;
};

/** `invocation` of an agent_act request. */
export type AgentActInvocation = {
  agent: string;
  task: string;
  source_type: "agent-task";
  id: string;
  envelope: AgentActEnvelope;
};

/** An `agent_act` request; assignable to the run envelope's `RunRequest`. */
export type AgentActRequest = { id: string; kind: "agent_act"; invocation: AgentActInvocation };

/** Everything the request is built from. */
export interface AgentActOptions {
  agent: string;
  task: string;
  /** The owning skill's name. */
  skill: string;
  /** The owning SKILL.md body (the operator manual). */
  skillBody: string;
  /** Extra instructions of a graph step (appended after the SKILL.md body). */
  stepInstructions?: string;
  inputs: JsonObject;
  outputs?: OutputDeclarations;
  allowedTools?: readonly string[];
  runId: string;
  /** The graph step id; null for a top-level runner. */
  stepId?: string | null;
  /** Resolved context skills (see context-skills.ts) and other current context entries. */
  currentContext?: readonly (SkillContextArtifact | JsonValue)[];
  historicalContext?: readonly JsonValue[];
  /** Extra provenance (runner name, package digest, graph name, ...); merged over the defaults. */
  provenance?: JsonObject;
}

/** The request id of an agent task: `agent_task.<task>.output`. */
export function agentRequestId(task: string): string {
  return `agent_task.${task}.output`;
}

/** The agent's instructions: the SKILL.md body, then any step instructions. */
export function agentInstructions(skillBody: string, stepInstructions?: string): string {
  const body = skillBody.trim();
  const step = stepInstructions?.trim() ?? "";
  if (step === "") return body;
  return body === "" ? step : `${body}\n\n## Step instructions\n\n${step}`;
}

function contextDigests(context: readonly (SkillContextArtifact | JsonValue)[]): JsonValue[] {
  const out: JsonValue[] = [];
  for (const entry of context) {
    if (
      entry !== null &&
      typeof entry === "object" &&
      !Array.isArray(entry) &&
      entry.type === SKILL_CONTEXT_TYPE
    ) {
      const { ref, digest } = entry;
      if (typeof ref === "string" && typeof digest === "string") out.push({ ref, digest });
    }
  }
  return out;
}

/** Builds the `agent_act` request of an agent task. */
export function buildAgentActRequest(options: AgentActOptions): AgentActRequest {
  const id = agentRequestId(options.task);
  const instructions = agentInstructions(options.skillBody, options.stepInstructions);
  const outputs = options.outputs ?? {};
  const currentContext = [...(options.currentContext ?? [])];
  const provenance: JsonObject = {
    source_type: "agent-task",
    skill: options.skill,
    agent: options.agent,
    task: options.task,
    context_skills: contextDigests(currentContext),
    ...options.provenance,
  };
  const envelope: AgentActEnvelope = {
    allowed_tools: [...(options.allowedTools ?? [])],
    current_context: currentContext,
    historical_context: [...(options.historicalContext ?? [])],
    inputs: options.inputs,
    instructions,
    instructions_sha256: sha256Prefixed(instructions),
    provenance,
    requirements: {
      answer_format: "json_object",
      outputs: Object.keys(outputs),
      required_outputs: Object.entries(outputs)
        .filter(([, decl]) => decl.required !== false)
        .map(([name]) => name),
    },
    run_id: options.runId,
    skill: options.skill,
    step_id: options.stepId ?? null,
    trust_boundary: AGENT_TRUST_BOUNDARY,
    output: outputContractSchema(options.outputs),
  };
  return {
    id,
    kind: "agent_act",
    invocation: {
      agent: options.agent,
      task: options.task,
      source_type: "agent-task",
      id,
      envelope,
    },
  };
}

/** The runner-derived part of {@link AgentActOptions}. */
export type RunnerAgentActOptions = Omit<
  AgentActOptions,
  "agent" | "task" | "outputs" | "allowedTools"
>;

/** Builds the request of an `agent-task` runner (or a graph step's normalized agent-task run). */
export function agentActForRunner(
  runner: AgentTaskRunner,
  options: RunnerAgentActOptions,
): AgentActRequest {
  return buildAgentActRequest({
    ...options,
    agent: runner.agent,
    task: runner.task,
    ...(runner.outputs !== undefined ? { outputs: runner.outputs } : {}),
    ...(runner.allowed_tools !== undefined ? { allowedTools: runner.allowed_tools } : {}),
    provenance: { runner: runner.name, ...options.provenance },
  });
}
