/**
 * The one admission rule for answers to a paused run, shared by every entry point (`runx
 * resume`, the console's `runs.answer` before it queues a job, and the resume a job runs):
 * the run is paused, the resume document is well formed, every answer and decision names a
 * pending request of the right kind, and every answer satisfies its request's contract.
 * Reads the run and its checkpoint; writes nothing, so a refusal leaves the run as it was.
 */
import { RuntimeError } from "../errors.js";
import type { AsyncStateOperations } from "../store/port.js";
import type { LedgerEntryRecord, RunRecord } from "../store/types.js";
import { checkAnswerContracts } from "./answer-contract.js";
import { checkAgainstRequests, parseResumeDocument } from "./answers.js";
import type { ResumeAnswers } from "./answers.js";
import { checkpointOf } from "./checkpoint.js";
import type { Checkpoint } from "./checkpoint.js";

/** An admitted resume: the paused run, its verified checkpoint and the checked document. */
export interface AdmittedResume {
  run: RunRecord;
  checkpoint: Checkpoint;
  answers: ResumeAnswers;
}

/** Admits a resume document for `runId`, or throws the refusal (nothing is written). */
export async function admitResume(
  state: Pick<AsyncStateOperations, "getRun" | "readLedger">,
  runId: string,
  document: unknown,
): Promise<AdmittedResume> {
  const run = await state.getRun(runId);
  refuseUnlessPaused(run);
  return admitted(run, await state.readLedger(run.id), document);
}

/**
 * The synchronous form of `admitResume` for the console's answer check, which still reads the
 * embedded SQLite store directly.
 */
export function admitResumeSync(
  state: { getRun(id: string): RunRecord; readLedger(runId: string): LedgerEntryRecord[] },
  runId: string,
  document: unknown,
): AdmittedResume {
  const run = state.getRun(runId);
  refuseUnlessPaused(run);
  return admitted(run, state.readLedger(run.id), document);
}

function refuseUnlessPaused(run: RunRecord): void {
  if (run.status === "sealed" || run.status === "failure") {
    throw new RuntimeError(
      "RESUME_REFUSED",
      `run ${run.id} is ${run.status === "sealed" ? "sealed" : "finished"}; a sealed run is terminal (inspect it with runx history --detail ${run.id})`,
      { run_id: run.id, status: run.status },
    );
  }
  if (run.status === "running") {
    throw new RuntimeError("RESUME_REFUSED", `run ${run.id} is already running`, {
      run_id: run.id,
      status: run.status,
    });
  }
}

function admitted(
  run: RunRecord,
  lines: readonly LedgerEntryRecord[],
  document: unknown,
): AdmittedResume {
  const checkpoint = checkpointOf(run.id, lines);
  const answers = parseResumeDocument(document);
  checkAgainstRequests(answers, checkpoint.requests);
  checkAnswerContracts(answers, checkpoint.requests);
  return { run, checkpoint, answers };
}
