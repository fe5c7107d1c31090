import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsCommandPlanOutput } from "../../generated/validate-tools-command-plan.output.js";
import { commandExecuteTool } from "./command-execute.js";
import { failureCode, makeLayoutContext, successData } from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";
import type { ToolContext } from "../types.js";
import { commandPlanTool } from "./plan.js";

let layout: TestWorkspace;
let ctx: ToolContext;
beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext({ scopes: ["process.exec"] }));
  mkdirSync(join(layout.workspace, "sub"));
});
afterEach(() => layout.cleanup());

describe("command.plan", () => {
  it("digests the normalized command with execute's defaults and lists env names", async () => {
    const data = successData(
      await commandPlanTool.execute(
        { command: "echo", args: ["hi"], cwd: "sub", env: { ZED: "1", ALPHA: "2" } },
        ctx,
      ),
    );
    expect(validateToolsCommandPlanOutput(data)).toBe(true);
    expect(data).toMatchObject({
      schema: "runx.command.plan.v1",
      cwd: "sub",
      timeout_ms: 60000,
      output_mode: "digest",
      env_names: ["ALPHA", "ZED"],
    });
    expect(JSON.stringify(data)).not.toContain('"2"');
  });

  it("yields the digest command.execute accepts as expected_command_digest, and only that one", async () => {
    const input = { command: "echo", args: ["planned"], output_mode: "text" };
    const plan = successData(await commandPlanTool.execute(input, ctx));
    const run = successData(
      await commandExecuteTool.execute(
        { ...input, expected_command_digest: plan.command_digest as string },
        ctx,
      ),
    );
    expect(run).toMatchObject({
      decision: "completed",
      command_digest: plan.command_digest as string,
      stdout: "planned\n",
    });
    const other = await commandExecuteTool.execute(
      { ...input, args: ["changed"], expected_command_digest: plan.command_digest as string },
      ctx,
    );
    expect(failureCode(other)).toBe("INPUT_INVALID");
  });

  it("applies execute's admission: contained cwd, secret env names, inline-code policy", async () => {
    expect(
      failureCode(await commandPlanTool.execute({ command: "echo", cwd: "../outside" }, ctx)),
    ).toBe("PATH_ESCAPE");
    expect(
      failureCode(await commandPlanTool.execute({ command: "echo", env: { RUNX_X: "1" } }, ctx)),
    ).toBe("POLICY_DENIED");
    const strict = { ...ctx, policy: { strictInlineCode: true } };
    expect(
      failureCode(
        await commandPlanTool.execute({ command: "sh", args: ["-c", "echo hi"] }, strict),
      ),
    ).toBe("POLICY_DENIED");
  });

  it("needs no scope and does not mutate", () => {
    expect(commandPlanTool.scopes).toEqual([]);
    expect(commandPlanTool.mutating).toBe(false);
  });
});
