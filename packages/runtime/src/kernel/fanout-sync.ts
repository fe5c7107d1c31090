/**
 * Upstream's kernel fan-out sync rules: given a group's policy and its branch results, the
 * decision to proceed, halt, pause or escalate, which rule fired and why. Quorum by strategy
 * (`all`, `any`, `quorum` with `minSuccess`), halting on a branch failure, threshold gates on
 * one branch's numeric output and conflict gates over several branches' outputs; a gate an
 * operator already resolved (its `syncDecisionKey`) no longer fires. Numbers in reasons print
 * as upstream's Rust prints an f64. Pure.
 */
import type { JsonObject, JsonValue } from "../parser/json.js";
import { isJsonObject } from "../parser/json.js";
import type { BranchResult, FanoutPolicy, SyncDecision, SyncOutcome } from "./sequential-model.js";

/** The key under which an operator resolves a gate decision. */
export function syncDecisionKey(groupId: string, ruleFired: string): string {
  return `${groupId}:${ruleFired}`;
}

/** How Rust prints an f64: shortest round-trip digits, never in exponent form. */
function rustFloat(value: number): string {
  if (Object.is(value, -0)) return "-0";
  const text = String(value);
  if (!/e/i.test(text)) return text;
  const [mantissa = "", exp = "0"] = text.toLowerCase().split("e");
  const negative = mantissa.startsWith("-");
  const digits = mantissa.replace("-", "").replace(".", "");
  const point =
    (mantissa.replace("-", "").indexOf(".") + 1 || mantissa.replace("-", "").length + 1) - 1;
  const shift = point + Number(exp);
  const body =
    shift <= 0
      ? `0.${"0".repeat(-shift)}${digits}`
      : shift >= digits.length
        ? `${digits}${"0".repeat(shift - digits.length)}`
        : `${digits.slice(0, shift)}.${digits.slice(shift)}`;
  return negative ? `-${body}` : body;
}

