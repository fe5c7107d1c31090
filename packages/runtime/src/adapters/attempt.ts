/**
 * What one adapter dispatch attempt takes and returns: the request, the outcome, the binding
 * a human approves (with its digest and lifetime), and the directory the attempt's records
 * live in. The gate itself is `dispatch.ts`.
 */
import { hashCanonical } from "../receipts/index.js";
import type { TaintSet } from "../redaction.js";
import type { AdapterLimits } from "./definition.js";
import type { DispatchReceiptBody, SpawnAuthority } from "./dispatch-receipt.js";
import type { WorkPacket } from "./packet.js";
import type { ProbeRunner } from "./preflight.js";

/** The adapter block of an `adapter` runner (or graph step). */
export interface AdapterStepConfig {
  id: string;
  lane: string;
  workflow: string | null;
  authority: string[];
  commit_policy: string;
  workspace: { worktree: string | null; branch: string | null; base_commit: string | null };
}

/** What an approval binds. */
export interface ApprovalBinding {
  packet_digest: string;
  packet_id: string;
  created_at: string;
  /** The packet this one retries (a resume with answers), so the approval rebuilds it. */
  retry_of: string | null;
  adapter_id: string;
  definition_digest: string;
  /** What the step asked for (shown beside what is granted: the request plus prohibitions). */
  authority_requested: string[];
  authority_granted: string[];
  workspace: WorkPacket["workspace"];
  limits: AdapterLimits;
  network: "none" | "required";
  credential_refs: string[];
  expires_at: string;
}

/** A human decision on an approval binding. */
export interface ApprovalDecision {
  approved: boolean;
  binding: ApprovalBinding;
  /** The paused receipt that asked for the decision. */
  requestReceiptId: string;
  approver: string;
}

/** Everything one attempt needs. */
export interface DispatchRequest {
  root: string;
  runxDir: string;
  home?: string | undefined;
  runId: string;
  stepId: string;
  graphRunId: string | null;
  attempt: number;
  skill: { name: string; version: string | null; digest: string };
  adapter: AdapterStepConfig;
  /** The skill/graph policy ceiling. */
  ceiling: readonly string[];
  inputs: Readonly<Record<string, unknown>>;
  baseEnv: Readonly<Record<string, string | undefined>>;
  /** Credential values delivered to the run (ref name → value); all are in `taint`. */
  secrets: Readonly<Record<string, string>>;
  taint: TaintSet;
  spawnAuthority: SpawnAuthority;
  approval: ApprovalDecision | null;
  /** The packet creation time to reuse (a resume rebuilding an approved packet). */
  createdAt?: string;
  /** The packet this attempt retries (a resume with answers to its questions). */
  retryOf?: string;
  /** Whether `fixture_mode` is honoured (harness or test mode, fake-local only). */
  fixtureModes: boolean;
  now(): Date;
  signal: AbortSignal;
  probe?: ProbeRunner;
  invokedBy: string;
  /** Called right before the process starts (tests spy on spawns). */
  onSpawn?: () => void;
}

/** The result of an attempt. */
export type DispatchOutcome =
  | { kind: "needs_approval"; binding: ApprovalBinding; packet: WorkPacket }
  | {
      kind: "attempt";
      body: DispatchReceiptBody;
      packet: WorkPacket | null;
      streams?: { stdoutSha256: string; stderrSha256: string };
      questions: Array<{ question_id: string; prompt: string; answer_schema?: unknown }>;
    };

/** How long an approval stays valid. */
export const APPROVAL_TTL_MS = 24 * 60 * 60 * 1000;

/** The digest an approval decision is bound to. */
export function bindingDigest(binding: ApprovalBinding): string {
  return hashCanonical(binding);
}

/** Relative directory of attempt `n` of a step. */
export function attemptDir(runId: string, stepId: string, attempt: number): string {
  return `.runx/runs/${runId}/dispatch/${stepId.replace(/[^A-Za-z0-9_-]/g, "_")}/${attempt}`;
}
