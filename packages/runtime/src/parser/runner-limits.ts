/**
 * Limits of the process-backed runners, checked when a package loads (parser/runners.ts) and
 * again by each runner before it starts. Kept apart from the runners so the parser does not
 * load process supervision. docs/skills-and-runners.md documents them.
 */

/** Accepted `timeout_seconds` of a cli-tool runner (default 60). */
export const CLI_TOOL_TIMEOUT_RANGE = { min: 1, max: 3600 } as const;
/** Accepted `timeout_seconds` of a javascript runner (default 2). */
export const JAVASCRIPT_TIMEOUT_RANGE = { min: 1, max: 30 } as const;

/** The refusal for a `timeout_seconds` outside `range`, or undefined when it is accepted. */
export function timeoutProblem(
  value: unknown,
  range: { readonly min: number; readonly max: number },
  runnerType: string,
): string | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value < range.min ||
    value > range.max
  ) {
    return `timeout_seconds must be a number from ${range.min} to ${range.max} for a ${runnerType} runner`;
  }
  return undefined;
}
