/**
 * One adapter dispatch attempt: the deny-by-default gate in
 * its fixed order, then launch, collection and the dispatch-receipt document. Every outcome —
 * rejected, dry run, needing approval, launched — is returned as data; the caller seals it.
 * Nothing is written before the gate has passed: a refusal leaves the workspace untouched.
 *
 * Gate order: the run's own directory reached without a symlink (every record of the attempt
 * lives there) → adapter known, valid and trusted → packet executable → lane supported → scope
 * within the adapter maximum and the policy ceiling → `--allow-spawn` given → approval present
 * where required (and still bound to the same packet, adapter and authority) → worktree and
 * branch → tool probe → configuration → a fresh output directory.
 *
 * Why spawn authority comes before approval: the source contract (spec 002, "Current
 * decision") has the runtime validate the packet and "write receipt/evidence by default without
 * spawning", launching only through an explicit `--allow-spawn` gate followed by the
 * branch/worktree/version checks. Without `--allow-spawn` the default outcome is therefore a
 * sealed `dry_run` receipt, never a pause asking a human to approve a launch that would not
 * happen (the static checks run before anyone is asked).
 * A summary listed approval before the flag; the source document wins (docs/decisions/0003).
 */
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hashCanonical, sha256Prefixed } from "../receipts/index.js";
import type { TaintSet } from "../redaction.js";
import type { AdapterLimits } from "./definition.js";
import type { DispatchReceiptBody, SpawnAuthority } from "./dispatch-receipt.js";
import { checkContained, commandLabel, hasSymlinkComponent } from "./fs-safety.js";
import { launchAdapterProcess, processProbeRunner, scrubText, writeLogs } from "./launch.js";
import { collectOutputs, MANIFEST_FILE } from "./manifest.js";
import { runPathProblem } from "./records.js";
import { buildWorkPacket, notExecutableReason, packetAuthority } from "./packet.js";
import type { WorkPacket } from "./packet.js";
import { checkWorkspace, probeTool } from "./preflight.js";
import type { ProbeRecord, ProbeRunner } from "./preflight.js";
import { AdapterLoadProblem, loadAdapter, readTrust } from "./trust.js";
import type { LoadedAdapter } from "./trust.js";
import {
  approvalRequired,
  authorityExcess,
  dispatchFailure,
  isAuthorityWord,
  WRITE_WORDS,
} from "./vocabulary.js";
import type { DispatchFailure, FailureCode } from "./vocabulary.js";
import { secondsTimestamp } from "../time.js";

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

export type { DispatchReceiptBody, SpawnAuthority } from "./dispatch-receipt.js";

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

