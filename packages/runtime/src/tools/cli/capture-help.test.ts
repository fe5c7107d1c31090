import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { validateToolsCliHelpOutput } from "../../generated/validate-tools-cli-help.output.js";
import { createTaintSet } from "../../redaction.js";
import { failureCode, makeLayoutContext, successData } from "../../testing/tool-context.js";
import type { TestWorkspace } from "../../testing/tool-context.js";
import type { ToolContext } from "../types.js";
import { cliCaptureHelpTool } from "./capture-help.js";

let layout: TestWorkspace;
let ctx: ToolContext;
beforeEach(() => {
  ({ layout, ctx } = makeLayoutContext({ scopes: ["cli.read"] }));
  mkdirSync(join(layout.workspace, "bin"));
  // A fake CLI that prints its argv and working directory.
  const script = join(layout.workspace, "bin", "tool");
  writeFileSync(
    script,
    '#!/bin/sh\necho "usage: tool $*"\necho "cwd $(basename "$PWD")" >&2\nexit 3\n',
  );
  chmodSync(script, 0o755);
});
afterEach(() => layout.cleanup());

describe("cli.capture_help", () => {
  it("runs the command with its subcommands and --help by default, in the contained cwd", async () => {
    mkdirSync(join(layout.workspace, "sub"));
    const data = successData(
      await cliCaptureHelpTool.execute(
        { command: "../bin/tool", args: ["deploy", "list"], cwd: "sub" },
        ctx,
      ),
    );
    expect(validateToolsCliHelpOutput(data)).toBe(true);
    expect(data).toEqual({
      command: "../bin/tool",
      args: ["deploy", "list"],
      help_flag: "--help",
      cwd: "sub",
      stdout: "usage: tool deploy list --help\n",
      stderr: "cwd sub\n",
      exit_code: 3,
    });
  });

  it("accepts -h and help, and refuses any other help form", async () => {
    for (const flag of ["-h", "help"]) {
      const data = successData(
        await cliCaptureHelpTool.execute({ command: "bin/tool", help_flag: flag }, ctx),
      );
      expect(data.stdout).toBe(`usage: tool ${flag}\n`);
    }
    expect(
      failureCode(
        await cliCaptureHelpTool.execute({ command: "bin/tool", help_flag: "--version" }, ctx),
      ),
    ).toBe("INPUT_INVALID");
  });

  it("refuses flag arguments, too many arguments and a cwd outside the workspace", async () => {
    const flag = await cliCaptureHelpTool.execute({ command: "git", args: ["--exec-path"] }, ctx);
    expect(failureCode(flag)).toBe("INPUT_INVALID");
    expect(flag.status === "failure" && flag.summary).toContain("args[0] must be a subcommand");
    const many = Array.from({ length: 33 }, (_, i) => `a${i}`);
    expect(
      failureCode(await cliCaptureHelpTool.execute({ command: "bin/tool", args: many }, ctx)),
    ).toBe("INPUT_INVALID");
    expect(
      failureCode(
        await cliCaptureHelpTool.execute({ command: "bin/tool", cwd: "../outside" }, ctx),
      ),
    ).toBe("PATH_ESCAPE");
  });

  it("fails with SPAWN_FAILED for a command that does not exist", async () => {
    expect(failureCode(await cliCaptureHelpTool.execute({ command: "no-such-cli-xyz" }, ctx))).toBe(
      "SPAWN_FAILED",
    );
  });

  it("redacts delivered secrets from the captured text", async () => {
    const taint = createTaintSet();
    taint.add("deploy");
    const data = successData(
      await cliCaptureHelpTool.execute(
        { command: "bin/tool", args: ["deploy"] },
        { ...ctx, taint },
      ),
    );
    expect(JSON.stringify(data.stdout)).not.toContain("deploy");
  });
});
