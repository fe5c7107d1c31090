/**
 * Fanout sync evaluation (upstream's `evaluateFanoutSync`): once every branch of a group has
 * settled, decide proceed | halt | pause | escalate and record the sync point that receipts
 * carry in `lineage.sync`. Pure.
 */
import type { JsonValue } from "../parser/json.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { FanoutGroup, FanoutStrategy } from "./document.js";
import { jsonEqual, resolvePath } from "./references.js";

/** The settled result of one branch. */
export interface BranchResult {
  stepId: string;
  status: "succeeded" | "failed";
  outputs?: JsonValue;
  receiptId?: string;
  receiptDigest?: string;
}

/** What a group sync decided. */
export type FanoutDecision = "proceed" | "halt" | "pause" | "escalate";

/** The gate that fired, when one did. */
export type FanoutGate =
  | {
      type: "threshold";
      step_id: string;
      field: string;
      value?: JsonValue;
      compared_to: number;
      action: "pause" | "escalate" | "halt";
    }
  | {
      type: "conflict";
      field: string;
      steps: string[];
      values: JsonValue[];
      action: "pause" | "escalate";
    }
  | { type: "min_success"; value: number; compared_to: number; action: "pause" };

/** A branch's receipt reference inside a sync record. */
export interface BranchReceipt {
  step_id: string;
  status: "succeeded" | "failed";
  receipt_id?: string;
  receipt_digest?: string;
}

/** A fanout sync point (receipt `lineage.sync[]`). */
export interface FanoutSyncRecord {
  group_id: string;
  strategy: FanoutStrategy;
  decision: FanoutDecision;
  rule_fired: string;
  reason: string;
  branch_count: number;
  success_count: number;
  failure_count: number;
  required_successes: number;
  branch_receipts: BranchReceipt[];
  gate?: FanoutGate;
}

/** Successes a group needs: every branch for `all`, one for `any`, else `min_success`. */
export function requiredSuccesses(group: FanoutGroup, branchCount: number): number {
  if (group.strategy === "all") return branchCount;
  if (group.strategy === "any") return Math.min(1, branchCount);
  return group.min_success ?? branchCount;
}

/** The key under which an approved gate is remembered: `<group>:<rule_fired>`. */
export function fanoutDecisionKey(groupId: string, ruleFired: string): string {
  return `${groupId}:${ruleFired}`;
}

/** The approval request id of a paused group: `fanout.<group>.<rule_fired>`. */
export function fanoutGateId(groupId: string, ruleFired: string): string {
  return `fanout.${groupId}.${ruleFired}`;
}

/** The approval request a paused group emits. */
export function fanoutPauseRequest(record: FanoutSyncRecord): RunRequest {
  const id = fanoutGateId(record.group_id, record.rule_fired);
  return { id, kind: "approval", gate: { id, reason: record.reason, type: "fanout-gate" } };
}

type Verdict = Pick<FanoutSyncRecord, "decision" | "rule_fired" | "reason"> & { gate?: FanoutGate };

function thresholdVerdict(
  group: FanoutGroup,
  succeeded: readonly BranchResult[],
  resolved: ReadonlySet<string>,
): Verdict | undefined {
  for (const gate of group.threshold_gates) {
    const branch = succeeded.find((b) => b.stepId === gate.step);
    if (branch === undefined) continue;
    const rule = (outcome: string) => `threshold.${gate.step}.${gate.field}.${outcome}`;
    const base = {
      type: "threshold" as const,
      step_id: gate.step,
      field: gate.field,
      compared_to: gate.above,
    };
    const value = resolvePath(branch.outputs, gate.field.split("."));
    if (value === undefined && !resolved.has(fanoutDecisionKey(group.id, rule("missing"))))
      return {
        decision: "halt",
        rule_fired: rule("missing"),
        reason: `${gate.step}.${gate.field} is missing`,
        gate: { ...base, action: "halt" },
      };
    if (value === undefined) continue;
    if (
      typeof value !== "number" &&
      !resolved.has(fanoutDecisionKey(group.id, rule("non_numeric")))
    )
      return {
        decision: "halt",
        rule_fired: rule("non_numeric"),
        reason: `${gate.step}.${gate.field} is not a number`,
        gate: { ...base, value, action: "halt" },
      };
    if (typeof value !== "number" || value <= gate.above) continue;
    if (resolved.has(fanoutDecisionKey(group.id, rule("above")))) continue;
    return {
      decision: gate.action,
      rule_fired: rule("above"),
      reason: `${gate.step}.${gate.field}=${value} exceeded ${gate.above}`,
      gate: { ...base, value, action: gate.action },
    };
  }
  return undefined;
}

