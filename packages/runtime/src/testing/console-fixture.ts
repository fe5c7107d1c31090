/**
 * Test kit for the console: a scratch workspace holding `echo` and `gated-echo` (a graph
 * whose first step is a human approval gate), with a runtime over it.
 */
import { createRuntime } from "../create-runtime.js";
import type { Runtime } from "../create-runtime.js";
import { makeWorkspace } from "./cli.js";
import type { Workspace } from "./cli.js";

/** A workspace with an approval-gated skill and a runtime over it. */
export interface ConsoleFixture {
  ws: Workspace;
  runtime: Runtime;
  cleanup(): void;
}

/** The gated skill: approval gate, then echo. */
export const GATED_SKILL_YAML = [
  "runners:",
  "  default:",
  "    type: graph",
  "    inputs:",
  "      message: {type: string, required: true}",
  "    graph:",
  "      name: gated-echo",
  "      result_from: [say]",
  "      steps:",
  "        - id: release",
  "          run:",
  "            type: approval",
  "          inputs:",
  "            reason: Release the echo.",
  "            gate_type: release",
  "        - id: say",
  "          skill: ../echo",
  "          context:",
  "            approval: release.approval_decision",
  "          inputs:",
  "            message: $input.message",
  "",
].join("\n");

/** Builds the fixture (env is cleaned of signing keys, so receipts use the local signer). */
export function consoleFixture(): ConsoleFixture {
  const ws = makeWorkspace("runx-console-");
  ws.addBundledSkill("echo");
  ws.write("skills/gated-echo/SKILL.md", "---\nname: gated-echo\n---\nEcho after approval.\n");
  ws.write("skills/gated-echo/X.yaml", GATED_SKILL_YAML);
  const runtime = createRuntime({
    workspaceRoot: ws.root,
    runxHome: ws.home,
    env: { PATH: process.env.PATH, HOME: ws.home },
  });
  return {
    ws,
    runtime,
    cleanup() {
      runtime.close();
      ws.cleanup();
    },
  };
}
