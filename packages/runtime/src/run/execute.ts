/** Dispatches a selected runner to its executor and normalises the outcome for sealing. */
import { RuntimeError, isRuntimeError } from "../errors.js";
import type { RunnerDefinition } from "../parser/runner-types.js";
import type { ExecutionBoundaryKind } from "../receipts/index.js";
import { runCliTool } from "../runners/cli-tool.js";
import { runJavascript } from "../runners/javascript.js";
import { REASON_CODE } from "../runners/outcome.js";
import type { RunnerDisposition, RunnerReasonCode } from "../runners/outcome.js";

/** Bytes of each captured stream kept for operators (history detail). */
const STREAM_TAIL_BYTES = 64 * 1024;

/** Runner types `runx skill` executes in this release. */
const SUPPORTED = new Set(["cli-tool", "javascript", "agent-task", "agent", "graph", "adapter"]);

/** Refuses runner types this release cannot execute, before anything runs. */
export function assertRunnerSupported(runner: RunnerDefinition): void {
  if (!SUPPORTED.has(runner.type)) {
    throw new RuntimeError(
      "RUNNER_UNSUPPORTED",
      `runner '${runner.name}' has type ${runner.type}; runx skill executes cli-tool, javascript, agent-task, agent, graph and adapter runners`,
      { runner: runner.name, type: runner.type },
    );
  }
}

/** A runner's outcome in the shape the sealing code needs. */
export interface RunnerOutcome {
  disposition: RunnerDisposition;
  reasonCode: RunnerReasonCode;
  output: Record<string, unknown>;
  summary?: string;
  boundary?: ExecutionBoundaryKind;
  /** Captured process streams (process-backed runners only). */
  streams?: {
    stdoutSha256: string;
    stderrSha256: string;
    stdoutTail: string;
    stderrTail: string;
    stdoutTruncated: boolean;
    stderrTruncated: boolean;
  };
  /** Unsigned facts for the receipt's metadata (limits hit, duration). */
  metadata: Record<string, string | number | boolean>;
}

/** What an execution needs. */
export interface ExecuteOptions {
  runner: RunnerDefinition;
  packageDir: string;
  workspaceRoot: string;
  scratchDir: string;
  inputs: Record<string, unknown>;
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Secret variables delivered to process runners (name → value). */
  secrets: Record<string, string>;
  strictInlineCode: boolean;
  signal: AbortSignal;
  /** runx's own state roots (tools/runx-state.ts), covered from the process where possible. */
  stateRoots: readonly string[];
}

function tail(text: string): string {
  return text.length > STREAM_TAIL_BYTES ? text.slice(text.length - STREAM_TAIL_BYTES) : text;
}

/**
 * Executes the runner. A process that could not be started at all (SPAWN_FAILED: command not
 * found, not executable, arguments and environment too large) is the run failing, the way a
 * process that exits nonzero is: it resolves `failed` / `process_failed` with the reason, and
 * the caller seals it. Refusals before anything is started (PATH_ESCAPE, MODULE_INVALID,
 * POLICY_DENIED, …) still reject, for the caller's `blocked` refusal receipt.
 */
export async function executeRunner(opts: ExecuteOptions): Promise<RunnerOutcome> {
  try {
    return await dispatch(opts);
  } catch (error) {
    if (!isRuntimeError(error) || error.code !== "SPAWN_FAILED") throw error;
    const errno = error.details.errno;
    return {
      disposition: "failed",
      reasonCode: REASON_CODE.failed,
      output: {},
      summary: error.message,
      boundary: opts.runner.type === "javascript" ? "deterministic_worker" : "trusted_host_process",
      metadata: {
        failure_code: error.code,
        ...(typeof errno === "string" ? { errno } : {}),
      },
    };
  }
}

async function dispatch(opts: ExecuteOptions): Promise<RunnerOutcome> {
  const { runner } = opts;
  if (runner.type === "cli-tool") {
    const r = await runCliTool({
      spec: {
        command: runner.command,
        args: runner.args,
        cwd: runner.cwd,
        input_mode: runner.input_mode,
        timeout_seconds: runner.timeout_seconds,
        environment: runner.environment,
        env: runner.env,
        outputs: runner.outputs,
      },
      packageDir: opts.packageDir,
      workspaceRoot: opts.workspaceRoot,
      inputs: opts.inputs,
      baseEnv: opts.baseEnv,
      policy: { strictInlineCode: opts.strictInlineCode },
      signal: opts.signal,
      credentialEnv: opts.secrets,
      stateRoots: opts.stateRoots,
    });
    return {
      disposition: r.disposition,
      reasonCode: r.reasonCode,
      output: r.output,
      ...(r.summary !== undefined ? { summary: r.summary } : {}),
      boundary: "trusted_host_process",
      streams: {
        stdoutSha256: r.stdoutSha256,
        stderrSha256: r.stderrSha256,
        stdoutTail: tail(r.stdout),
        stderrTail: tail(r.stderr),
        stdoutTruncated: r.stdoutTruncated,
        stderrTruncated: r.stderrTruncated,
      },
      metadata: {
        duration_ms: Math.round(r.durationMs),
        exit_code: r.exitCode ?? -1,
        timeout_seconds: r.invocation.timeoutSeconds,
        stdout_bytes: r.stdoutBytes,
        stderr_bytes: r.stderrBytes,
        stdout_truncated: r.stdoutTruncated,
        stderr_truncated: r.stderrTruncated,
        state_isolation: r.stateIsolation,
      },
    };
  }
  if (runner.type === "javascript") {
    const r = await runJavascript({
      spec: {
        module: runner.module,
        export: runner.export,
        timeout_seconds: runner.timeout_seconds,
        environment: runner.environment,
        outputs: runner.outputs,
      },
      packageDir: opts.packageDir,
      inputs: opts.inputs,
      baseEnv: opts.baseEnv,
      signal: opts.signal,
      hideState: { roots: opts.stateRoots, workspaceRoot: opts.workspaceRoot },
    });
    return {
      disposition: r.disposition,
      reasonCode: r.reasonCode,
      output: r.output,
      ...(r.summary !== undefined ? { summary: r.summary } : {}),
      boundary: "deterministic_worker",
      metadata: {
        duration_ms: Math.round(r.durationMs),
        module: r.module,
        export: r.exportName,
        state_isolation: r.stateIsolation,
        ...(r.failureKind !== undefined ? { failure_kind: r.failureKind } : {}),
      },
    };
  }
  assertRunnerSupported(runner);
  throw new RuntimeError("INTERNAL", "unreachable runner dispatch");
}
