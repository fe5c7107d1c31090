/**
 * What a harness run reports: one case's result and the report of a whole run. Apart from the
 * runner so that the runtime's interface can name them without importing the harness, which
 * itself builds runtimes.
 */
import type { Receipt } from "../receipts/index.js";
import type { HarnessStatus } from "./fixture.js";

/** The outcome of one case. */
export interface CaseResult {
  name: string;
  /** Prefix of this case's assertion errors (case name or fixture path). */
  label: string;
  status?: HarnessStatus;
  errors: string[];
  receipt?: Receipt;
  graph: boolean;
}

/** The `runx harness` report (one JSON object for every target run). */
export interface HarnessReport {
  status: "passed" | "failed";
  case_count: number;
  assertion_error_count: number;
  assertion_errors: string[];
  case_names: string[];
  receipt_ids: string[];
  graph_case_count: number;
  /** The sealed receipt, for a run of exactly one standalone fixture. */
  receipt?: Receipt;
}
