/**
 * Where a human gate may be resolved. A paused run's gates are resolved through one path,
 * `resumeRun` (run/resume.ts), whatever the entry point: the console's release (decisions of
 * authenticated operators, counted against the gate policy in console/approvals.ts), or a
 * resume document's `approvals` (`runx resume`, the harness in its scratch workspace). A
 * resume document carries no authenticated identity: it is one decision by whoever runs the
 * command as the local OS user. So it may resolve a gate only when no console policy binds
 * it; otherwise it is refused with the policy named, before the run is taken (nothing runs,
 * the run stays paused). A console policy binds a gate when
 *
 * - a gate policy row matches the run's skill and the gate (`approvals.setPolicy`, `*` rows
 *   included): N distinct operators, perhaps initiator excluded, counted only in the console;
 * - or the run was started in the console (its initiator is a recorded operator): the default
 *   policy excludes that operator, and a local decision cannot show it is not theirs.
 *
 * A local gate with no policy row and no console initiator keeps resolving from the CLI.
 */
import { RuntimeError } from "../errors.js";
import type { AuthorityTerm } from "../receipts/index.js";
import type { RunRecord } from "../store/types.js";

/** How many approvals a gate needs and whether the initiator may give one. */
export interface GatePolicy {
  requiredApprovals: number;
  forbidInitiator: boolean;
}

/**
 * Where the console records what binds a gate: its gate policy rows and run initiators (the
 * console's tables beside the run, store/console-store.ts).
 */
export interface GateBindings {
  getInitiator(runId: string): { username: string } | undefined;
  findGatePolicy(skillName: string, gateId: string): GatePolicy | undefined;
}

/**
 * The bindings of a state store that holds no console tables (PostgreSQL, until the console's
 * approvals move there): no gate policy or console initiator can have been recorded, because
 * the console's approvals and run starts are refused on that store.
 */
export const NO_GATE_BINDINGS: GateBindings = Object.freeze({
  getInitiator: () => undefined,
  findGatePolicy: () => undefined,
});

/** Applies when no policy row matches: one approval, never the initiator's own. */
export const DEFAULT_GATE_POLICY: Readonly<GatePolicy> = Object.freeze({
  requiredApprovals: 1,
  forbidInitiator: true,
});

/** The policy as one phrase: "requires 2 approvals from distinct operators, initiator excluded". */
export function describeGatePolicy(policy: GatePolicy): string {
  const n = policy.requiredApprovals;
  const who = n === 1 ? "1 approval from an operator" : `${n} approvals from distinct operators`;
  return `requires ${who}${policy.forbidInitiator ? ", initiator excluded" : ""}`;
}

/** The authority term id and gate uri the console's release signs for one gate. */
export function approvalTermId(gateId: string): string {
  return `approval:${gateId}`;
}

/** The resource uri of one run's gate in an approval term. */
export function approvalGateUri(runId: string, gateId: string): string {
  return `runx:approval_gate:${runId}/${gateId}`;
}

/** True when `terms` holds the console's attested decisions for this run's gate. */
function attested(
  terms: readonly AuthorityTerm[] | undefined,
  runId: string,
  gateId: string,
): boolean {
  return (terms ?? []).some(
    (t) =>
      t.term_id === approvalTermId(gateId) &&
      t.resource_ref.uri === approvalGateUri(runId, gateId) &&
      t.issued_by_ref.uri === "runx:principal:console_host",
  );
}

/**
 * Refuses (POLICY_DENIED, `reason: gate_policy_requires_console`) a resume document's
 * decision on a gate a console policy binds, unless the decision is the console's own release
 * (its attested authority term for exactly this run and gate). See the module comment.
 */
export async function assertGateResolvableHere(
  bindings: () => Promise<GateBindings>,
  run: Pick<RunRecord, "id" | "skillName">,
  gateIds: readonly string[],
  attestedTerms: readonly AuthorityTerm[] | undefined,
): Promise<void> {
  const pending = gateIds.filter((gateId) => !attested(attestedTerms, run.id, gateId));
  if (pending.length === 0) return;
  // Asked only when a resume document carries decisions: the console's tables live in the
  // same state database as the run, so the policy is read from where the console wrote it.
  const store = await bindings();
  const initiator = store.getInitiator(run.id);
  for (const gateId of pending) {
    const row = store.findGatePolicy(run.skillName, gateId);
    const base = {
      reason: "gate_policy_requires_console",
      run_id: run.id,
      skill: run.skillName,
      gate_id: gateId,
      path: `approvals.${gateId}`,
    };
    if (row !== undefined) {
      const policy = {
        requiredApprovals: row.requiredApprovals,
        forbidInitiator: row.forbidInitiator,
      };
      throw new RuntimeError(
        "POLICY_DENIED",
        `gate ${gateId} of skill ${run.skillName} ${describeGatePolicy(policy)} (console gate policy); a decision in a resume document is one unauthenticated local decision and cannot satisfy it: decide the gate in the console (or through the API's approvals.decide with an operator's token)`,
        {
          ...base,
          required_approvals: policy.requiredApprovals,
          forbid_initiator: policy.forbidInitiator,
        },
      );
    }
    if (initiator !== undefined) {
      throw new RuntimeError(
        "POLICY_DENIED",
        `run ${run.id} was started in the console by ${initiator.username}: gate ${gateId} of skill ${run.skillName} ${describeGatePolicy(DEFAULT_GATE_POLICY)} (the console's default policy), which a local decision cannot show; decide the gate in the console (or through the API's approvals.decide with an operator's token)`,
        {
          ...base,
          required_approvals: DEFAULT_GATE_POLICY.requiredApprovals,
          forbid_initiator: DEFAULT_GATE_POLICY.forbidInitiator,
          initiator: initiator.username,
        },
      );
    }
  }
}
