/**
 * One bounded, read-only Git observation: the workspace's `git` binary under the same process
 * supervision as `command.execute` (deny-by-default environment, process group, wall clock,
 * runx state hidden), with no pager, no fsmonitor hook and no optional locks, so observing a
 * working tree never changes it. Output beyond the bound, a timeout or an interrupted run fail
 * the call rather than return a partial view.
 */
import { RuntimeError } from "../../errors.js";
import { superviseProcess } from "../../process/supervise.js";
import { toolProcessEnv, toolStateHiding } from "../tool-process.js";
import type { ToolContext } from "../types.js";

/** Bytes kept of each stream and the wall clock of one observation. */
export const GIT_OUTPUT_LIMIT_BYTES = 64 * 1024;
export const GIT_TIMEOUT_MS = 10_000;

/** What one git invocation returned (stdout redacted and trimmed). */
export interface GitObservation {
  ok: boolean;
  stdout: string;
}

/** Runs `git <args>` in `cwd` (an absolute, contained directory) for the tool `tool`. */
export async function runGit(
  ctx: ToolContext,
  options: { tool: string; cwd: string; args: readonly string[] },
): Promise<GitObservation> {
  const env = { ...toolProcessEnv(ctx), GIT_OPTIONAL_LOCKS: "0", GIT_PAGER: "cat" };
  const proc = await superviseProcess({
    command: "git",
    args: ["--no-pager", "-c", "core.fsmonitor=false", ...options.args],
    cwd: options.cwd,
    env,
    timeoutMs: GIT_TIMEOUT_MS,
    maxBytesPerStream: GIT_OUTPUT_LIMIT_BYTES,
    signal: ctx.signal,
    hideState: toolStateHiding(ctx),
  });
  if (proc.interrupted) {
    throw new RuntimeError("INTERRUPTED", `${options.tool}: git was interrupted`);
  }
  if (proc.timedOut || proc.stdoutTruncated || proc.stderrTruncated || proc.outputLimited) {
    throw new RuntimeError(
      "LIMIT_EXCEEDED",
      `${options.tool}: Git observation exceeded runtime bounds`,
    );
  }
  return {
    ok: proc.exitCode === 0,
    stdout: ctx.taint.redactText(proc.stdout.toString("utf8")).trim(),
  };
}
