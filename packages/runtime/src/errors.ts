/**
 * The one error type of the runtime. Codes are stable SCREAMING_SNAKE strings; tests assert
 * codes, never message prose. Messages never contain secret values or rejected documents.
 */

/** Every error code the runtime raises. Adding one means adding it to both tables below. */
export const ERROR_CODES = [
  "USAGE",
  "INTERNAL",
  "IO_ERROR",
  // runx new: the scaffold target is outside the workspace, a symlink, or not empty
  "SCAFFOLD_TARGET_INVALID",
  // package resolution and parsing
  "PACKAGE_NOT_FOUND",
  "PACKAGE_INVALID",
  "YAML_SYNTAX",
  "YAML_FORBIDDEN",
  "NESTING_TOO_DEEP",
  "FILE_TOO_LARGE",
  "FRONTMATTER_INVALID",
  "PROFILE_INVALID",
  "RUNNER_NOT_FOUND",
  "RUNNER_AMBIGUOUS",
  "RUNNER_UNSUPPORTED",
  // inputs
  "INPUT_INVALID",
  "INPUT_DUPLICATE",
  "INPUTS_DOCUMENT_INVALID",
  "INPUTS_TOO_LARGE",
  "PATH_ESCAPE",
  // policy and execution
  "POLICY_DENIED",
  "SPAWN_FAILED",
  "MODULE_INVALID",
  "INTERRUPTED",
  "ENV_MISSING",
  // receipts
  "SIGNER_CONFIG_INVALID",
  "VERIFIER_CONFIG_INVALID",
  "RECEIPT_INVALID",
  "RECEIPT_NOT_FOUND",
  "RECEIPT_ALREADY_EXISTS",
  "RECEIPT_INDEX_STALE",
  "RECEIPT_INDEX_MALFORMED",
  "CANONICAL_JSON_INVALID",
  // state store
  "STORE_ERROR",
  "RUN_NOT_FOUND",
  "RESUME_REFUSED",
  "DISPATCH_NOT_RUNNING",
  // a run's execution lease was taken over or expired (store/pg/lease.ts)
  "LEASE_LOST",
  "HARNESS_INVALID",
  "APPROVAL_NOT_ANSWERABLE",
  "ANSWERS_INVALID",
  // user config and managed agents
  "CONFIG_INVALID",
  // credentials
  "CREDENTIAL_PROFILE_NOT_FOUND",
  "CREDENTIAL_MISMATCH",
  "CREDENTIAL_AMBIGUOUS",
  "CREDENTIAL_UNAVAILABLE",
  // a command that serves skills found a declared credential nothing satisfies
  "CREDENTIAL_REQUIRED",
  "AGENT_NOT_CONFIGURED",
  "AGENT_PROVIDER_ERROR",
  "AGENT_REPLY_INVALID",
  "AGENT_ROUNDS_EXCEEDED",
  "AGENT_TOOLS_INVALID",
  "CONTEXT_SKILL_INVALID",
  "CONTEXT_SKILLS_LIMIT",
  // native tools
  "TOOL_NOT_FOUND",
  "TOOL_MANIFEST_INVALID",
  "FILE_NOT_FOUND",
  "ARTIFACT_NOT_FOUND",
  "DATA_SOURCE_INVALID",
  "DATA_STORE_UNAVAILABLE",
  "REDACTION_REQUIRED",
  "LIMIT_EXCEEDED",
  // network and provider effects
  "NETWORK_DENIED",
  "HTTP_TIMEOUT",
  "HTTP_RESPONSE_TOO_LARGE",
  "HTTP_FAILED",
  "IDEMPOTENCY_KEY_REQUIRED",
  "IDEMPOTENCY_CONFLICT",
  "PROVIDER_MISMATCH",
  "PROVIDER_FAILED",
  "PROVIDER_RESULT_MISMATCH",
  "FIXTURE_UNMATCHED",
  // operator console
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "OPERATOR_EXISTS",
  "OPERATOR_NOT_FOUND",
  "LAST_ADMIN",
  "TOKEN_NOT_FOUND",
  "RATE_LIMITED",
  "APPROVAL_NOT_FOUND",
  "APPROVAL_STALE",
  "APPROVAL_UNVERIFIED",
  // graphs
  "GRAPH_INVALID",
  "GRAPH_REFERENCE_MISSING",
  "GRAPH_STATE_INVALID",
  "RETRY_REFUSED",
  // deterministic evaluation services
  "KERNEL_EVALUATION_FAILED",
  // skill registry
  "REGISTRY_NOT_FOUND",
  "REGISTRY_INVALID",
  "REGISTRY_DIGEST_MISMATCH",
  "REGISTRY_SIGNATURE_INVALID",
  "REGISTRY_CONFLICT",
] as const;