/** A JSON value's text with object keys in sorted order (upstream's stable comparison). */
function stableText(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(stableText).join(",")}]`;
  if (isJsonObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableText(value[k] as JsonValue)}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/** `a.b.c` inside a branch's outputs; undefined when any segment is missing. */
function fieldAt(outputs: JsonObject | undefined, path: string): JsonValue | undefined {
  if (outputs === undefined) return undefined;
  const parts = path.split(".");
  let current: JsonObject = outputs;
  for (let i = 0; i < parts.length; i++) {
    const value = Object.hasOwn(current, parts[i] ?? "") ? current[parts[i] ?? ""] : undefined;
    if (value === undefined) return undefined;
    if (i === parts.length - 1) return value;
    if (!isJsonObject(value)) return undefined;
    current = value;
  }
  return undefined;
}

function requiredSuccesses(policy: FanoutPolicy, branchCount: number): number {
  if (policy.strategy === "all") return branchCount;
  if (policy.strategy === "any") return 1;
  return policy.minSuccess ?? branchCount;
}

interface Counts {
  branchCount: number;
  successCount: number;
  failureCount: number;
  requiredSuccesses: number;
}

function decisionOf(
  policy: FanoutPolicy,
  decision: SyncOutcome,
  counts: Counts,
  ruleFired: string,
  reason: string,
  gate?: JsonObject,
): SyncDecision {
  const out: SyncDecision = {
    groupId: policy.groupId,
    decision,
    strategy: policy.strategy,
    ruleFired,
    reason,
    ...counts,
  };
  if (gate !== undefined) out.gate = gate;
  return out;
}

function branchFailure(policy: FanoutPolicy, counts: Counts): SyncDecision {
  return decisionOf(
    policy,
    "halt",
    counts,
    "branch_failure.halt",
    `${counts.failureCount}/${counts.branchCount} branches failed and on_branch_failure is halt`,
  );
}

function quorum(policy: FanoutPolicy, outcome: SyncOutcome, counts: Counts): SyncDecision {
  return decisionOf(
    policy,
    outcome,
    counts,
    `${policy.strategy}.min_success`,
    `${counts.successCount}/${counts.branchCount} branches succeeded; required ${counts.requiredSuccesses}`,
  );
}

function resolved(decision: SyncDecision, keys: ReadonlySet<string> | undefined): boolean {
  return keys?.has(syncDecisionKey(decision.groupId, decision.ruleFired)) === true;
}

function thresholdDecision(
  policy: FanoutPolicy,
  results: readonly BranchResult[],
  keys: ReadonlySet<string> | undefined,
  counts: Counts,
): SyncDecision | undefined {
  for (const gate of policy.thresholdGates ?? []) {
    const result = results.find((r) => r.stepId === gate.step);
    if (result === undefined || result.status !== "succeeded") continue;
    const base = `threshold.${gate.step}.${gate.field}`;
    const value = fieldAt(result.outputs, gate.field);
    if (value === undefined)
      return decisionOf(
        policy,
        "halt",
        counts,
        `${base}.missing`,
        `threshold field ${gate.step}.${gate.field} was not produced`,
        { type: "threshold", stepId: gate.step, field: gate.field, action: gate.action },
      );
    if (typeof value !== "number")
      return decisionOf(
        policy,
        "halt",
        counts,
        `${base}.non_numeric`,
        `threshold field ${gate.step}.${gate.field} must be numeric`,
        { type: "threshold", stepId: gate.step, field: gate.field, value, action: gate.action },
      );
    if (value > gate.above) {
      const decision = decisionOf(
        policy,
        gate.action,
        counts,
        `${base}.above`,
        `${gate.step}.${gate.field}=${rustFloat(value)} exceeded ${rustFloat(gate.above)}`,
        {
          type: "threshold",
          stepId: gate.step,
          field: gate.field,
          value,
          comparedTo: gate.above,
          action: gate.action,
        },
      );
      if (!resolved(decision, keys)) return decision;
    }
  }
  return undefined;
}

function conflictDecision(
  policy: FanoutPolicy,
  results: readonly BranchResult[],
  keys: ReadonlySet<string> | undefined,
  counts: Counts,
): SyncDecision | undefined {
  for (const gate of policy.conflictGates ?? []) {
    const candidates = results.filter(
      (r) => r.status === "succeeded" && (gate.steps.length === 0 || gate.steps.includes(r.stepId)),
    );
    const distinct = new Set(
      candidates.map((r) => {
        const value = fieldAt(r.outputs, gate.field);
        return value === undefined ? "undefined" : stableText(value);
      }),
    );
    if (distinct.size <= 1) continue;
    // Upstream keeps the values in a map keyed (and so ordered) by step id.
    const values: JsonObject = {};
    for (const r of [...candidates].sort((a, b) => (a.stepId < b.stepId ? -1 : 1))) {
      const value = fieldAt(r.outputs, gate.field);
      if (value !== undefined) values[r.stepId] = value;
    }
    const decision = decisionOf(
      policy,
      gate.action,
      counts,
      `conflict.${gate.field}`,
      `fanout branches disagreed on structured field ${gate.field}`,
      { type: "conflict", field: gate.field, values, action: gate.action },
    );
    if (!resolved(decision, keys)) return decision;
  }
  return undefined;
}

/** The sync decision of one fan-out group over its branch results. */
export function evaluateFanoutSync(
  policy: FanoutPolicy,
  results: readonly BranchResult[],
  keys?: ReadonlySet<string>,
): SyncDecision {
  const branchCount = results.length;
  const counts: Counts = {
    branchCount,
    successCount: results.filter((r) => r.status === "succeeded").length,
    failureCount: results.filter((r) => r.status === "failed").length,
    requiredSuccesses: requiredSuccesses(policy, branchCount),
  };
  if (policy.onBranchFailure === "halt" && counts.failureCount > 0)
    return branchFailure(policy, counts);
  const gated =
    thresholdDecision(policy, results, keys, counts) ??
    conflictDecision(policy, results, keys, counts);
  if (gated !== undefined) return gated;
  return quorum(
    policy,
    counts.successCount >= counts.requiredSuccesses ? "proceed" : "halt",
    counts,
  );
}

/** The decision of a group whose policy has no gates: only the branch tally matters. */
export function countedSyncDecision(
  policy: FanoutPolicy,
  tally: { branchCount: number; successCount: number; failureCount: number },
): SyncDecision {
  const counts: Counts = {
    ...tally,
    requiredSuccesses: requiredSuccesses(policy, tally.branchCount),
  };
  if (policy.onBranchFailure === "halt" && counts.failureCount > 0)
    return branchFailure(policy, counts);
  return quorum(
    policy,
    counts.successCount >= counts.requiredSuccesses ? "proceed" : "halt",
    counts,
  );
}
