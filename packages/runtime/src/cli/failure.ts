/** Rendering of failures: the JSON failure envelope or one readable line. */
import { EXIT_CODE, FAILURE_CATEGORY, formatLocated, isRuntimeError } from "../errors.js";
import type { ErrorCode, ErrorDetails } from "../errors.js";

/** The parts of a failure the CLI renders. */
export interface FailureLike {
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
}

/** Converts anything thrown into a renderable failure; unknown errors become INTERNAL. */
export function toFailure(error: unknown): FailureLike {
  if (isRuntimeError(error))
    return { code: error.code, message: error.message, details: error.details };
  const message = error instanceof Error ? error.message : String(error);
  return { code: "INTERNAL", message };
}

/** Writes a failure in the requested mode and returns its exit code. */
export function renderFailure(
  failure: FailureLike,
  io: { json: boolean; out: (s: string) => void; err: (s: string) => void },
  extra: Record<string, unknown> = {},
): number {
  const details = failure.details ?? {};
  if (io.json) {
    // The envelope's code, reason and message are the failure's own; a detail that happens to
    // use one of those names (e.g. a store's `reason: "operator_exists"`) is kept as detail_<name>.
    const kept: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(details)) {
      kept[key === "code" || key === "reason" || key === "message" ? `detail_${key}` : key] = value;
    }
    const error: Record<string, unknown> = {
      code: FAILURE_CATEGORY[failure.code],
      reason: failure.code,
      message: failure.message,
      ...kept,
      ...extra,
    };
    io.out(`${JSON.stringify({ status: "failure", error })}\n`);
  } else {
    io.err(`runx: ${formatLocated(failure.message, details)}\n`);
    const hint = failure.code === "USAGE" ? "  (see runx --help)\n" : "";
    io.err(hint);
    for (const [k, v] of Object.entries(extra)) io.err(`  ${k}: ${String(v)}\n`);
  }
  return EXIT_CODE[failure.code];
}

/** Runs a command body, rendering any thrown failure. */
export async function guard(
  io: { json: boolean; out: (s: string) => void; err: (s: string) => void },
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (error) {
    return renderFailure(toFailure(error), io);
  }
}