function conflictVerdict(
  group: FanoutGroup,
  succeeded: readonly BranchResult[],
  resolved: ReadonlySet<string>,
): Verdict | undefined {
  for (const gate of group.conflict_gates) {
    const rule = `conflict.${gate.field}`;
    if (resolved.has(fanoutDecisionKey(group.id, rule))) continue;
    const selected = succeeded.filter((b) => gate.steps?.includes(b.stepId) ?? true);
    const values: JsonValue[] = [];
    for (const branch of selected) {
      const value = resolvePath(branch.outputs, gate.field.split("."));
      if (value !== undefined && !values.some((v) => jsonEqual(v, value))) values.push(value);
    }
    if (values.length <= 1) continue;
    const steps = selected.map((b) => b.stepId);
    return {
      decision: gate.action,
      rule_fired: rule,
      reason: `conflicting ${gate.field} values across ${steps.join(", ")}`,
      gate: { type: "conflict", field: gate.field, steps, values, action: gate.action },
    };
  }
  return undefined;
}

/**
 * Evaluates a settled group. Order: halt on a failed branch when the policy is `halt`; threshold
 * gates; conflict gates; then the success count. Gates whose decision key is in
 * `resolvedGateKeys` (approved on resume) are skipped. A `threshold` strategy below its
 * required successes pauses for approval instead of halting.
 */
export function evaluateFanoutSync(
  group: FanoutGroup,
  results: readonly BranchResult[],
  resolvedGateKeys: readonly string[] = [],
): FanoutSyncRecord {
  const resolved = new Set(resolvedGateKeys);
  const succeeded = results.filter((r) => r.status === "succeeded");
  const n = results.length;
  const s = succeeded.length;
  const f = n - s;
  const required = requiredSuccesses(group, n);
  const counted = `${s}/${n} branches succeeded; required ${required}`;
  let verdict: Verdict | undefined;
  if (f > 0 && group.on_branch_failure === "halt")
    verdict = {
      decision: "halt",
      rule_fired: "branch_failure.halt",
      reason: `${f}/${n} branches failed and on_branch_failure is halt`,
    };
  verdict ??=
    thresholdVerdict(group, succeeded, resolved) ?? conflictVerdict(group, succeeded, resolved);
  if (verdict === undefined) {
    const rule = `${group.strategy}.min_success`;
    const approved = resolved.has(fanoutDecisionKey(group.id, rule));
    if (s >= required || (group.strategy === "threshold" && approved))
      verdict = {
        decision: "proceed",
        rule_fired: rule,
        reason: approved ? `${counted}; approved` : counted,
      };
    else if (group.strategy === "threshold")
      verdict = {
        decision: "pause",
        rule_fired: rule,
        reason: counted,
        gate: { type: "min_success", value: s, compared_to: required, action: "pause" },
      };
    else verdict = { decision: "halt", rule_fired: rule, reason: counted };
  }
  const record: FanoutSyncRecord = {
    group_id: group.id,
    strategy: group.strategy,
    decision: verdict.decision,
    rule_fired: verdict.rule_fired,
    reason: verdict.reason,
    branch_count: n,
    success_count: s,
    failure_count: f,
    required_successes: required,
    branch_receipts: results.map((r) => {
      const receipt: BranchReceipt = { step_id: r.stepId, status: r.status };
      if (r.receiptId !== undefined) receipt.receipt_id = r.receiptId;
      if (r.receiptDigest !== undefined) receipt.receipt_digest = r.receiptDigest;
      return receipt;
    }),
  };
  if (verdict.gate !== undefined) record.gate = verdict.gate;
  return record;
}
