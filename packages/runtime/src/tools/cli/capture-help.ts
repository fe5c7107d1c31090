/**
 * `cli.capture_help`: runs `<command> [subcommands…] <help flag>` as exact argv (no shell) in
 * a directory contained in the workspace, under the process supervision of run-git.ts's
 * baseline environment, and returns the redacted help text (packet `runx.cli.help.v1`). The
 * arguments may only name subcommands, never flags, so the call cannot be steered into doing
 * anything but printing help; output beyond the bound or a timeout fail the call.
 */
import inputSchema from "../../../schemas/tools/cli/capture-help.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/cli/help.output.schema.json" with { type: "json" };
import { RuntimeError } from "../../errors.js";
import { validateToolsCliCaptureHelpInput } from "../../generated/validate-tools-cli-capture-help.input.js";
import { superviseProcess } from "../../process/supervise.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { resolveDirectory, resolveRoot } from "../paths.js";
import { toolProcessEnv, toolStateHiding } from "../tool-process.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** Bytes kept of each stream and the wall clock of one capture. */
export const HELP_OUTPUT_LIMIT_BYTES = 256 * 1024;
export const HELP_TIMEOUT_MS = 15_000;

const TOOL = "cli.capture_help";

/** `cli.capture_help` input after schema validation. */
export interface CaptureHelpInput {
  repo_root?: string;
  command: string;
  args?: string[];
  help_flag?: "--help" | "-h" | "help";
  cwd?: string;
}

/** The `cli.capture_help` tool (wrapped output `cli_help`). */
export const cliCaptureHelpTool: NativeTool = withNamedOutput(
  defineTool<CaptureHelpInput, JsonRecord>({
    name: TOOL,
    description: "Capture bounded CLI help through exact argv in a contained directory.",
    mutating: false,
    scopes: ["cli.read"],
    inputSchema,
    outputSchema,
    validate: validateToolsCliCaptureHelpInput,
    async run(input, ctx) {
      const args = input.args ?? [];
      args.forEach((arg, index) => {
        if (arg.startsWith("-")) {
          throw new RuntimeError(
            "INPUT_INVALID",
            `${TOOL}: args[${index}] must be a subcommand or positional name, not a flag`,
            { path: `args[${index}]` },
          );
        }
      });
      const helpFlag = input.help_flag ?? "--help";
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      const cwd = await resolveDirectory(root, input.cwd ?? ".", "cwd");
      const proc = await superviseProcess({
        command: input.command,
        args: [...args, helpFlag],
        cwd: cwd.absolute,
        env: toolProcessEnv(ctx),
        timeoutMs: HELP_TIMEOUT_MS,
        maxBytesPerStream: HELP_OUTPUT_LIMIT_BYTES,
        signal: ctx.signal,
        hideState: toolStateHiding(ctx),
      });
      if (proc.interrupted) {
        throw new RuntimeError("INTERRUPTED", `${TOOL}: ${input.command} was interrupted`);
      }
      if (proc.timedOut || proc.stdoutTruncated || proc.stderrTruncated || proc.outputLimited) {
        throw new RuntimeError(
          "LIMIT_EXCEEDED",
          `${TOOL}: CLI help capture exceeded runtime bounds`,
        );
      }
      const output: JsonRecord = {
        command: input.command,
        args,
        help_flag: helpFlag,
        cwd: cwd.relative,
        stdout: ctx.taint.redactText(proc.stdout.toString("utf8")),
        stderr: ctx.taint.redactText(proc.stderr.toString("utf8")),
        exit_code: proc.exitCode,
      };
      return { output, summary: `${input.command} ${helpFlag} exited ${String(proc.exitCode)}` };
    },
  }),
  { name: "cli_help", packet: "runx.cli.help.v1" },
);