/** Runs one attempt through the gate and, when every check passes, the adapter process. */
export async function dispatchAttempt(req: DispatchRequest): Promise<DispatchOutcome> {
  const invokedAt = req.now();
  const rel = attemptDir(req.runId, req.stepId, req.attempt);
  const scrub = (text: string): string =>
    scrubText(text, req.taint, { root: req.root, home: req.home });
  let loaded: LoadedAdapter | undefined;
  let packet: WorkPacket | null = null;
  let probeRecord: ProbeRecord | null = null;
  const granted = (): string[] => (packet !== null ? packetAuthority(packet) : []);

  const body = (
    status: DispatchReceiptBody["status"],
    failure: DispatchFailure | null,
    extra: Partial<DispatchReceiptBody> = {},
  ): DispatchReceiptBody => {
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
  };
  const refuse = (code: FailureCode, message: string): DispatchOutcome => ({
    kind: "attempt",
    body: body(
      code === "spawn_authority_missing" ? "dry_run" : "rejected",
      dispatchFailure(code, message),
    ),
    packet,
    questions: [],
  });

  // 0. The run's directory (`.runx/runs/<run_id>`, where this attempt's record, packet, logs
  // and outputs go) has no symlinked component: nothing of the attempt may land at a link's
  // target, whatever the rest of the gate decides.
  const runProblem = runPathProblem(req.runxDir, req.runId);
  if (runProblem !== undefined) return refuse("path_unsafe", runProblem);

  // 1–3. The adapter is named, its definition valid and allowed, and it is trusted as is.
  if (req.adapter.id === "") return refuse("unsupported_adapter", "the step names no adapter");
  try {
    loaded = loadAdapter(req.root, req.adapter.id);
  } catch (error) {
    if (error instanceof AdapterLoadProblem) return refuse(error.code, error.message);
    throw error;
  }
  const { definition } = loaded;
  const trust = readTrust(req.runxDir)[definition.id];
  if (trust === undefined)
    return refuse(
      "adapter_not_trusted",
      `adapter ${definition.id} is not trusted here (runx adapter trust ${definition.id})`,
    );
  if (trust.definition_digest !== loaded.digest) {
    return refuse(
      "adapter_digest_mismatch",
      `adapter ${definition.id} changed since it was trusted (definition or payload files); review it and trust it again`,
    );
  }

  // 4. The packet is executable.
  const fixtureMode =
    req.fixtureModes &&
    definition.id === "fake-local" &&
    typeof req.inputs.fixture_mode === "string"
      ? req.inputs.fixture_mode
      : null;
  packet = buildWorkPacket({
    packetId: `pkt_${req.runId}_${req.stepId.replace(/[^A-Za-z0-9_-]/g, "_")}_${req.attempt}`,
    runId: req.runId,
    stepId: req.stepId,
    graphRunId: req.graphRunId,
    skill: req.skill,
    retryOf: req.retryOf ?? null,
    createdAt: req.createdAt ?? secondsTimestamp(invokedAt),
    inputs: req.inputs,
    lane: req.adapter.lane,
    workflow: req.adapter.workflow,
    adapterId: definition.id,
    requested: req.adapter.authority,
    commitPolicy: req.adapter.commit_policy,
    workspace: {
      worktree_ref: req.adapter.workspace.worktree,
      branch: req.adapter.workspace.branch,
      base_commit: req.adapter.workspace.base_commit,
    },
    outDir: `${rel}/out`,
    fixtureMode,
  });
  const notExecutable = notExecutableReason(packet);
  if (notExecutable !== undefined) return refuse("package_not_executable", notExecutable);

  // 5. Lane and workflow.
  if (!definition.lanes.includes(packet.lane))
    return refuse("unsupported_lane", `adapter ${definition.id} does not run lane ${packet.lane}`);
  if (packet.workflow !== null && !definition.workflows.includes(packet.workflow)) {
    return refuse(
      "unsupported_lane",
      `adapter ${definition.id} does not run workflow ${packet.workflow}`,
    );
  }

  // 6. Scope within the adapter maximum and the policy ceiling; credentials granted.
  const requested = packet.authority.requested.filter(isAuthorityWord);
  const excess = authorityExcess(requested, definition.max_authority, req.ceiling);
  if (excess.overAdapter.length > 0)
    return refuse(
      "unsafe_scope",
      `adapter ${definition.id} cannot honour ${excess.overAdapter.join(", ")}`,
    );
  if (excess.overCeiling.length > 0)
    return refuse(
      "unsafe_scope",
      `the skill's policy does not allow ${excess.overCeiling.join(", ")}`,
    );
  const credentialRefs = requested
    .filter((w) => w.startsWith("credentials:"))
    .map((w) => w.slice("credentials:".length));
  const ungranted = credentialRefs.filter((ref) => !definition.env.credentials.includes(ref));
  if (ungranted.length > 0)
    return refuse(
      "credential_not_granted",
      `adapter ${definition.id} is not granted credential ${ungranted.join(", ")}`,
    );

  // 7. Spawn authority, only from an operator-originated invocation. Checked before approval
  // (spec 002): without it the attempt is a recorded dry run and no human is asked to approve.
  if (!req.spawnAuthority.granted) {
    return refuse(
      "spawn_authority_missing",
      "no --allow-spawn: recorded as a dry run, nothing was launched",
    );
  }

  // 8. Approval where required, bound to this packet, adapter and authority.
  const authority = packetAuthority(packet);
  if (approvalRequired(authority)) {
    const binding: ApprovalBinding = {
      packet_digest: packet.packet_digest,
      packet_id: packet.packet_id,
      created_at: packet.created_at,
      retry_of: packet.retry_of,
      adapter_id: definition.id,
      definition_digest: loaded.digest,
      authority_requested: [...packet.authority.requested],
      authority_granted: authority,
      workspace: { ...packet.workspace },
      limits: definition.limits,
      network: definition.network,
      credential_refs: credentialRefs,
      expires_at:
        req.approval?.binding.expires_at ??
        secondsTimestamp(new Date(invokedAt.getTime() + APPROVAL_TTL_MS)),
    };
    if (req.approval === null) return { kind: "needs_approval", binding, packet };
    if (!req.approval.approved) return refuse("missing_authority", "the approval was declined");
    if (bindingDigest(req.approval.binding) !== bindingDigest(binding)) {
      return refuse(
        "approval_stale",
        "the packet, adapter, authority or workspace changed since the approval",
      );
    }
    if (Date.parse(req.approval.binding.expires_at) < invokedAt.getTime())
      return refuse("approval_stale", "the approval has expired");
  }

  // 9. Workspace, when required or when a write word is requested.
  const probe = req.probe ?? processProbeRunner(childPath(req.baseEnv));
  const needsWorktree =
    definition.workspace.requires_worktree || authority.some((w) => WRITE_WORDS.has(w));
  const ws = await checkWorkspace({
    root: req.root,
    packet,
    definition,
    required: needsWorktree,
    run: probe,
  });
  if ("code" in ws) return refuse(ws.code, ws.message);

  // 10. Tool probe.
  const probed = await probeTool(definition, req.root, probe);
  probeRecord = probed.record;
  if (probed.problem !== undefined) return refuse(probed.problem.code, probed.problem.message);

  // 11. Configuration: allowlisted names set, credentials delivered.
  const env: Record<string, string> = childPath(req.baseEnv);
  for (const name of definition.env.allow) {
    const value = req.baseEnv[name];
    if (value === undefined)
      return refuse("missing_configuration", `environment variable ${name} is not set`);
    env[name] = value;
  }
  Object.assign(env, definition.env.values);
  for (const ref of credentialRefs) {
    const value = req.secrets[ref];
    if (value === undefined)
      return refuse(
        "missing_configuration",
        `credential ${ref} was not delivered (--secret-env ${ref})`,
      );
    env[ref] = value;
  }

  // 12. A fresh output directory with no symlink on the way.
  // Every existing component is checked before anything is created, so a symlinked parent
  // (`.runx`, `.runx/runs/<run>`, ...) never has directories made through it.
  const absAttempt = join(req.root, rel);
  if (existsSync(absAttempt))
    return refuse("path_unsafe", `${rel} already exists; an output directory is always fresh`);
  if (hasSymlinkComponent(req.root, absAttempt))
    return refuse("path_unsafe", `${rel} is reached through a symlink`);
  mkdirSync(join(absAttempt, "out"), { recursive: true, mode: 0o700 });
  if (hasSymlinkComponent(req.root, join(absAttempt, "out")))
    return refuse("path_unsafe", `${rel} is reached through a symlink`);
  const outDir = join(absAttempt, "out");
  env.RUNX_ADAPTER_OUT_DIR = outDir;
  env.RUNX_ADAPTER_PACKET_ID = packet.packet_id;
  env.RUNX_ADAPTER_RUN_ID = req.runId;
  // The time the runtime allows (a wrapper stops its tool a little earlier to still report).
  env.RUNX_ADAPTER_TIMEOUT_MS = String(definition.limits.timeout_ms);

  // Launch.
  const packetJson = JSON.stringify(packet);
  writeFileSync(join(absAttempt, "packet.json"), `${packetJson}\n`, { mode: 0o600, flag: "wx" });
  const stdin =
    definition.command.stdin === "packet_json"
      ? packetJson
      : definition.command.stdin === "prompt_text"
        ? promptText(packet)
        : undefined;
  const argv = [
    ...loaded.launchArgv,
    ...(definition.command.append_packet_path ? [join(absAttempt, "packet.json")] : []),
  ];
  const cwd = ws.worktreePath ?? outDir;
  const processFacts = {
    spawned: true,
    argv_redacted: [
      ...definition.command.argv,
      ...(definition.command.append_packet_path ? [`${rel}/packet.json`] : []),
    ].map((a) => scrub(commandLabel(a))),
    cwd_ref: ws.worktreePath !== null ? req.adapter.workspace.worktree : `${rel}/out`,
    env_keys: Object.keys(env).sort(),
    credential_refs: credentialRefs,
    stdin_digest: stdin !== undefined ? sha256Prefixed(stdin) : null,
    kill_method: "process_group" as const,
  };
  req.onSpawn?.();
  let launched;
  try {
    launched = await launchAdapterProcess({
      argv,
      cwd,
      env,
      stdin,
      limits: definition.limits,
      signal: req.signal,
      cancelFile: join(req.runxDir, "runs", req.runId, "cancel-requested"),
    });
  } catch (error) {
    return {
      kind: "attempt",
      body: body(
        "failed",
        dispatchFailure("spawn_error", error instanceof Error ? error.message : String(error)),
        {
          process: { ...body("failed", null).process, ...processFacts },
        },
      ),
      packet,
      questions: [],
    };
  }
  const p = launched.process;
  // The process could have swapped a link into the attempt's path while it ran: nothing is
  // written (logs) or read (manifest, artifacts) through one.
  if (hasSymlinkComponent(req.root, outDir)) {
    return {
      kind: "attempt",
      body: body(
        "failed",
        dispatchFailure("path_unsafe", `${rel} was replaced by a symlink while the adapter ran`),
        {
          process: {
            ...body("failed", null).process,
            ...processFacts,
            exit_code: p.exitCode,
            signal: p.signal,
            timed_out: p.timedOut,
            cancelled: launched.cancelled,
            orphans_detected: launched.orphansDetected,
          },
        },
      ),
      packet,
      streams: { stdoutSha256: p.stdoutSha256, stderrSha256: p.stderrSha256 },
      questions: [],
    };
  }
  const logs = writeLogs(absAttempt, rel, p, definition.limits, scrub);
  const process = {
    ...body("failed", null).process,
    ...processFacts,
    exit_code: p.exitCode,
    signal: p.signal,
    timed_out: p.timedOut,
    kill_escalated: p.signal === "SIGKILL" && (p.timedOut || launched.cancelled || p.outputLimited),
    cancelled: launched.cancelled,
    orphans_detected: launched.orphansDetected,
  };
  const workspace = {
    ...body("failed", null).workspace,
    ...(ws.worktreePath !== null
      ? await workspaceAfter(ws.worktreePath, packet, probe, definition.limits)
      : {}),
  };
  const streams = { stdoutSha256: p.stdoutSha256, stderrSha256: p.stderrSha256 };
  const base = { process, logs, workspace };
  const done = (
    status: DispatchReceiptBody["status"],
    failure: DispatchFailure | null,
    extra: Partial<DispatchReceiptBody> = {},
    questions: Array<{ question_id: string; prompt: string; answer_schema?: unknown }> = [],
  ): DispatchOutcome => ({
    kind: "attempt",
    body: body(status, failure, { ...base, ...extra }),
    packet,
    streams,
    questions,
  });

  if (launched.cancelled)
    return done("cancelled", dispatchFailure("cancelled", "the dispatch was cancelled"));
  if (p.timedOut)
    return done(
      "failed",
      dispatchFailure("runtime_timeout", `the adapter ran past ${definition.limits.timeout_ms} ms`),
    );
  if (p.outputLimited)
    return done(
      "failed",
      dispatchFailure(
        "output_limit_exceeded",
        `the adapter wrote more than ${definition.limits.hard_output_bytes} bytes`,
      ),
    );
  if (p.signal !== null)
    return done("failed", dispatchFailure("runtime_signaled", `the adapter died from ${p.signal}`));

  // Collection: the manifest is the only status channel.
  const collected = collectOutputs({
    outDir,
    packetId: packet.packet_id,
    runId: req.runId,
    limits: definition.limits,
  });
  const manifestRecord = (
    status: string | null,
    sha: string | null,
  ): DispatchReceiptBody["output_manifest"] =>
    sha === null ? null : { path: `${rel}/out/${MANIFEST_FILE}`, sha256: sha, status };
  if (p.exitCode !== 0) {
    return done(
      "failed",
      dispatchFailure(
        "runtime_non_zero",
        `the adapter exited with status ${p.exitCode ?? "unknown"}`,
      ),
      {
        output_manifest: manifestRecord(
          collected.manifest?.status ?? null,
          collected.manifestSha256 ?? null,
        ),
        undeclared_outputs: collected.undeclared,
      },
    );
  }
  if (!collected.ok) {
    return done("failed", dispatchFailure(collected.code, collected.message), {
      output_manifest: manifestRecord(
        collected.manifest?.status ?? null,
        collected.manifestSha256 ?? null,
      ),
      undeclared_outputs: collected.undeclared,
    });
  }
  const manifest = collected.manifest;
  const claimed = [...(manifest.authority_used ?? [])].sort();
  const violations = claimed.filter((w) => !authority.includes(w));
  const extra: Partial<DispatchReceiptBody> = {
    output_manifest: manifestRecord(manifest.status, collected.manifestSha256),
    artifacts: collected.artifacts,
    undeclared_outputs: collected.undeclared,
    questions: (manifest.questions ?? []).map((q) => ({ question_id: q.question_id })),
    summary: manifest.summary !== undefined ? scrub(manifest.summary) : null,
    authority: {
      ...body("failed", null).authority,
      claimed_used: claimed.map(scrub),
      violations: violations.map(scrub),
    },
  };
  if (violations.length > 0) {
    return done(
      "failed",
      dispatchFailure(
        "authority_violation",
        `the adapter claims authority it was not granted: ${violations.map(scrub).join(", ")}`,
      ),
      extra,
    );
  }
  switch (manifest.status) {
    case "completed":
      return done("completed", null, extra);
    case "needs_input":
      return done(
        "blocked",
        null,
        extra,
        (manifest.questions ?? []).map((q) => ({ ...q, prompt: scrub(q.prompt) })),
      );
    case "blocked":
      return done(
        "blocked",
        dispatchFailure(
          "runtime_blocked",
          manifest.blocker !== undefined
            ? `${manifest.blocker.code}: ${manifest.blocker.message}`
            : "the adapter reported blocked",
        ),
        extra,
      );
    default: {
      const code = manifest.failure?.code;
      const portable: FailureCode =
        code === "prompt_not_accepted" || code === "verification_failed" ? code : "runtime_error";
      return done(
        "failed",
        dispatchFailure(portable, manifest.failure?.message ?? "the adapter reported failure"),
        extra,
      );
    }
  }
}

