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
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sha256Prefixed } from "../receipts/index.js";
import {
  APPROVAL_TTL_MS,
  attemptDir,
  bindingDigest,
  type ApprovalBinding,
  type DispatchOutcome,
  type DispatchRequest,
} from "./attempt.js";
import { dispatchBody } from "./dispatch-body.js";
import type { DispatchReceiptBody } from "./dispatch-receipt.js";
import { commandLabel, hasSymlinkComponent } from "./fs-safety.js";
import { launchAdapterProcess, processProbeRunner, scrubText, writeLogs } from "./launch.js";
import { collectOutputs } from "./manifest.js";
import { runPathProblem } from "./records.js";
import { buildWorkPacket, notExecutableReason, packetAuthority } from "./packet.js";
import type { WorkPacket } from "./packet.js";
import { checkWorkspace, probeTool } from "./preflight.js";
import type { ProbeRecord } from "./preflight.js";
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
import { attemptVerdict } from "./verdict.js";
import { workspaceAfter } from "./workspace-after.js";
import { secondsTimestamp } from "../time.js";

export type {
  AdapterStepConfig,
  ApprovalBinding,
  ApprovalDecision,
  DispatchOutcome,
  DispatchRequest,
} from "./attempt.js";
export { APPROVAL_TTL_MS, attemptDir, bindingDigest } from "./attempt.js";
export type { DispatchReceiptBody, SpawnAuthority } from "./dispatch-receipt.js";

/** Runs one attempt through the gate and, when every check passes, the adapter process. */
export async function dispatchAttempt(req: DispatchRequest): Promise<DispatchOutcome> {
  const invokedAt = req.now();
  const rel = attemptDir(req.runId, req.stepId, req.attempt);
  const scrub = (text: string): string =>
    scrubText(text, req.taint, { root: req.root, home: req.home });
  let loaded: LoadedAdapter | undefined;
  let packet: WorkPacket | null = null;
  let probeRecord: ProbeRecord | null = null;

  const body = (
    status: DispatchReceiptBody["status"],
    failure: DispatchFailure | null,
    extra: Partial<DispatchReceiptBody> = {},
  ): DispatchReceiptBody =>
    dispatchBody(req, { invokedAt, loaded, packet, probeRecord, scrub }, status, failure, extra);
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
  const verdict = attemptVerdict({
    exitCode: p.exitCode,
    collected,
    granted: authority,
    baseAuthority: () => body("failed", null).authority,
    rel,
    scrub,
  });
  return done(verdict.status, verdict.failure, verdict.extra, verdict.questions);
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
