/**
 * The approval inbox: pending gates with the runtime-built summary and the digests they are
 * bound to (stale when the package or execution closure changed since the pause), gate
 * policy as data (N distinct approvals, approver ≠ initiator), authenticated decisions, and
 * the release that resumes the run with the decisions signed into its receipts as a
 * host-attested authority term.
 */
import { RuntimeError } from "../errors.js";
import {
  DEFAULT_GATE_POLICY,
  approvalGateUri,
  approvalTermId,
  describeGatePolicy,
} from "../policy/gate-resolution.js";
import type { GatePolicy } from "../policy/gate-resolution.js";
import { hashCanonical } from "../receipts/index.js";
import type { AuthorityTerm } from "../receipts/index.js";
import { readCheckpoint } from "../run/checkpoint.js";
import type { Checkpoint } from "../run/checkpoint.js";
import type { Prepared, RunSkillDeps } from "../run/context.js";
import type { RunRequest, SkillRunEnvelope } from "../contracts/envelope.js";
import { prepareRun } from "../run/prepare.js";
import type { ApprovalDecisionRecord, ConsoleStore } from "../store/console-store.js";
import type { RunRecord } from "../store/types.js";
import type { Operator } from "./operators.js";
import { roleAtLeast } from "./operators.js";
import { decisionView } from "./runs.js";
import type { DecisionView } from "./runs.js";
import type { ConsoleInputs } from "./validate.js";
import type { EffectPreview } from "./effect-preview.js";
import { gatePreview } from "./gate-preview.js";

export { DEFAULT_GATE_POLICY } from "../policy/gate-resolution.js";
export type { GatePolicy } from "../policy/gate-resolution.js";

/** One pending gate as the inbox shows it. */
export interface PendingApproval {
  runId: string;
  skill: string;
  gateId: string;
  reason: string;
  gateType: string | null;
  /** The runtime-built effect summary (provider, operation, target, scopes, payload/plan digests, amount). */
  summary: unknown;
  /**
   * What approving releases, recovered from the paused run and checked against the gate's
   * digests (console/gate-preview.ts); null when it cannot be shown, and then approving is
   * refused (APPROVAL_UNVERIFIED).
   */
  preview: EffectPreview | null;
  /** Why there is no preview (null when there is one). */
  previewUnavailable: string | null;
  /** When the run started. */
  startedAt: string;
  requestedAt: string;
  boundPackageDigest: string;
  boundExecutionClosureDigest: string;
  currentPackageDigest: string | null;
  currentExecutionClosureDigest: string | null;
  /** True when the package or closure changed since the pause: approving would be refused. */
  stale: boolean;
  staleReason: string | null;
  policy: GatePolicy;
  initiator: string | null;
  /**
   * The operator who granted the run's adapter dispatches spawn authority when starting it
   * from the console; null when none was granted (a console release then records a dry run).
   */
  spawnGrantedBy: string | null;
  decisions: DecisionView[];
  /**
   * Enabled operators (approver or admin) whose approval would still count on this pause: not
   * the initiator when the policy excludes them, not one who already decided. Fewer than the
   * approvals still missing means the gate cannot be approved until an operator is added.
   */
  approversAvailable: number;
  /**
   * Why no approval of this gate can count, or null: a run not started in the console under a
   * policy that excludes the initiator (adding approvers does not help; see `decide`).
   */
  initiatorUnknown: string | null;
}

/** What a decision did. */
export interface DecideResult {
  decision: DecisionView;
  approvals: number;
  required: number;
  /** True when the gate is now decided (quorum reached or denied): call `release`. */
  releasable: boolean;
}

type ApprovalRequest = Extract<RunRequest, { kind: "approval" }>;

/** The human principal a decision is attributed to. */
export function operatorPrincipalUri(username: string): string {
  return `runx:principal:operator:${username}`;
}

/**
 * Spawn authority from the console: the operator
 * who started a run with "Allow spawn" grants it to that run's adapter dispatches, including
 * the continuations the console drives (a released gate, answered questions, a recovered
 * start). Deny by default: a run started without it, or outside the console, gets none here.
 */
