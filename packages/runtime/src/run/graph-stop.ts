/**
 * Where a graph's driving stops and the small pure projections of it that the root graph
 * (`graph-run.ts`) and a nested graph (`nested-graph.ts`) both seal from. `AdvanceGraph` is
 * the driver's signature: a nested graph step receives the driver as a value, so the step
 * executor does not import the module that calls it.
 */
import type { FanoutSyncRecord, GraphDoc, GraphState } from "../graph/index.js";
import type { JsonObject } from "../parser/json.js";
import type { LineageExtras, Receipt, SyncPoint } from "../receipts/index.js";
import type { ClosureDisposition } from "../receipts/model.js";
import type { ToolCatalog } from "../tools/catalog.js";
import type { SettledPaymentFacts } from "../tools/payment/settled-payment.js";
import type { RunScope } from "./context.js";
import type { RunRequest } from "../contracts/envelope.js";
import type { RunnerOutcome } from "./execute.js";

/** Where a graph's driving stopped: a pause, its result, a terminal failure or an interrupt. */
export type GraphStop =
  | { kind: "pause"; requests: RunRequest[] }
  | { kind: "complete"; result: JsonObject }
  | { kind: "fail"; failure: { code: string; disposition: string; reason: string } }
  | { kind: "killed" };

/** What driving a graph until it stops returns. */
export interface GraphAdvance {
  state: GraphState;
  children: Receipt[];
  stop: GraphStop;
  gateInputs: Record<string, unknown>;
}

/** The graph driver (`advanceGraph` in `graph-run.ts`). */
export type AdvanceGraph = (
  scope: RunScope,
  doc: GraphDoc,
  catalog: ToolCatalog,
  initial: GraphState,
  answers: Record<string, unknown>,
) => Promise<GraphAdvance>;

export function toSyncPoint(record: FanoutSyncRecord): SyncPoint {
  return {
    group_id: record.group_id,
    strategy: record.strategy === "any" || record.strategy === "all" ? record.strategy : "quorum",
    decision:
      record.decision === "proceed" || record.decision === "pause" || record.decision === "escalate"
        ? record.decision
        : "halt",
    rule_fired: record.rule_fired,
    reason: record.reason,
    branch_count: record.branch_count,
    success_count: record.success_count,
    failure_count: record.failure_count,
    required_successes: record.required_successes,
    branch_receipts: record.branch_receipts.flatMap((b) =>
      b.receipt_id !== undefined ? [`runx:receipt:${b.receipt_id}`] : [],
    ),
    ...(record.gate !== undefined ? { gate: record.gate } : {}),
  };
}

/** The seal reason of a pause: only human approvals, or agent work too. */
export function pauseReasonCode(requests: readonly RunRequest[]): string {
  return requests.every((r) => r.kind === "approval") ? "approval_required" : "agent_required";
}

/** What a step attempt's receipt records. */
export type SealOutcome = Omit<RunnerOutcome, "disposition" | "reasonCode"> & {
  disposition: ClosureDisposition;
  reasonCode: string;
  /** Receipts this step commits as children (the steps of a nested graph). */
  children?: readonly Receipt[];
  /** A nested graph's lineage: the receipt of its earlier pause, its fanout sync points. */
  lineage?: LineageExtras;
  /** When the attempt started (ISO, milliseconds): the step row's `started_at`. */
  startedAt?: string;
  /** The receipt fields of a payment the step settled (`tools/payment/settled-payment.ts`). */
  settlement?: SettledPaymentFacts;
};
