/**
 * `command.plan`: normalizes and digests one `command.execute` input without running it, so a
 * graph can show (or have approved) the exact command first and then pass the digest as
 * `expected_command_digest`; command.execute refuses to run anything else. The plan applies
 * the same admission (contained cwd, env policy, inline-code policy) as the execution would.
 */
import inputSchema from "../../../schemas/tools/command/plan.input.schema.json" with { type: "json" };
import outputSchema from "../../../schemas/tools/command/plan.output.schema.json" with { type: "json" };
import { validateToolsCommandPlanInput } from "../../generated/validate-tools-command-plan.input.js";
import { assertNoInlineCode } from "../../policy/inline-code.js";
import { compareCodePoints } from "../../receipts/canonical.js";
import {
  COMMAND_TIMEOUT_RANGE_MS,
  admitEnv,
  commandDigestOf,
  type CommandExecuteInput,
} from "./command-execute.js";
import { defineTool } from "../define-tool.js";
import { withNamedOutput } from "../packet.js";
import { resolveDirectory, resolveRoot } from "../paths.js";
import type { JsonRecord, NativeTool } from "../types.js";

/** The `command.plan` tool (named output `command_plan`, packet `runx.command.plan.v1`). */
export const commandPlanTool: NativeTool = withNamedOutput(
  defineTool<CommandExecuteInput, JsonRecord>({
    name: "command.plan",
    description: "Normalize and digest one exact argv command without executing it.",
    mutating: false,
    scopes: [],
    inputSchema,
    outputSchema,
    validate: validateToolsCommandPlanInput,
    async run(input, ctx) {
      const args = input.args ?? [];
      const timeoutMs = input.timeout_ms ?? COMMAND_TIMEOUT_RANGE_MS.default;
      const outputMode = input.output_mode ?? "digest";
      const root = await resolveRoot(ctx, { repoRoot: input.repo_root });
      const cwd = await resolveDirectory(root, input.cwd ?? ".", "cwd");
      const env = admitEnv(input.env ?? {}, ctx);
      if (ctx.policy?.strictInlineCode === true) assertNoInlineCode(input.command, args);
      const digest = commandDigestOf({
        command: input.command,
        args,
        cwd: cwd.relative,
        env,
        timeoutMs,
        outputMode,
      });
      return {
        output: {
          schema: "runx.command.plan.v1",
          command_digest: digest,
          cwd: cwd.relative,
          timeout_ms: timeoutMs,
          output_mode: outputMode,
          env_names: Object.keys(env).sort(compareCodePoints),
        },
        summary: `${input.command} planned as ${digest}`,
      };
    },
  }),
  { name: "command_plan", packet: "runx.command.plan.v1" },
);