export function consoleSpawnGrant(
  store: ConsoleStore,
  runId: string,
): { source: "console"; principal: string } | null {
  const row = store.getInitiator(runId);
  return row?.allowSpawn === true
    ? { source: "console", principal: operatorPrincipalUri(row.username) }
    : null;
}

/** The signed authority term recording every decision on one gate (host-attested). */
export function approvalTerm(
  runId: string,
  gateId: string,
  checkpoint: Pick<Checkpoint, "package_digest" | "execution_closure_digest">,
  decisions: readonly ApprovalDecisionRecord[],
  policy: GatePolicy,
): AuthorityTerm {
  const denied = decisions.some((d) => d.decision === "deny");
  return {
    term_id: approvalTermId(gateId),
    principal_ref: { type: "principal", uri: "runx:principal:local_runtime" },
    resource_ref: {
      type: "approval_gate",
      uri: approvalGateUri(runId, gateId),
      locator: hashCanonical({
        package_digest: checkpoint.package_digest,
        execution_closure_digest: checkpoint.execution_closure_digest,
      }),
    },
    resource_family: "approval_gate",
    verbs: [denied ? "deny" : "release"],
    bounds: {},
    conditions: [
      {
        condition_id: "bound_digests",
        predicate: "package_and_execution_closure_digests_unchanged",
        parameters: {
          package_digest: checkpoint.package_digest,
          execution_closure_digest: checkpoint.execution_closure_digest,
        },
      },
      {
        condition_id: "gate_policy",
        predicate: "distinct_authenticated_approvers",
        parameters: {
          required_approvals: policy.requiredApprovals,
          forbid_initiator: policy.forbidInitiator,
        },
      },
    ],
    approvals: decisions.map((d) => ({
      approval_ref: {
        type: "approval",
        uri: `runx:approval:${d.id}`,
        locator: hashCanonical({
          id: d.id,
          run_id: d.runId,
          gate_id: d.gateId,
          pause_receipt_id: d.pauseReceiptId,
          operator_id: d.operatorId,
          decision: d.decision,
          reason: d.reason,
          decided_at: d.decidedAt,
        }),
        label: `${d.decision}: ${d.reason}`,
      },
      approved_by_ref: {
        type: "principal",
        uri: operatorPrincipalUri(d.username),
        label: d.username,
      },
      approved_at: d.decidedAt,
    })),
    capabilities: [],
    issued_by_ref: {
      type: "principal",
      uri: "runx:principal:console_host",
      label: "host-attested human approval (authenticated console session)",
    },
  };
}

function approvalRequests(run: RunRecord): ApprovalRequest[] {
  if (run.status !== "needs_approval" && run.status !== "needs_agent") return [];
  const requests = (run.requestsJson === null ? [] : JSON.parse(run.requestsJson)) as RunRequest[];
  return requests.filter((r): r is ApprovalRequest => r.kind === "approval");
}

