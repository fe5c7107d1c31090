/**
 * The `dispatch-receipt.v1` body of one attempt, as far as the attempt got: whatever it has
 * not reached yet (adapter, packet, probe, process) is null or empty, and the receipt id is
 * the digest of everything else.
 */
import { hashCanonical } from "../receipts/index.js";
import { secondsTimestamp } from "../time.js";
import { bindingDigest, type DispatchRequest } from "./attempt.js";
import type { DispatchReceiptBody } from "./dispatch-receipt.js";
import { commandLabel } from "./fs-safety.js";
import { packetAuthority, type WorkPacket } from "./packet.js";
import type { ProbeRecord } from "./preflight.js";
import type { LoadedAdapter } from "./trust.js";
import { approvalRequired, type DispatchFailure } from "./vocabulary.js";

/** What the attempt has established when a body is drafted. */
export interface AttemptProgress {
  invokedAt: Date;
  loaded: LoadedAdapter | undefined;
  packet: WorkPacket | null;
  probeRecord: ProbeRecord | null;
  /** Removes delivered secrets and local paths from text the receipt carries. */
  scrub: (text: string) => string;
}

/** The body with `status` and `failure` (its message scrubbed); `extra` overrides any field. */
export function dispatchBody(
  req: DispatchRequest,
  progress: AttemptProgress,
  status: DispatchReceiptBody["status"],
  failure: DispatchFailure | null,
  extra: Partial<DispatchReceiptBody> = {},
): DispatchReceiptBody {
  const { invokedAt, loaded, packet, probeRecord, scrub } = progress;
  const granted = (): string[] => (packet !== null ? packetAuthority(packet) : []);
  const finished = req.now();
  const draft: Omit<DispatchReceiptBody, "receipt_id"> = {
    schema: "dispatch-receipt.v1",
    kind: "agent_adapter_dispatch",
    run_id: req.runId,
    step_id: req.stepId,
    attempt: req.attempt,
    graph_run_id: req.graphRunId,
    packet_id: packet?.packet_id ?? null,
    packet_digest: packet?.packet_digest ?? null,
    retry_of: packet?.retry_of ?? null,
    task_id: packet?.task_id ?? null,
    skill: { ...req.skill },
    adapter_id: req.adapter.id,
    runtime_backend: loaded?.definition.id ?? null,
    adapter: {
      id: req.adapter.id,
      definition_digest: loaded?.digest ?? null,
      definition_path: loaded?.file ?? null,
      tool_probe: probeRecord,
    },
    invoked_by: req.invokedBy,
    invoked_at: secondsTimestamp(invokedAt),
    finished_at: secondsTimestamp(finished),
    duration_ms: Math.max(0, finished.getTime() - invokedAt.getTime()),
    spawn_authority: { ...req.spawnAuthority },
    approval:
      req.approval?.approved === true
        ? {
            receipt_id: req.approval.requestReceiptId,
            approver: req.approval.approver,
            bound_digest: bindingDigest(req.approval.binding),
            expires_at: req.approval.binding.expires_at,
          }
        : null,
    authority: {
      requested: [...req.adapter.authority].sort(),
      granted: granted(),
      claimed_used: [],
      violations: [],
      commit_policy: req.adapter.commit_policy,
      approval_policy: approvalRequired(granted()) ? "required" : "not_required",
      network_declared: loaded?.definition.network ?? null,
    },
    workspace: {
      worktree_ref: req.adapter.workspace.worktree,
      branch: req.adapter.workspace.branch,
      base_commit: req.adapter.workspace.base_commit,
      head_after: null,
      dirty_after: null,
      changed_files_digest: null,
    },
    process: {
      spawned: false,
      argv_redacted: loaded?.definition.command.argv.map((a) => scrub(commandLabel(a))) ?? [],
      cwd_ref: null,
      env_keys: [],
      credential_refs: [],
      stdin_digest: null,
      exit_code: null,
      signal: null,
      timed_out: false,
      kill_escalated: false,
      cancelled: false,
      orphans_detected: false,
      kill_method: null,
      process_boundary: "trusted_host_process",
    },
    limits: loaded?.definition.limits ?? null,
    logs: [],
    output_manifest: null,
    artifacts: [],
    undeclared_outputs: [],
    questions: [],
    status,
    failure: failure === null ? null : { ...failure, message: scrub(failure.message) },
    summary: null,
    boundary: { proves_handoff_only: true, not_approval: true, not_correctness: true },
    ...extra,
  };
  return { ...draft, receipt_id: hashCanonical(draft) };
}
