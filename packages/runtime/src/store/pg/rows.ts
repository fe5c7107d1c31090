/**
 * Column lists and row decoders of the PostgreSQL state store: database rows (snake_case,
 * `bigint` as text) to the port's records (../types.ts), field for field as SQLite returns
 * them.
 */
import type { ReceiptIndexRecord, RunRecord, StepRecord } from "../types.js";

export const RUN_COLUMNS = `id, skill_name, runner, skill_ref, package_dir, package_digest,
  execution_closure_digest, status, disposition, receipt_id, inputs_digest, result_json,
  requests_json, error_json, created_at, updated_at, created_ms::text AS created_ms, outcome`;

export const STEP_COLUMNS = `run_id, step_id, status, attempt, receipt_id, output_json,
  started_at, finished_at`;

export const INDEX_COLUMNS = `receipt_id, run_id, skill_name, disposition, created_at,
  file_name, is_child, harness`;

const str = (row: Record<string, unknown>, k: string) => row[k] as string;
const opt = (row: Record<string, unknown>, k: string) => (row[k] ?? null) as string | null;

/** A `runs` row as the port's record. */
export function runRow(row: Record<string, unknown>): RunRecord {
  return {
    id: str(row, "id"),
    skillName: str(row, "skill_name"),
    runner: str(row, "runner"),
    skillRef: str(row, "skill_ref"),
    packageDir: str(row, "package_dir"),
    packageDigest: str(row, "package_digest"),
    executionClosureDigest: opt(row, "execution_closure_digest"),
    status: str(row, "status") as RunRecord["status"],
    disposition: opt(row, "disposition"),
    receiptId: opt(row, "receipt_id"),
    inputsDigest: str(row, "inputs_digest"),
    resultJson: opt(row, "result_json"),
    requestsJson: opt(row, "requests_json"),
    errorJson: opt(row, "error_json"),
    createdAt: str(row, "created_at"),
    updatedAt: str(row, "updated_at"),
    createdMs: Number(row.created_ms),
    outcome: str(row, "outcome") as RunRecord["outcome"],
  };
}

/** A `steps` row as the port's record. */
export function stepRow(row: Record<string, unknown>): StepRecord {
  return {
    runId: str(row, "run_id"),
    stepId: str(row, "step_id"),
    status: str(row, "status"),
    attempt: row.attempt as number,
    receiptId: opt(row, "receipt_id"),
    outputJson: opt(row, "output_json"),
    startedAt: opt(row, "started_at"),
    finishedAt: opt(row, "finished_at"),
  };
}

/** A `receipt_index` row as the port's record. */
export function indexRow(row: Record<string, unknown>): ReceiptIndexRecord {
  return {
    receiptId: str(row, "receipt_id"),
    runId: opt(row, "run_id"),
    skillName: str(row, "skill_name"),
    disposition: str(row, "disposition"),
    createdAt: str(row, "created_at"),
    fileName: str(row, "file_name"),
    isChild: row.is_child as boolean,
    harness: row.harness as boolean,
  };
}