/** Approval inbox services. */
export function approvalServices(deps: {
  runDeps: RunSkillDeps;
  store: () => ConsoleStore;
  now: () => Date;
  randomHex: (bytes: number) => string;
}) {
  const state = () => deps.runDeps.state();

  const policyFor = (skill: string, gateId: string): GatePolicy => {
    const row = deps.store().findGatePolicy(skill, gateId);
    return row === undefined
      ? { ...DEFAULT_GATE_POLICY }
      : { requiredApprovals: row.requiredApprovals, forbidInitiator: row.forbidInitiator };
  };

  /** Recomputes the bindings a resume would enforce now. */
  const currentBindings = async (
    run: RunRecord,
    checkpoint: Checkpoint,
  ): Promise<{
    pkg: string | null;
    closure: string | null;
    staleReason: string | null;
    prep: Prepared | null;
  }> => {
    try {
      const prep = await prepareRun(deps.runDeps, {
        ref: checkpoint.skill_ref,
        runner: checkpoint.runner,
        runId: run.id,
      });
      const reasons: string[] = [];
      if (prep.packageDigest !== checkpoint.package_digest) reasons.push("the package changed");
      if (prep.closureDigest !== checkpoint.execution_closure_digest) {
        reasons.push("the execution closure (child packages or runtime release) changed");
      }
      return {
        pkg: prep.packageDigest,
        closure: prep.closureDigest,
        staleReason: reasons.length === 0 ? null : `${reasons.join("; ")}: re-approval needed`,
        prep,
      };
    } catch {
      return {
        pkg: null,
        closure: null,
        staleReason: "the package can no longer be resolved",
        prep: null,
      };
    }
  };

  const findGate = (runId: string, gateId: string) => {
    const run = state().getRun(runId);
    const request = approvalRequests(run).find((r) => r.id === gateId);
    if (request === undefined) {
      throw new RuntimeError(
        "APPROVAL_NOT_FOUND",
        `run ${runId} has no pending approval ${gateId}`,
        {
          runId,
          gateId,
        },
      );
    }
    return { run, request, checkpoint: readCheckpoint(state(), runId) };
  };

  /**
   * Why the run's initiator cannot be told apart from a deciding operator, or null. A run the
   * console did not start (the CLI, MCP) has no recorded operator as initiator; under the
   * default policy that is accepted (such a gate is also resolvable with `runx resume`, see
   * policy/gate-resolution.ts), but under an explicit policy that excludes the initiator it
   * fails safe: nobody can show they did not start it, so nobody's approval counts.
   */
  const initiatorUnknown = (run: RunRecord, gateId: string): string | null => {
    const explicit = deps.store().findGatePolicy(run.skillName, gateId);
    if (explicit === undefined || !explicit.forbidInitiator) return null;
    if (deps.store().getInitiator(run.id) !== undefined) return null;
    return `run ${run.id} was not started in the console, so its initiator is not an authenticated operator; the gate policy of ${run.skillName}/${gateId} ${describeGatePolicy(policyFor(run.skillName, gateId))}, which cannot be checked: start the run from the console, or an admin relaxes the policy`;
  };

  /**
   * The decisions that count for the gate's current pause, evaluated now (at decide and at
   * release, under the policy in force then):
   * - only decisions cast on this pause (the checkpoint's paused receipt): one gate id can
   *   pause again in a run (an adapter dispatch retried after its questions were answered
   *   passes the gate again), and an earlier pause's decisions were spent by its release.
   *   Nothing is marked after a release, so a process that dies right after the run paused
   *   again leaves nothing that could count toward the new pause;
   * - approvals only from operators who may still approve (not disabled, role at least
   *   approver), one per operator, never the initiator's when the policy excludes them, and
   *   none when the initiator cannot be established (see `initiatorUnknown`);
   * - a denial stands whoever cast it (it is the fail-safe outcome).
   */
  const counted = (
    run: RunRecord,
    gateId: string,
    checkpoint: Pick<Checkpoint, "paused_receipt">,
    policy: GatePolicy,
  ) => {
    const open = deps.store().listDecisions(run.id, gateId, checkpoint.paused_receipt.id);
    const initiatorId = deps.store().getInitiator(run.id)?.operatorId ?? null;
    const blind = initiatorUnknown(run, gateId) !== null;
    const seen = new Set<string>();
    const approvals = open.filter((d) => {
      if (d.decision !== "approve" || seen.has(d.operatorId) || blind) return false;
      if (policy.forbidInitiator && d.operatorId === initiatorId) return false;
      const op = deps.store().getOperator(d.operatorId);
      if (op === undefined || op.disabled || !roleAtLeast(op.role, "approver")) return false;
      seen.add(d.operatorId);
      return true;
    });
    const denials = open.filter((d) => d.decision === "deny");
    return { approvals, denials, denied: denials.length > 0 };
  };

  /** See `PendingApproval.approversAvailable`. */
  const approversAvailable = (
    run: RunRecord,
    gateId: string,
    decided: readonly ApprovalDecisionRecord[],
  ): number => {
    if (initiatorUnknown(run, gateId) !== null) return 0;
    const policy = policyFor(run.skillName, gateId);
    const initiatorId = deps.store().getInitiator(run.id)?.operatorId ?? null;
    const voted = new Set(decided.map((d) => d.operatorId));
    return deps
      .store()
      .listOperators()
      .filter(
        (op) =>
          !op.disabled &&
          roleAtLeast(op.role, "approver") &&
          !voted.has(op.id) &&
          !(policy.forbidInitiator && op.id === initiatorId),
      ).length;
  };

  return {
    policyFor,

    setPolicy(input: ConsoleInputs["approvals-set-policy"]): GatePolicy {
      const row = deps.store().upsertGatePolicy({
        skillName: input.skill,
        gateId: input.gateId,
        requiredApprovals: input.requiredApprovals,
        forbidInitiator: input.forbidInitiator,
        updatedAt: deps.now().toISOString(),
      });
      return { requiredApprovals: row.requiredApprovals, forbidInitiator: row.forbidInitiator };
    },

    /** Every pending gate, newest run first (capped at 500 runs per status). */
    async pending(): Promise<PendingApproval[]> {
      const out: PendingApproval[] = [];
      for (const status of ["needs_approval", "needs_agent"] as const) {
        for (const run of deps.store().listRunsFiltered({ limit: 500, status }).runs) {
          const gates = approvalRequests(run);
          if (gates.length === 0) continue;
          const checkpoint = readCheckpoint(state(), run.id);
          const now = await currentBindings(run, checkpoint);
          const started = deps.store().getInitiator(run.id);
          const initiator = started?.username ?? null;
          for (const gate of gates) {
            const shown = await gatePreview(deps.runDeps, checkpoint, now.prep, gate);
            // This pause's decisions (an earlier pause of the same gate was released).
            const decided = deps
              .store()
              .listDecisions(run.id, gate.id, checkpoint.paused_receipt.id);
            out.push({
              runId: run.id,
              skill: run.skillName,
              gateId: gate.id,
              reason: gate.gate.reason,
              gateType: gate.gate.type ?? null,
              summary: gate.gate.summary ?? null,
              preview: shown.preview,
              previewUnavailable: shown.unavailable,
              startedAt: run.createdAt,
              requestedAt: run.updatedAt,
              boundPackageDigest: checkpoint.package_digest,
              boundExecutionClosureDigest: checkpoint.execution_closure_digest,
              currentPackageDigest: now.pkg,
              currentExecutionClosureDigest: now.closure,
              stale: now.staleReason !== null,
              staleReason: now.staleReason,
              policy: policyFor(run.skillName, gate.id),
              initiator,
              spawnGrantedBy: started?.allowSpawn === true ? started.username : null,
              decisions: decided.map(decisionView),
              approversAvailable: approversAvailable(run, gate.id, decided),
              initiatorUnknown: initiatorUnknown(run, gate.id),
            });
          }
        }
      }
      return out.sort((a, b) => (a.requestedAt < b.requestedAt ? 1 : -1));
    },

    /**
     * Records one authenticated decision. Refused for a viewer (FORBIDDEN), an unknown gate
     * (APPROVAL_NOT_FOUND), a stale binding (APPROVAL_STALE), the run's own initiator when
     * policy forbids it, or a second vote by the same operator on the same pause (POLICY_DENIED).
     * An approval is also refused when what the gate releases cannot be shown and checked
     * against its digests (APPROVAL_UNVERIFIED): nobody approves an effect they could not read.
     * A denial needs no preview (it releases nothing).
     */
    async decide(
      input: ConsoleInputs["approvals-decide"],
      operator: Operator,
    ): Promise<DecideResult> {
      if (!roleAtLeast(operator.role, "approver")) {
        throw new RuntimeError(
          "FORBIDDEN",
          `operator ${operator.username} may not decide approvals`,
          {
            role: operator.role,
          },
        );
      }
      const { run, request, checkpoint } = findGate(input.runId, input.gateId);
      const now = await currentBindings(run, checkpoint);
      if (now.staleReason !== null) {
        throw new RuntimeError("APPROVAL_STALE", `gate ${input.gateId}: ${now.staleReason}`, {
          runId: run.id,
          gateId: input.gateId,
          boundPackageDigest: checkpoint.package_digest,
          currentPackageDigest: now.pkg,
        });
      }
      if (input.decision === "approve") {
        const shown = await gatePreview(deps.runDeps, checkpoint, now.prep, request);
        if (shown.preview === null) {
          throw new RuntimeError(
            "APPROVAL_UNVERIFIED",
            `gate ${input.gateId}: what it releases cannot be shown (${shown.unavailable}), so it cannot be approved; deny it, or start the run again`,
            { runId: run.id, gateId: input.gateId, reason: shown.unavailable },
          );
        }
      }
      const policy = policyFor(run.skillName, input.gateId);
      const initiator = deps.store().getInitiator(run.id);
      const unknown = initiatorUnknown(run, input.gateId);
      if (unknown !== null) {
        throw new RuntimeError("POLICY_DENIED", unknown, {
          reason: "initiator_unknown",
          runId: run.id,
          gateId: input.gateId,
        });
      }
      if (policy.forbidInitiator && initiator?.operatorId === operator.id) {
        throw new RuntimeError(
          "POLICY_DENIED",
          `the gate policy forbids ${operator.username} from deciding a run they started`,
          { reason: "separation_of_duties", runId: run.id, gateId: input.gateId },
        );
      }
      const row = deps.store().insertDecision({
        id: `dec_${deps.randomHex(8)}`,
        runId: run.id,
        gateId: input.gateId,
        pauseReceiptId: checkpoint.paused_receipt.id,
        operatorId: operator.id,
        username: operator.username,
        decision: input.decision,
        reason: input.reason,
        decidedAt: deps.now().toISOString(),
        packageDigest: checkpoint.package_digest,
        executionClosureDigest: checkpoint.execution_closure_digest,
      });
      const { approvals, denied } = counted(run, input.gateId, checkpoint, policy);
      return {
        decision: decisionView(row),
        approvals: approvals.length,
        required: policy.requiredApprovals,
        releasable: denied || approvals.length >= policy.requiredApprovals,
      };
    },

    /**
     * Resumes the run once the gate is decided (quorum or a denial), signing the counted
     * decisions into the receipts the continuation seals. Nothing is written to the decisions
     * afterwards: once the run has moved past this pause they no longer count (`counted`).
     */
    async release(
      request: { runId: string; gateId: string },
      signal: AbortSignal = new AbortController().signal,
    ): Promise<SkillRunEnvelope> {
      const { run, checkpoint } = findGate(request.runId, request.gateId);
      const policy = policyFor(run.skillName, request.gateId);
      const { approvals, denials, denied } = counted(run, request.gateId, checkpoint, policy);
      if (!denied && approvals.length < policy.requiredApprovals) {
        throw new RuntimeError(
          "RESUME_REFUSED",
          `gate ${request.gateId} has ${approvals.length} of ${policy.requiredApprovals} required approvals (${describeGatePolicy(policy)})`,
          { reason: "quorum_not_met", runId: run.id, gateId: request.gateId },
        );
      }
      const signed = denied ? denials : approvals;
      const term = approvalTerm(run.id, request.gateId, checkpoint, signed, policy);
      const grant = consoleSpawnGrant(deps.store(), run.id);
      const { resumeRun } = await import("../run/resume.js");
      return resumeRun(
        { ...deps.runDeps, attestedApprovals: [term] },
        {
          runId: run.id,
          ...(grant !== null ? { allowSpawn: grant } : {}),
          document: {
            approvals: {
              [request.gateId]: {
                approved: !denied,
                reason: signed.map((d) => `${d.username}: ${d.reason}`).join("; "),
              },
            },
          },
          // The decisions that released the gate are who resumed the run, and why.
          origin: {
            via: "console",
            actor: signed.map((d) => d.username).join(", "),
            reason: signed.map((d) => d.reason).join("; "),
          },
        },
        signal,
      );
    },
  };
}

/** The approval services' surface. */
export type ApprovalServices = ReturnType<typeof approvalServices>;
