/**
 * The `dispatch-receipt.v1` document one adapter dispatch attempt writes (built in
 * `dispatch-body.ts`, read back by `records.ts` and the console).
 */

import type { AdapterLimits } from "./definition.js";
import type { LogRecord } from "./launch.js";
import type { ProbeRecord } from "./preflight.js";
import type { DispatchFailure, DispatchStatus } from "./vocabulary.js";

/** Who allowed spawning; only an operator-originated invocation can set it. */
export interface SpawnAuthority {
  granted: boolean;
  source: "cli" | "console" | "api" | null;
  principal: string | null;
}

/** `dispatch-receipt.v1`. */
export interface DispatchReceiptBody {
  schema: "dispatch-receipt.v1";
  receipt_id: string;
  kind: "agent_adapter_dispatch";
  run_id: string;
  step_id: string;
  attempt: number;
  graph_run_id: string | null;
  packet_id: string | null;
  packet_digest: string | null;
  retry_of: string | null;
  task_id: string | null;
  skill: { name: string; version: string | null; digest: string };
  adapter_id: string;
  runtime_backend: string | null;
  adapter: {
    id: string;
    definition_digest: string | null;
    definition_path: string | null;
    tool_probe: ProbeRecord | null;
  };
  invoked_by: string;
  invoked_at: string;
  finished_at: string;
  duration_ms: number;
  spawn_authority: SpawnAuthority;
  approval: {
    receipt_id: string;
    approver: string;
    bound_digest: string;
    expires_at: string;
  } | null;
  authority: {
    requested: string[];
    granted: string[];
    claimed_used: string[];
    violations: string[];
    commit_policy: string;
    approval_policy: "required" | "not_required";
    network_declared: "none" | "required" | null;
  };
  workspace: {
    worktree_ref: string | null;
    branch: string | null;
    base_commit: string | null;
    head_after: string | null;
    dirty_after: boolean | null;
    changed_files_digest: string | null;
    /**
     * The changed files as git reports them after the run (never the adapter's claim), each
     * with the sha256 of its bytes in the worktree (null when deleted, not a regular file or
     * over the artifact size limit). At most MAX_CHANGED_FILES are listed; the digest above
     * covers every name. Absent when no worktree was used.
     */
    changed_files?: Array<{ path: string; sha256: string | null }>;
  };
  process: {
    spawned: boolean;
    argv_redacted: string[];
    cwd_ref: string | null;
    env_keys: string[];
    credential_refs: string[];
    stdin_digest: string | null;
    exit_code: number | null;
    signal: string | null;
    timed_out: boolean;
    kill_escalated: boolean;
    cancelled: boolean;
    orphans_detected: boolean;
    kill_method: "process_group" | null;
    process_boundary: "trusted_host_process";
  };
  limits: AdapterLimits | null;
  logs: LogRecord[];
  output_manifest: { path: string; sha256: string | null; status: string | null } | null;
  artifacts: Array<{ role: string; path: string; sha256: string; bytes: number }>;
  undeclared_outputs: string[];
  questions: Array<{ question_id: string }>;
  status: Exclude<DispatchStatus, "created" | "dispatched" | "running">;
  failure: DispatchFailure | null;
  summary: string | null;
  boundary: { proves_handoff_only: true; not_approval: true; not_correctness: true };
}
