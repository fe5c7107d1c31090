/**
 * Where a run or a resume came from, as the run ledger records it (`run_started` and `resumed`
 * events): the entry point, the person behind it when one is known, and the reason they gave.
 * The console's event history reads these back (console/timeline.ts).
 */

/** The entry points that start or continue runs. */
export const RUN_ENTRY_POINTS = ["cli", "mcp", "console", "harness", "runtime"] as const;

/** An entry point (`runtime`: a direct library call that named none). */
export type RunEntryPoint = (typeof RUN_ENTRY_POINTS)[number];

/** Who started or resumed a run, through what, and why. */
export interface RunOrigin {
  via: RunEntryPoint;
  /** The operator's name (console), or null where the entry point does not know one. */
  actor?: string | null;
  /** The reason or note the person gave (an approval's reasons, an answer's note). */
  reason?: string | null;
}

/** The origin as ledger detail: every field present (null when unknown), so entries share one shape. */
export function originDetail(origin: RunOrigin | undefined): {
  via: RunEntryPoint;
  actor: string | null;
  reason: string | null;
} {
  return {
    via: origin?.via ?? "runtime",
    actor: origin?.actor ?? null,
    reason: origin?.reason ?? null,
  };
}
