/**
 * `command.execute`: one exact argv, no shell, working directory contained in
 * the workspace, deny-by-default environment plus a bounded set of non-secret variables,
 * process-group supervision with a wall clock. The result is the `runx.command.execution.v1`
 * packet: a nonzero exit, a timeout or unusable JSON make `decision: "failed"` with the
 * reasons in `errors`, and the call itself still succeeds so the skill decides what a failed
 * command means. Admission failures (containment, policy, digest drift) and an interrupted
 * run fail the call.
 */
import inputSchema from "../../../schemas/tools/command-execute.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/command-execute.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsCommandExecuteInput } from "../../generated/validate-tools-command-execute.input.js";
import { assertNoInlineCode } from "../../policy/inline-code.js";
import { buildChildEnvironment, isRunxSecretName } from "../../process/environment.js";
import { superviseProcess, type SupervisedProcessResult } from "../../process/supervise.js";
import { toolStateHiding } from "../tool-process.js";
import { hashCanonical } from "../../receipts/canonical.js";
import { defineTool } from "../define-tool.js";
import { resolveDirectory, resolveRoot } from "../paths.js";
import type { Json, JsonRecord, NativeTool, ToolContext } from "../types.js";
import { withNamedOutput } from "../packet.js";

/** Bounds of `command.execute`. */
export const COMMAND_MAX_ARGS = 128;
export const COMMAND_TIMEOUT_RANGE_MS = { min: 1_000, max: 3_600_000, default: 60_000 } as const;

/** How much of the streams the packet carries. */
export type CommandOutputMode = "digest" | "text" | "json";

/** `command.execute` input after schema validation. */
export interface CommandExecuteInput {
  repo_root?: string;
  command: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeout_ms?: number;
  output_mode?: CommandOutputMode;
  expected_command_digest?: string;
}

/** One reason a command's decision is `failed`. */
export type CommandError = { code: string; message?: string; exit_code?: number | null };

/** `runx.command.execution.v1`. */
export type CommandExecution = {
  schema: "runx.command.execution.v1";
  decision: "completed" | "failed";
  command_digest: string;
  cwd: string;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  stdout: string;
  stderr: string;
  stdout_digest: string;
  stderr_digest: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  json: JsonRecord | null;
  errors: CommandError[];
};

/**
 * The explicit variables, refused when they would carry a runx secret, shadow a runx-provided
 * `RUNX_*` variable, or contain a value the run knows to be a delivered secret.
 */
export function admitEnv(
  env: Readonly<Record<string, string>>,
  ctx: ToolContext,
): Record<string, string> {
  for (const [name, value] of Object.entries(env)) {
    const denied = isRunxSecretName(name)
      ? "is a runx secret and is never passed to commands"
      : name.startsWith("RUNX_")
        ? "is reserved for runx-provided variables"
        : ctx.taint.taints(value)
          ? "carries a delivered secret; command.execute accepts only non-secret values"
          : undefined;
    if (denied !== undefined) {
      throw new RuntimeError("POLICY_DENIED", `command.execute: env.${name} ${denied}`, {
        path: `env.${name}`,
      });
    }
  }
  return { ...env };
}

/** The normalized identity `command_digest` commits (shared with `command.plan`). */
export function commandDigestOf(identity: {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  timeoutMs: number;
  outputMode: CommandOutputMode;
}): string {
  const normalized: Record<string, Json> = {
    command: identity.command,
    args: [...identity.args],
    cwd: identity.cwd,
    env: { ...identity.env },
    timeout_ms: identity.timeoutMs,
    output_mode: identity.outputMode,
  };
  return hashCanonical(normalized);
}

