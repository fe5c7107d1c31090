/**
 * The `cli-tool` runner: admission (inline-code policy, cwd containment,
 * environment), one supervised process, then the exit status and stdout mapped onto a
 * disposition and an output object. Redaction of what this returns is the caller's job.
 */
import { realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { RuntimeError } from "../errors.js";
import { assertNoInlineCode } from "../policy/inline-code.js";
import {
  buildChildEnvironment,
  writeInputFiles,
  type DeclaredEnvironment,
} from "../process/environment.js";
import type { StateIsolation } from "../process/state-cover.js";
import { superviseProcess, type SupervisedProcessResult } from "../process/supervise.js";
import { expandArgs } from "./cli-template.js";
import { CLI_TOOL_TIMEOUT_RANGE } from "../parser/runner-limits.js";
import {
  REASON_CODE,
  isJsonObject,
  tailText,
  type RunnerDisposition,
  type RunnerReasonCode,
} from "./outcome.js";

/** Default wall clock when the runner declares none. */
export const CLI_TOOL_DEFAULT_TIMEOUT_SECONDS = 60;
/** Accepted `timeout_seconds` range (checked at package load too: limits.ts). */
export { CLI_TOOL_TIMEOUT_RANGE } from "../parser/runner-limits.js";
/** The exact `cwd` token meaning the workspace root. */
export const WORKSPACE_CWD_TOKEN = "{{env.RUNX_CWD}}";

/** How inputs reach the process besides the environment. */
export type CliInputMode = "args" | "stdin" | "none";

/** The fields of a cli-tool runner definition this runner reads. */
export interface CliToolSpec {
  command: string;
  args?: readonly string[] | undefined;
  cwd?: string | undefined;
  input_mode?: CliInputMode | undefined;
  timeout_seconds?: number | undefined;
  environment?: DeclaredEnvironment | undefined;
  env?: Readonly<Record<string, string>> | undefined;
  /** Declared structured outputs; when present stdout must be one JSON object. */
  outputs?: unknown;
}

/** Everything one invocation needs. */
export interface RunCliToolOptions {
  spec: CliToolSpec;
  /** The skill package directory: default cwd and base for a relative `cwd`. */
  packageDir: string;
  workspaceRoot: string;
  /** Validated inputs. */
  inputs: Readonly<Record<string, unknown>>;
  /** The invoking environment; only allowlisted and declared names are read. */
  baseEnv: Readonly<Record<string, string | undefined>>;
  policy: { strictInlineCode: boolean };
  /** runx's own state roots, covered from the process where the host allows it. */
  stateRoots?: readonly string[] | undefined;
  /** Aborting (Ctrl-C) kills the process group; the result is `killed`. */
  signal?: AbortSignal | undefined;
  /** Resolved credential delivery variables. */
  credentialEnv?: Readonly<Record<string, string>> | undefined;
  /** When given, inputs are also written here for `RUNX_INPUTS_PATH` / `RUNX_INPUT_<NAME>_PATH`. */
  scratchDir?: string | undefined;
  /** SIGTERM-to-SIGKILL grace after a timeout (default 2000 ms). */
  graceMs?: number | undefined;
  /** Retention per stream (default 8 MiB). */
  maxBytesPerStream?: number | undefined;
}

/** The process that was (or would have been) run, after templating and resolution. */
export interface CliToolInvocation {
  command: string;
  args: string[];
  cwd: string;
  inputMode: CliInputMode;
  timeoutSeconds: number;
}

/** How the invocation ended, with the captured streams and their commitments. */
export interface CliToolResult {
  disposition: RunnerDisposition;
  reasonCode: RunnerReasonCode;
  exitCode: number | null;
  signal: string | null;
  /** Parsed stdout object, or `{stdout}`; empty unless `closed`. */
  output: Record<string, unknown>;
  /** One-line reason for anything but `closed` (stderr tail for a nonzero exit). */
  summary?: string;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  stdoutBytes: number;
  stderrBytes: number;
  stdoutSha256: string;
  stderrSha256: string;
  durationMs: number;
  invocation: CliToolInvocation;
  /** Whether runx's own state was covered from the process (process/state-cover.ts). */
  stateIsolation: StateIsolation;
}

function invalid(path: string, message: string): RuntimeError {
  return new RuntimeError("PACKAGE_INVALID", message, { path });
}

function checkSpec(spec: CliToolSpec): { inputMode: CliInputMode; timeoutSeconds: number } {
  if (
    typeof spec.command !== "string" ||
    spec.command.trim() === "" ||
    spec.command.includes("\0")
  ) {
    throw invalid("command", "cli-tool command must be a non-empty string");
  }
  if (
    spec.args !== undefined &&
    (!Array.isArray(spec.args) || !spec.args.every((a) => typeof a === "string"))
  ) {
    throw invalid("args", "cli-tool args must be a list of strings");
  }
  const inputMode = spec.input_mode ?? "args";
  if (!["args", "stdin", "none"].includes(inputMode)) {
    throw invalid("input_mode", "input_mode must be args, stdin or none");
  }
  const timeoutSeconds = spec.timeout_seconds ?? CLI_TOOL_DEFAULT_TIMEOUT_SECONDS;
  const { min, max } = CLI_TOOL_TIMEOUT_RANGE;
  if (
    typeof timeoutSeconds !== "number" ||
    !Number.isFinite(timeoutSeconds) ||
    timeoutSeconds < min ||
    timeoutSeconds > max
  ) {
    throw invalid("timeout_seconds", `timeout_seconds must be between ${min} and ${max}`);
  }
  return { inputMode, timeoutSeconds };
}

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function realDir(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/**
 * The working directory: the package dir by default, `{{env.RUNX_CWD}}` for the workspace
 * root, else `cwd` relative to the package dir. Must stay inside the package dir or the
 * workspace after symlinks are resolved (PATH_ESCAPE).
 */
export function resolveRunnerCwd(
  cwd: string | undefined,
  packageDir: string,
  workspaceRoot: string,
): string {
  const pkg = realDir(packageDir);
  const workspace = realDir(workspaceRoot);
  if (cwd === undefined || cwd === "") return pkg;
  if (cwd === WORKSPACE_CWD_TOKEN) return workspace;
  if (cwd.includes("{{"))
    throw invalid("cwd", `cwd supports only the exact token ${WORKSPACE_CWD_TOKEN}`);
  const candidate = resolve(pkg, cwd);
  const escape = new RuntimeError(
    "PATH_ESCAPE",
    "cwd resolves outside the package and the workspace",
    {
      path: "cwd",
    },
  );
  if (!isInside(candidate, pkg) && !isInside(candidate, workspace)) throw escape;
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    throw new RuntimeError("SPAWN_FAILED", "cwd does not exist", { path: "cwd" });
  }
  if (!isInside(real, pkg) && !isInside(real, workspace)) throw escape;
  // runx's own state is not a working directory (tools/runx-state.ts fences the native tools).
  const state = join(workspace, ".runx");
  if (isInside(real, state) && !(isInside(pkg, state) && isInside(real, pkg))) {
    throw new RuntimeError("POLICY_DENIED", "cwd is inside runx's own state (.runx/)", {
      path: "cwd",
    });
  }
  return real;
}

/** Maps a finished process onto a disposition and output. */
export function interpretCliProcess(
  proc: SupervisedProcessResult,
  spec: Pick<CliToolSpec, "outputs">,
  invocation: CliToolInvocation,
): CliToolResult {
  const stdout = proc.stdout.toString("utf8");
  const base = {
    exitCode: proc.exitCode,
    signal: proc.signal,
    stdout,
    stderr: proc.stderr.toString("utf8"),
    stdoutTruncated: proc.stdoutTruncated,
    stderrTruncated: proc.stderrTruncated,
    stdoutBytes: proc.stdoutBytes,
    stderrBytes: proc.stderrBytes,
    stdoutSha256: proc.stdoutSha256,
    stderrSha256: proc.stderrSha256,
    durationMs: proc.durationMs,
    invocation,
    stateIsolation: proc.stateIsolation,
  };
  const end = (
    disposition: RunnerDisposition,
    summary?: string,
    output: Record<string, unknown> = {},
  ): CliToolResult => ({
    disposition,
    reasonCode: REASON_CODE[disposition],
    output,
    ...(summary === undefined ? {} : { summary }),
    ...base,
  });

  if (proc.interrupted) return end("killed", "interrupted; the process group was terminated");
  if (proc.timedOut) return end("timed_out", `timed out after ${invocation.timeoutSeconds}s`);
  if (proc.exitCode !== 0) {
    const tail = tailText(proc.stderr);
    const status =
      proc.exitCode === null
        ? `terminated by ${proc.signal ?? "a signal"}`
        : `exited with code ${proc.exitCode}`;
    return end("failed", tail === "" ? status : tail);
  }

  let parsed: unknown;
  try {
    parsed = proc.stdoutTruncated ? undefined : JSON.parse(stdout);
  } catch {
    parsed = undefined;
  }
  const declaresOutputs = spec.outputs !== undefined && spec.outputs !== null;
  if (declaresOutputs && proc.stdoutTruncated) {
    return end(
      "failed",
      `stdout exceeded the ${proc.stdout.length}-byte capture limit; declared outputs cannot be read`,
    );
  }
  if (declaresOutputs && !isJsonObject(parsed)) {
    return end("failed", "the runner declares outputs but stdout is not a JSON object");
  }
  return end("closed", undefined, isJsonObject(parsed) ? parsed : { stdout });
}

/**
 * Runs a cli-tool runner once. Throws before anything is spawned for admission failures
 * (POLICY_DENIED, PATH_ESCAPE, PACKAGE_INVALID, INPUT_INVALID, ENV_MISSING) and when the
 * command cannot start (SPAWN_FAILED); every started process ends in a result.
 */
export async function runCliTool(opts: RunCliToolOptions): Promise<CliToolResult> {
  const { spec } = opts;
  const { inputMode, timeoutSeconds } = checkSpec(spec);
  const declaredArgs = spec.args ?? [];
  if (opts.policy.strictInlineCode) assertNoInlineCode(spec.command, declaredArgs);
  const args = expandArgs(declaredArgs, { inputs: opts.inputs, workspaceRoot: opts.workspaceRoot });
  // Inputs can supply flags too (`sh $input.flag …`); judge the argv that would really run.
  if (opts.policy.strictInlineCode) assertNoInlineCode(spec.command, args);
  const cwd = resolveRunnerCwd(spec.cwd, opts.packageDir, opts.workspaceRoot);
  const env = buildChildEnvironment({
    baseEnv: opts.baseEnv,
    declared: spec.environment,
    literalEnv: spec.env,
    credentialEnv: opts.credentialEnv,
    inputs: opts.inputs,
    workspaceRoot: opts.workspaceRoot,
    inputFiles:
      opts.scratchDir === undefined ? undefined : writeInputFiles(opts.scratchDir, opts.inputs),
  });
  const invocation: CliToolInvocation = {
    command: spec.command,
    args,
    cwd,
    inputMode,
    timeoutSeconds,
  };
  const proc = await superviseProcess({
    command: spec.command,
    args,
    cwd,
    env,
    stdin: inputMode === "stdin" ? JSON.stringify(opts.inputs) : undefined,
    timeoutMs: timeoutSeconds * 1000,
    graceMs: opts.graceMs,
    signal: opts.signal,
    maxBytesPerStream: opts.maxBytesPerStream,
    hideState:
      opts.stateRoots === undefined
        ? undefined
        : { roots: opts.stateRoots, workspaceRoot: opts.workspaceRoot, keep: [opts.packageDir] },
  });
  return interpretCliProcess(proc, spec, invocation);
}
