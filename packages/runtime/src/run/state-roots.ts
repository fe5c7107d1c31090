/**
 * The state roots of a run, apart from the tool catalog: the single-step path (a cli-tool or
 * javascript run) needs them to cover runx's state from its process, and must not load every
 * native tool to get them (the echo run's start-up; cli/startup-modules.test.ts, loader.test.ts).
 */
import { join } from "node:path";
import { stateRootsOf } from "../tools/runx-state.js";
import type { RunScope } from "./context.js";

/** runx's state beyond the workspace's `.runx/` and the run dir (tools/runx-state.ts). */
export function extraStateRoots(deps: RunScope["deps"]): string[] {
  return [deps.paths.receiptDir, ...(deps.stateRoots?.() ?? [])];
}

/**
 * Every state root of a run, as the tools fence them (`stateRootsOf`), for covering them from
 * the processes the run starts (process/state-cover.ts).
 */
export function runStateRoots(scope: RunScope): string[] {
  return stateRootsOf({
    workspaceRoot: scope.deps.paths.root,
    runDir: join(scope.deps.paths.runxDir, "runs", scope.prep.runId),
    stateRoots: extraStateRoots(scope.deps),
  });
}