/** `PATH` alone, with empty and relative entries removed. */
function childPath(baseEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const path = (baseEnv.PATH ?? "")
    .split(":")
    .filter((entry) => entry.startsWith("/"))
    .join(":");
  return path === "" ? {} : { PATH: path };
}

function promptText(packet: WorkPacket): string {
  const list = (title: string, items: readonly string[]): string =>
    items.length > 0 ? `\n${title}:\n${items.map((i) => `- ${i}`).join("\n")}\n` : "";
  return `${packet.objective}\n${list("Acceptance criteria", packet.acceptance_criteria)}${list("Verification", packet.verification)}${list("Constraints", packet.constraints)}${list("Non-goals", packet.non_goals)}`;
}

/** HEAD, dirty state and a digest of the changed files, recomputed with git (never the claim). */
async function workspaceAfter(
  worktree: string,
  packet: WorkPacket,
  run: ProbeRunner,
  limits: AdapterLimits,
): Promise<Partial<DispatchReceiptBody["workspace"]>> {
  const head = await run(["git", "rev-parse", "HEAD"], worktree);
  const status = await run(["git", "status", "--porcelain=v1", "--untracked-files=all"], worktree);
  const base = packet.workspace.base_commit;
  const diff = base !== null ? await run(["git", "diff", "--name-only", base], worktree) : null;
  const changed = [
    ...(diff?.stdout.split("\n") ?? []),
    ...(status?.stdout.split("\n").map((line) => line.slice(3)) ?? []),
  ].filter((line) => line !== "");
  const names = [...new Set(changed)].sort();
  return {
    head_after: head?.exitCode === 0 ? head.stdout.trim() : null,
    dirty_after: status?.exitCode === 0 ? status.stdout.trim() !== "" : null,
    changed_files_digest: hashCanonical(names),
    changed_files: names.slice(0, MAX_CHANGED_FILES).map((path) => ({
      path,
      sha256: worktreeFileDigest(worktree, path, limits.max_artifact_bytes),
    })),
  };
}

/** How many changed files a receipt lists (the digest covers them all). */
export const MAX_CHANGED_FILES = 1000;

/**
 * The sha256 of a changed file's bytes in the worktree; null when it is gone, reached through
 * a symlink, not a regular file or larger than `maxBytes`. Git names the file; nothing the
 * adapter claims is read.
 */
function worktreeFileDigest(worktree: string, path: string, maxBytes: number): string | null {
  if (checkContained(worktree, path, { file: true }) !== undefined) return null;
  const abs = join(worktree, path);
  try {
    if (lstatSync(abs).size > maxBytes) return null;
    return sha256Prefixed(readFileSync(abs));
  } catch {
    return null;
  }
}