function isJsonObject(value: unknown): value is JsonRecord {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Parses stdout for `output_mode: json`; problems become packet errors, not exceptions. */
function parseStdoutJson(
  proc: SupervisedProcessResult,
  ctx: ToolContext,
  errors: CommandError[],
): JsonRecord | null {
  if (proc.stdoutTruncated) {
    errors.push({ code: "command.output_truncated", message: "stdout exceeded the capture limit" });
    return null;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(proc.stdout.toString("utf8"));
  } catch {
    errors.push({ code: "command.output", message: "stdout was not valid JSON" });
    return null;
  }
  if (!isJsonObject(parsed)) {
    errors.push({ code: "command.output", message: "stdout must be one JSON object" });
    return null;
  }
  // Structural redaction: JSON escapes cannot spell a secret back together.
  return ctx.taint.redactJson(parsed) as JsonRecord;
}

/** Maps a finished process onto the execution packet. */
function observe(
  proc: SupervisedProcessResult,
  mode: CommandOutputMode,
  ctx: ToolContext,
): Omit<CommandExecution, "schema" | "command_digest" | "cwd"> {
  const errors: CommandError[] = [];
  const json = mode === "json" ? parseStdoutJson(proc, ctx, errors) : null;
  if (proc.timedOut)
    errors.push({ code: "command.timeout", message: "command exceeded timeout_ms" });
  if (mode !== "digest" && (proc.stdoutTruncated || proc.stderrTruncated)) {
    errors.push({
      code: "command.output_truncated",
      message: "command output exceeded the capture limit",
    });
  }
  if (proc.exitCode !== 0) errors.push({ code: "command.exit", exit_code: proc.exitCode });
  const text = (bytes: Buffer): string =>
    mode === "text" ? ctx.taint.redactText(bytes.toString("utf8")) : "";
  return {
    decision: errors.length === 0 ? "completed" : "failed",
    exit_code: proc.exitCode,
    timed_out: proc.timedOut,
    duration_ms: proc.durationMs,
    stdout: text(proc.stdout),
    stderr: text(proc.stderr),
    stdout_digest: proc.stdoutSha256,
    stderr_digest: proc.stderrSha256,
    stdout_bytes: proc.stdoutBytes,
    stderr_bytes: proc.stderrBytes,
    stdout_truncated: proc.stdoutTruncated,
    stderr_truncated: proc.stderrTruncated,
    json,
    errors,
  };
}

/** The `command.execute` tool. */
export const commandExecuteTool: NativeTool = withNamedOutput(
  defineTool<CommandExecuteInput, CommandExecution>({
    name: "command.execute",
    description:
      "Run one exact argv without a shell inside the workspace, with a deny-by-default environment and a process-group timeout.",
    mutating: true,
    scopes: ["process.exec"],
    inputSchema,
    outputSchema,
    validate: validateToolsCommandExecuteInput,
    async run(input, ctx) {
      const args = input.args ?? [];
      const timeoutMs = input.timeout_ms ?? COMMAND_TIMEOUT_RANGE_MS.default;
      const mode = input.output_mode ?? "digest";
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      const cwd = await resolveDirectory(root, input.cwd ?? ".", "cwd");
      const explicitEnv = admitEnv(input.env ?? {}, ctx);
      if (ctx.policy?.strictInlineCode === true) assertNoInlineCode(input.command, args);

      const commandDigest = commandDigestOf({
        command: input.command,
        args,
        cwd: cwd.relative,
        env: explicitEnv,
        timeoutMs,
        outputMode: mode,
      });
      if (
        input.expected_command_digest !== undefined &&
        input.expected_command_digest !== commandDigest
      ) {
        throw new RuntimeError(
          "INPUT_INVALID",
          "command.execute: expected_command_digest does not match the normalized command",
          { path: "expected_command_digest" },
        );
      }

      const env = buildChildEnvironment({
        baseEnv: ctx.baseEnv,
        inputs: {},
        workspaceRoot: ctx.workspaceRoot,
      });
      // A command tool has no runner inputs; an empty inputs document would only be noise.
      delete env.RUNX_INPUTS_JSON;
      Object.assign(env, explicitEnv);

      const proc = await superviseProcess({
        command: input.command,
        args,
        cwd: cwd.absolute,
        env,
        timeoutMs,
        signal: ctx.signal,
        hideState: toolStateHiding(ctx),
      });
      if (proc.interrupted) {
        throw new RuntimeError("INTERRUPTED", `command.execute: ${input.command} was interrupted`);
      }
      const output: CommandExecution = {
        schema: "runx.command.execution.v1",
        command_digest: commandDigest,
        cwd: cwd.relative,
        ...observe(proc, mode, ctx),
      };
      const exit = output.timed_out ? "timed out" : `exited ${String(output.exit_code)}`;
      return { output, summary: `${input.command} ${exit} (${output.decision})` };
    },
  }),
  { name: "command_execution", packet: "runx.command.execution.v1" },
);
