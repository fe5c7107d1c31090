/** Test kit: a real runtime over a scratch workspace with an approval-gated skill. */
import { createRuntime } from "@runx/runtime";
import type { Runtime } from "@runx/runtime";
import { makeWorkspace } from "../../../packages/runtime/src/testing/cli.js";
import type { Workspace } from "../../../packages/runtime/src/testing/cli.js";
import { GATED_SKILL_YAML } from "../../../packages/runtime/src/testing/console-fixture.js";
import { authThrottle } from "./throttle.js";
import type { AuthThrottle } from "./throttle.js";

/** The workspace and runtime of one test. */
export interface ApiFixture {
  ws: Workspace;
  runtime: Runtime;
  options: { workspaceRoot: string; runxHome: string; env: Record<string, string | undefined> };
  cleanup(): void;
}

/** Builds the fixture. */
export function apiFixture(): ApiFixture {
  const ws = makeWorkspace("runx-api-");
  ws.addBundledSkill("echo");
  ws.write("skills/gated-echo/SKILL.md", "---\nname: gated-echo\n---\nEcho after approval.\n");
  ws.write("skills/gated-echo/X.yaml", GATED_SKILL_YAML);
  const options = {
    workspaceRoot: ws.root,
    runxHome: ws.home,
    env: { PATH: process.env.PATH, HOME: ws.home },
  };
  const runtime = createRuntime(options);
  return {
    ws,
    runtime,
    options,
    cleanup() {
      runtime.close();
      ws.cleanup();
    },
  };
}

/** A password that satisfies the operator contract. */
export const PASSWORD = "correct horse battery";

/** The request-scoped context fields of a direct router call (no session, one address). */
export function requestContext(throttle: AuthThrottle = authThrottle(() => undefined)) {
  return { sessionId: null as string | null, clientAddress: "127.0.0.1", throttle };
}