/** A stable runtime error code. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Where in a document an error points: file, 1-based line and column, dotted key path. */
export interface ErrorLocation {
  file?: string;
  line?: number;
  column?: number;
  path?: string;
  /**
   * The message already names the field at `path` in words ("password must be at least 12
   * characters"), so `located` does not put the path in front of it a second time.
   */
  named?: boolean;
}

/** Structured, JSON-safe details attached to an error. */
export interface ErrorDetails extends ErrorLocation {
  [key: string]: unknown;
}

/** The runtime's single error type. */
export class RuntimeError extends Error {
  override readonly name = "RuntimeError";
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.code = code;
    this.details = details;
  }

  /** The message prefixed with `file:line:col: path:` when a location is known. */
  get located(): string {
    return formatLocated(this.message, this.details);
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** Formats `file:line:col: path: message` from whatever location parts are present. */
export function formatLocated(message: string, loc: ErrorLocation): string {
  let where = "";
  if (loc.file !== undefined) {
    where = loc.file;
    if (loc.line !== undefined) {
      where += `:${loc.line}`;
      if (loc.column !== undefined) where += `:${loc.column}`;
    }
  }
  const path =
    loc.path !== undefined && loc.path !== "" && loc.named !== true ? `${loc.path}: ` : "";
  return where === "" ? `${path}${message}` : `${where}: ${path}${message}`;
}

/** Narrowing helper. */
export function isRuntimeError(value: unknown): value is RuntimeError {
  return value instanceof RuntimeError;
}

/** The upstream-compatible snake_case failure category shown in the CLI JSON failure envelope. */
export const FAILURE_CATEGORY: Record<ErrorCode, string> = {
  USAGE: "usage_error",
  INTERNAL: "internal_error",
  IO_ERROR: "io_error",
  SCAFFOLD_TARGET_INVALID: "invalid_target",
  PACKAGE_NOT_FOUND: "skill_error",
  PACKAGE_INVALID: "skill_error",
  YAML_SYNTAX: "skill_error",
  YAML_FORBIDDEN: "skill_error",
  NESTING_TOO_DEEP: "input_error",
  FILE_TOO_LARGE: "input_error",
  FRONTMATTER_INVALID: "skill_error",
  PROFILE_INVALID: "skill_error",
  RUNNER_NOT_FOUND: "skill_error",
  RUNNER_AMBIGUOUS: "skill_error",
  RUNNER_UNSUPPORTED: "skill_error",
  INPUT_INVALID: "input_error",
  INPUT_DUPLICATE: "input_error",
  INPUTS_DOCUMENT_INVALID: "input_error",
  INPUTS_TOO_LARGE: "input_error",
  PATH_ESCAPE: "input_error",
  POLICY_DENIED: "operator_context_blocked",
  SPAWN_FAILED: "skill_error",
  MODULE_INVALID: "skill_error",
  INTERRUPTED: "interrupted",
  ENV_MISSING: "input_error",
  SIGNER_CONFIG_INVALID: "receipt_error",
  VERIFIER_CONFIG_INVALID: "receipt_error",
  RECEIPT_INVALID: "receipt_error",
  RECEIPT_NOT_FOUND: "receipt_error",
  RECEIPT_ALREADY_EXISTS: "receipt_error",
  RECEIPT_INDEX_STALE: "receipt_error",
  RECEIPT_INDEX_MALFORMED: "receipt_error",
  CANONICAL_JSON_INVALID: "input_error",
  STORE_ERROR: "store_error",
  RUN_NOT_FOUND: "resume_error",
  RESUME_REFUSED: "resume_error",
  DISPATCH_NOT_RUNNING: "resume_error",
  LEASE_LOST: "store_error",
  HARNESS_INVALID: "input_error",
  APPROVAL_NOT_ANSWERABLE: "resume_error",
  ANSWERS_INVALID: "resume_error",
  CONFIG_INVALID: "config_error",
  CREDENTIAL_PROFILE_NOT_FOUND: "credential_error",
  CREDENTIAL_MISMATCH: "credential_error",
  CREDENTIAL_AMBIGUOUS: "credential_error",
  CREDENTIAL_UNAVAILABLE: "credential_error",
  CREDENTIAL_REQUIRED: "credential_error",
  AGENT_NOT_CONFIGURED: "config_error",
  AGENT_PROVIDER_ERROR: "agent_error",
  AGENT_REPLY_INVALID: "agent_error",
  AGENT_ROUNDS_EXCEEDED: "agent_error",
  AGENT_TOOLS_INVALID: "agent_error",
  CONTEXT_SKILL_INVALID: "skill_error",
  CONTEXT_SKILLS_LIMIT: "skill_error",
  TOOL_NOT_FOUND: "input_error",
  TOOL_MANIFEST_INVALID: "input_error",
  FILE_NOT_FOUND: "input_error",
  ARTIFACT_NOT_FOUND: "input_error",
  DATA_SOURCE_INVALID: "config_error",
  DATA_STORE_UNAVAILABLE: "io_error",
  REDACTION_REQUIRED: "input_error",
  LIMIT_EXCEEDED: "input_error",
  NETWORK_DENIED: "operator_context_blocked",
  HTTP_TIMEOUT: "skill_error",
  HTTP_RESPONSE_TOO_LARGE: "skill_error",
  HTTP_FAILED: "skill_error",
  IDEMPOTENCY_KEY_REQUIRED: "input_error",
  IDEMPOTENCY_CONFLICT: "input_error",
  PROVIDER_MISMATCH: "credential_error",
  PROVIDER_FAILED: "skill_error",
  PROVIDER_RESULT_MISMATCH: "skill_error",
  FIXTURE_UNMATCHED: "input_error",
  UNAUTHENTICATED: "auth_error",
  FORBIDDEN: "auth_error",
  OPERATOR_EXISTS: "input_error",
  OPERATOR_NOT_FOUND: "input_error",
  LAST_ADMIN: "input_error",
  TOKEN_NOT_FOUND: "input_error",
  RATE_LIMITED: "auth_error",
  APPROVAL_NOT_FOUND: "resume_error",
  APPROVAL_STALE: "resume_error",
  APPROVAL_UNVERIFIED: "resume_error",
  GRAPH_INVALID: "skill_error",
  GRAPH_REFERENCE_MISSING: "skill_error",
  GRAPH_STATE_INVALID: "resume_error",
  RETRY_REFUSED: "operator_context_blocked",
  KERNEL_EVALUATION_FAILED: "kernel.fixture.evaluation_failed",
  REGISTRY_NOT_FOUND: "registry_error",
  REGISTRY_INVALID: "registry_error",
  REGISTRY_DIGEST_MISMATCH: "registry_error",
  REGISTRY_SIGNATURE_INVALID: "registry_error",
  REGISTRY_CONFLICT: "registry_error",
};

/** CLI exit code for a failure raised with this code. */
export const EXIT_CODE: Record<ErrorCode, number> = {
  USAGE: 64,
  INTERNAL: 1,
  IO_ERROR: 1,
  SCAFFOLD_TARGET_INVALID: 1,
  PACKAGE_NOT_FOUND: 1,
  PACKAGE_INVALID: 1,
  YAML_SYNTAX: 1,
  YAML_FORBIDDEN: 1,
  NESTING_TOO_DEEP: 1,
  FILE_TOO_LARGE: 1,
  FRONTMATTER_INVALID: 1,
  PROFILE_INVALID: 1,
  RUNNER_NOT_FOUND: 1,
  RUNNER_AMBIGUOUS: 1,
  RUNNER_UNSUPPORTED: 1,
  INPUT_INVALID: 1,
  INPUT_DUPLICATE: 1,
  INPUTS_DOCUMENT_INVALID: 1,
  INPUTS_TOO_LARGE: 1,
  PATH_ESCAPE: 1,
  POLICY_DENIED: 1,
  SPAWN_FAILED: 1,
  MODULE_INVALID: 1,
  INTERRUPTED: 130,
  ENV_MISSING: 1,
  SIGNER_CONFIG_INVALID: 1,
  VERIFIER_CONFIG_INVALID: 1,
  RECEIPT_INVALID: 1,
  RECEIPT_NOT_FOUND: 1,
  RECEIPT_ALREADY_EXISTS: 1,
  RECEIPT_INDEX_STALE: 1,
  RECEIPT_INDEX_MALFORMED: 1,
  CANONICAL_JSON_INVALID: 1,
  STORE_ERROR: 1,
  RUN_NOT_FOUND: 1,
  RESUME_REFUSED: 1,
  DISPATCH_NOT_RUNNING: 1,
  LEASE_LOST: 1,
  HARNESS_INVALID: 1,
  APPROVAL_NOT_ANSWERABLE: 1,
  ANSWERS_INVALID: 1,
  CONFIG_INVALID: 1,
  CREDENTIAL_PROFILE_NOT_FOUND: 1,
  CREDENTIAL_MISMATCH: 1,
  CREDENTIAL_AMBIGUOUS: 1,
  CREDENTIAL_UNAVAILABLE: 1,
  CREDENTIAL_REQUIRED: 1,
  AGENT_NOT_CONFIGURED: 1,
  AGENT_PROVIDER_ERROR: 1,
  AGENT_REPLY_INVALID: 1,
  AGENT_ROUNDS_EXCEEDED: 1,
  AGENT_TOOLS_INVALID: 1,
  CONTEXT_SKILL_INVALID: 1,
  CONTEXT_SKILLS_LIMIT: 1,
  TOOL_NOT_FOUND: 1,
  TOOL_MANIFEST_INVALID: 1,
  FILE_NOT_FOUND: 1,
  ARTIFACT_NOT_FOUND: 1,
  DATA_SOURCE_INVALID: 1,
  DATA_STORE_UNAVAILABLE: 1,
  REDACTION_REQUIRED: 1,
  LIMIT_EXCEEDED: 1,
  NETWORK_DENIED: 1,
  HTTP_TIMEOUT: 1,
  HTTP_RESPONSE_TOO_LARGE: 1,
  HTTP_FAILED: 1,
  IDEMPOTENCY_KEY_REQUIRED: 1,
  IDEMPOTENCY_CONFLICT: 1,
  PROVIDER_MISMATCH: 1,
  PROVIDER_FAILED: 1,
  PROVIDER_RESULT_MISMATCH: 1,
  FIXTURE_UNMATCHED: 1,
  UNAUTHENTICATED: 1,
  FORBIDDEN: 1,
  OPERATOR_EXISTS: 1,
  OPERATOR_NOT_FOUND: 1,
  LAST_ADMIN: 1,
  TOKEN_NOT_FOUND: 1,
  RATE_LIMITED: 1,
  APPROVAL_NOT_FOUND: 1,
  APPROVAL_STALE: 1,
  APPROVAL_UNVERIFIED: 1,
  GRAPH_INVALID: 1,
  GRAPH_REFERENCE_MISSING: 1,
  GRAPH_STATE_INVALID: 1,
  RETRY_REFUSED: 1,
  KERNEL_EVALUATION_FAILED: 1,
  REGISTRY_NOT_FOUND: 1,
  REGISTRY_INVALID: 1,
  REGISTRY_DIGEST_MISMATCH: 1,
  REGISTRY_SIGNATURE_INVALID: 1,
  REGISTRY_CONFLICT: 1,
};
