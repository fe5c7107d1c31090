/**
 * Runner definition types: the normalized shape every other module consumes.
 * Field names follow X.yaml (snake_case) so documents and types read the same.
 */
import type { JsonObject, JsonValue } from "./json.js";
import type { InputDeclaration } from "./input-declarations.js";

/** Every runner/source type the parser accepts (`agent-step` is read as `agent-task`). */
export type RunnerType =
  | "cli-tool"
  | "javascript"
  | "agent"
  | "agent-task"
  | "approval"
  | "graph"
  | "mcp"
  | "a2a"
  | "catalog"
  | "harness-hook"
  | "http"
  | "external-adapter"
  | "thread-outbox-provider"
  | "adapter";

/** A declared output: a bare type name or a mapping with `type`, `description`, `required`, ... */
export interface OutputDeclaration {
  type?: string;
  description?: string;
  required?: boolean;
  wrap_as?: string;
  enum?: JsonValue[];
  schema?: JsonObject;
}

/** Environment variable names a process runner may receive. */
export interface RunnerEnvironment {
  required: string[];
  optional: string[];
}

/** Retry policy (`max_attempts` ≥ 1). */
export interface RetryPolicy {
  max_attempts: number;
  backoff_ms?: number;
}

/** Idempotency declaration, normalized from `"key"` or `{key}`. */
export interface IdempotencyDeclaration {
  key: string;
}

/** A graph document embedded in a graph runner; steps are validated by the graph parser. */
export interface GraphDocument {
  name: string;
  steps: JsonObject[];
  result_from: string[];
  [key: string]: JsonValue;
}

/** Fields shared by every runner. */
export interface RunnerCommon {
  name: string;
  default: boolean;
  inputs: Record<string, InputDeclaration>;
  scopes: string[];
  examples: JsonObject[];
  credential?: string;
  outputs?: Record<string, OutputDeclaration>;
  artifacts?: JsonObject;
  allowed_tools?: string[];
  mutating?: boolean;
  retry?: RetryPolicy;
  idempotency?: IdempotencyDeclaration;
  auth?: JsonValue;
  risk?: JsonValue;
  runtime?: JsonValue;
  execution?: JsonObject;
  runx?: JsonObject;
  policy?: JsonObject;
  act?: JsonObject;
  /** The source fields as written (flattened or under `source:`), with `type` normalized. */
  source: JsonObject;
  /** True for the runner synthesized from SKILL.md frontmatter when there is no X.yaml. */
  implicit: boolean;
}

/** Spawns an exact argv (`shell: false`). */
export interface CliToolRunner extends RunnerCommon {
  type: "cli-tool";
  command: string;
  args: string[];
  cwd?: string;
  input_mode: "args" | "stdin" | "none";
  timeout_seconds?: number;
  environment: RunnerEnvironment;
  /** Literal environment values for the process (runx-ts extension; not secrets). */
  env: Record<string, string>;
}

/** Runs a deterministic JavaScript module export. */
export interface JavascriptRunner extends RunnerCommon {
  type: "javascript";
  module: string;
  export?: string;
  timeout_seconds?: number;
  environment: RunnerEnvironment;
  pages?: JsonValue;
}

/** Runs graph steps. */
export interface GraphRunner extends RunnerCommon {
  type: "graph";
  graph: GraphDocument;
  /** True when `result_from` was absent and defaulted to the last step (compat). */
  result_from_defaulted: boolean;
}

/** A managed agent act with declared outputs. */
export interface AgentTaskRunner extends RunnerCommon {
  type: "agent-task";
  agent: string;
  task: string;
  context_skills?: string[];
}

/** Portable agent skill: cognition is delegated (pauses without a managed agent). */
export interface AgentRunner extends RunnerCommon {
  type: "agent";
}

/**
 * Hands a work packet to an external agent runtime through a trusted adapter definition.
 * `adapter` is the step's block: id, lane, workflow, authority, workspace.
 */
export interface AdapterRunner extends RunnerCommon {
  type: "adapter";
  adapter: JsonObject;
}

/** Human approval gate. */
export interface ApprovalRunner extends RunnerCommon {
  type: "approval";
}

/** Runner types whose fields stay in `source` (mcp, a2a, http, adapters, ...). */
export interface GenericRunner extends RunnerCommon {
  type:
    | "mcp"
    | "a2a"
    | "catalog"
    | "harness-hook"
    | "http"
    | "external-adapter"
    | "thread-outbox-provider";
}

/** A normalized runner, discriminated by `type`. */
export type RunnerDefinition =
  | CliToolRunner
  | JavascriptRunner
  | GraphRunner
  | AgentTaskRunner
  | AgentRunner
  | ApprovalRunner
  | AdapterRunner
  | GenericRunner;
