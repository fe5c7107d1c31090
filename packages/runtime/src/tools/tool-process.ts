/**
 * What every native tool that starts a process hands the supervisor (process/supervise.ts):
 * the deny-by-default baseline environment, with nothing from the run's inputs, and runx's own
 * state hidden from the child except the calling package. One place, so the Git, help-capture,
 * command and external-receipt tools cannot drift apart on what a child may see.
 */
import { buildChildEnvironment } from "../process/environment.js";
import { stateRootsOf } from "./runx-state.js";
import type { ToolContext } from "./types.js";

/** The environment of a supervised tool process: the baseline, nothing from the run's inputs. */
export function toolProcessEnv(ctx: ToolContext): Record<string, string> {
  const env = buildChildEnvironment({
    baseEnv: ctx.baseEnv,
    inputs: {},
    workspaceRoot: ctx.workspaceRoot,
  });
  delete env.RUNX_INPUTS_JSON;
  return env;
}

/** The supervisor's `hideState`: runx's state roots covered, the calling package kept. */
export function toolStateHiding(ctx: ToolContext): {
  roots: string[];
  workspaceRoot: string;
  keep: string[];
} {
  return { roots: stateRootsOf(ctx), workspaceRoot: ctx.workspaceRoot, keep: [ctx.packageDir] };
}
