/** Key paths for graph errors (`steps[1].context.message`) and the GRAPH_INVALID thrower. */
import { RuntimeError } from "../errors.js";

/** A key path inside a graph document: mapping keys and list indexes. */
export type KeyPath = readonly (string | number)[];

/** Formats a key path as `runners.x.graph.steps[1].inputs.message` (empty for the root). */
export function keyPath(path: KeyPath): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

/** Throws GRAPH_INVALID with the formatted key path (and the step id when known). */
export function invalid(
  message: string,
  at: KeyPath,
  extra: { step_id?: string; key?: string } = {},
): never {
  const details: { path: string; step_id?: string; key?: string } = { path: keyPath(at) };
  if (extra.step_id !== undefined) details.step_id = extra.step_id;
  if (extra.key !== undefined) details.key = extra.key;
  throw new RuntimeError("GRAPH_INVALID", message, details);
}

/** Runs `body`, tagging a GRAPH_INVALID raised inside it with `step_id` when it has none. */
export function withStepId<T>(stepId: string, body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof RuntimeError && error.details.step_id === undefined)
      error.details.step_id = stepId;
    throw error;
  }
}
