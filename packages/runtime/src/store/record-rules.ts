/**
 * Rules every adapter of the run state store applies the same way (SQLite: ./state-store.ts,
 * PostgreSQL: ./pg/state-store.ts), so both return the same records and errors.
 */
import { RuntimeError } from "../errors.js";
import { deriveDetailedOutcome } from "../contracts/envelope.js";
import { MAX_PAGE_SIZE } from "./types.js";

/** A page size of 1–MAX_PAGE_SIZE, or USAGE on `limit`. */
export function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_SIZE) {
    throw new RuntimeError("USAGE", `limit must be an integer from 1 to ${MAX_PAGE_SIZE}`, {
      path: "limit",
    });
  }
  return limit;
}

/** The outcome column's value for a run's status, disposition and pending requests. */
export function outcomeOf(status: string, disposition: string | null, requestsJson: string | null) {
  let kinds: string[] = [];
  if (requestsJson !== null) {
    try {
      const requests = JSON.parse(requestsJson) as unknown;
      if (Array.isArray(requests)) {
        kinds = requests.map((r) => String((r as { kind?: unknown } | null)?.kind));
      }
    } catch {
      kinds = []; // not JSON: no readable requests, as the migration's backfill reads it
    }
  }
  return deriveDetailedOutcome({ status, disposition, requestKinds: kinds });
}
